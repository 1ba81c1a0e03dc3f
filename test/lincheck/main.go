// lincheck: a linearizability checker for the chaos cases of the e2e suite
// (issue 18, item 4). Test tooling only, never part of the operator.
//
// N concurrent clients (each with its own connection) do puts, linearizable
// gets, deletes and compare-and-swaps (a transaction on the value) on a small
// key set of a fresh prefix, recording each operation's call and return time
// and etcd's answer; an operation without an answer (timeout, lost connection)
// is recorded as unknown. The run ends at -duration, or earlier on -stop-file
// or -max-ops (then each client still runs until its last 3 operations were
// answered, so the history ends on a cluster that serves again). The history
// is then checked with porcupine (kvcheck). It prints
//
//	lincheck: ops=<n> keys=<k> result=ok|violation|unknown
//
// and exits 0 (ok), 1 (violation), 3 (unknown: the checker ran out of time),
// 2 (usage or setup error). On a violation or unknown result, the history
// (history.json) and porcupine's visualisation (visualization.html) are written
// to -artifacts. `lincheck -recheck history.json` checks a saved history again.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcd-operator.local/test/lincheck/kvcheck"
)

type config struct {
	endpoints    []string
	clients      int
	keys         int
	duration     time.Duration
	maxOps       int
	interval     time.Duration
	opTimeout    time.Duration
	dialTimeout  time.Duration
	checkTimeout time.Duration
	prefix       string
	stopFile     string
	stopGrace    time.Duration
	artifacts    string
	cacert       string
	cert         string
	key          string
	user         string
}

func main() {
	os.Exit(run())
}

func run() int {
	var c config
	var endpoints, recheck string
	flag.StringVar(&endpoints, "endpoints", "http://127.0.0.1:2379", "comma-separated etcd client URLs")
	flag.IntVar(&c.clients, "clients", 4, "concurrent clients, each with its own connection")
	flag.IntVar(&c.keys, "keys", 4, "number of keys the clients share")
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "how long the clients run")
	flag.IntVar(&c.maxOps, "max-ops", 50000, "stop after this many operations (bounds the check's cost)")
	flag.DurationVar(&c.interval, "interval", 10*time.Millisecond, "pause of each client between operations")
	flag.DurationVar(&c.opTimeout, "op-timeout", 3*time.Second, "deadline of one operation (then its outcome is unknown)")
	flag.DurationVar(&c.dialTimeout, "dial-timeout", 2*time.Second, "etcd client dial timeout")
	flag.DurationVar(&c.checkTimeout, "check-timeout", 120*time.Second, "time the checker may take (then result=unknown)")
	flag.StringVar(&c.prefix, "prefix", "/lincheck/", "key prefix; a per-run suffix is added")
	flag.StringVar(&c.stopFile, "stop-file", "", "stop the clients early once this file exists")
	flag.DurationVar(&c.stopGrace, "stop-grace", 60*time.Second,
		"after a stop request, how long a client may try for its last answers before it ends anyway")
	flag.StringVar(&c.artifacts, "artifacts", "", "directory for history.json and visualization.html (on violation or unknown)")
	flag.StringVar(&c.cacert, "cacert", "", "CA bundle of the server certificate (enables TLS)")
	flag.StringVar(&c.cert, "cert", "", "client certificate")
	flag.StringVar(&c.key, "key", "", "client key")
	flag.StringVar(&c.user, "user", "", "etcd user (password from $LINCHECK_PASSWORD or $ETCDCTL_PASSWORD)")
	flag.StringVar(&recheck, "recheck", "", "check a saved history.json instead of running clients")
	injectStale := flag.Bool("inject-stale-read", false,
		"self-test: append a made-up stale read to the recorded history (the check must find a violation)")
	flag.Parse()
	c.endpoints = strings.Split(endpoints, ",")

	var h kvcheck.History
	if recheck != "" {
		var err error
		if h, err = kvcheck.ReadHistory(recheck); err != nil {
			fmt.Fprintf(os.Stderr, "lincheck: %v\n", err)
			return 2
		}
	} else {
		if c.clients < 1 || c.keys < 1 {
			fmt.Fprintln(os.Stderr, "lincheck: -clients and -keys must be at least 1")
			return 2
		}
		var err error
		if h, err = record(c); err != nil {
			fmt.Fprintf(os.Stderr, "lincheck: %v\n", err)
			return 2
		}
	}
	if *injectStale {
		var ok bool
		if h.Ops, ok = kvcheck.InjectStaleRead(h.Ops); !ok {
			fmt.Fprintln(os.Stderr, "lincheck: -inject-stale-read: no key was overwritten after an answered put")
			return 2
		}
		fmt.Println("lincheck: self-test: a stale read was appended to the history")
	}
	start := time.Now()
	checked := kvcheck.Check(h.Ops, c.checkTimeout)
	fmt.Printf("lincheck: %s check_seconds=%.1f\n", summary(h.Ops), time.Since(start).Seconds())
	if checked.Result != kvcheck.Ok && c.artifacts != "" {
		if err := checked.WriteArtifacts(c.artifacts, h); err != nil {
			fmt.Fprintf(os.Stderr, "lincheck: writing artifacts: %v\n", err)
		} else {
			fmt.Printf("lincheck: history and visualisation in %s\n", c.artifacts)
		}
	}
	fmt.Printf("lincheck: ops=%d keys=%d result=%s\n", checked.Ops, checked.Keys, checked.Result)
	switch checked.Result {
	case kvcheck.Ok:
		return 0
	case kvcheck.Violation:
		return 1
	default:
		return 3
	}
}

// summary counts the operations by kind and outcome.
func summary(ops []kvcheck.Op) string {
	n := map[string]int{}
	unknown, unanswered := 0, 0
	for _, op := range ops {
		if op.Output.Unknown {
			if op.Input.Op == kvcheck.Get {
				unanswered++
			} else {
				unknown++
			}
			continue
		}
		n[op.Input.Op]++
	}
	return fmt.Sprintf("answered: get=%d put=%d delete=%d cas=%d; writes with unknown outcome=%d; unanswered gets=%d",
		n[kvcheck.Get], n[kvcheck.Put], n[kvcheck.Delete], n[kvcheck.CAS], unknown, unanswered)
}

func clientConfig(c config) (clientv3.Config, error) {
	cfg := clientv3.Config{
		Endpoints:   c.endpoints,
		DialTimeout: c.dialTimeout,
		// A member whose node loses power (or whose Pod comes back under another
		// address) never closes its connections: without keepalive pings a client
		// whose connection went there waits on it for the kernel's TCP timeout
		// (about 15 minutes), every operation unknown. Pinged every 10 s (gRPC's
		// floor; etcd accepts pings every 5 s) and given 3 s to answer, the dead
		// connection is closed and the client dials the Service again.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 3 * time.Second,
		Logger:               zap.NewNop(),
	}
	if c.user != "" {
		cfg.Username = c.user
		cfg.Password = os.Getenv("LINCHECK_PASSWORD")
		if cfg.Password == "" {
			cfg.Password = os.Getenv("ETCDCTL_PASSWORD")
		}
	}
	if c.cacert == "" && c.cert == "" {
		return cfg, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.cacert != "" {
		pem, err := os.ReadFile(c.cacert)
		if err != nil {
			return cfg, err
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return cfg, fmt.Errorf("no certificate in %s", c.cacert)
		}
	}
	if c.cert != "" {
		kp, err := tls.LoadX509KeyPair(c.cert, c.key)
		if err != nil {
			return cfg, err
		}
		tc.Certificates = []tls.Certificate{kp}
	}
	cfg.TLS = tc
	return cfg, nil
}

// recorder holds the shared history and the run's stop conditions.
type recorder struct {
	mu     sync.Mutex
	ops    []kvcheck.Op
	start  time.Time
	end    time.Time
	cfg    config
	stopAt time.Time // when a stop was first seen (zero: not yet)
}

func (r *recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

func (r *recorder) add(op kvcheck.Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// pastDeadline: the run's duration is over; every client stops.
func (r *recorder) pastDeadline() bool { return time.Now().After(r.end) }

// done: the run should end (duration, -max-ops or -stop-file). After a stop
// request a client still runs until its last few operations were answered
// (see worker), so the history ends on a cluster that serves again.
func (r *recorder) done() bool {
	if r.pastDeadline() {
		return true
	}
	r.mu.Lock()
	n := len(r.ops)
	r.mu.Unlock()
	if n >= r.cfg.maxOps {
		return true
	}
	if r.cfg.stopFile != "" {
		if _, err := os.Stat(r.cfg.stopFile); err == nil {
			r.mu.Lock()
			if r.stopAt.IsZero() {
				r.stopAt = time.Now()
				fmt.Printf("lincheck: stop requested after %.1fs; each client ends after %d answers in a row (or %s)\n",
					r.stopAt.Sub(r.start).Seconds(), tailAnswered, r.cfg.stopGrace)
			}
			r.mu.Unlock()
			return true
		}
	}
	return false
}

// pastGrace: a stop was requested longer ago than -stop-grace.
func (r *recorder) pastGrace() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.stopAt.IsZero() && time.Since(r.stopAt) > r.cfg.stopGrace
}

func record(c config) (kvcheck.History, error) {
	cfg, err := clientConfig(c)
	if err != nil {
		return kvcheck.History{}, err
	}
	prefix := fmt.Sprintf("%s%d/", c.prefix, time.Now().UnixNano())
	fmt.Printf("lincheck: endpoints=%s clients=%d keys=%d prefix=%s duration=%s\n",
		strings.Join(c.endpoints, ","), c.clients, c.keys, prefix, c.duration)
	clients := make([]*clientv3.Client, c.clients)
	for i := range clients {
		// New does not wait for a connection: a cluster that is down now
		// shows up as unanswered operations, not as a setup error.
		if clients[i], err = clientv3.New(cfg); err != nil {
			return kvcheck.History{}, err
		}
		defer clients[i].Close()
	}
	r := &recorder{start: time.Now(), cfg: c}
	r.end = r.start.Add(c.duration)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			worker(r, clients[id], id, prefix)
		}(i)
	}
	wg.Wait()
	return kvcheck.History{Prefix: prefix, Ops: r.ops}, nil
}

// tailAnswered: after a stop request, each client ends once this many of its
// operations in a row were answered.
const tailAnswered = 3

// worker runs one client's operations until the run is done. Values are
// unique ("c<client>-<seq>"); a CAS compares against the value this client
// last saw on the key, so some succeed and some fail.
func worker(r *recorder, cli *clientv3.Client, id int, prefix string) {
	rng := rand.New(rand.NewSource(time.Now().UnixNano() + int64(id)))
	seen := map[string]string{}
	answered := 0 // consecutive answered operations
	lastErr := "none"
	defer func() {
		// A client that could not get its last answers says so and why: the
		// history is still checked, without a tail that shows this client served.
		if answered < tailAnswered {
			fmt.Printf("lincheck: client %d ended without %d answers in a row (last error: %s)\n",
				id, tailAnswered, lastErr)
		}
	}()
	for seq := 0; !r.pastDeadline() && !(r.done() && (answered >= tailAnswered || r.pastGrace())); seq++ {
		key := fmt.Sprintf("%sk%d", prefix, rng.Intn(r.cfg.keys))
		value := fmt.Sprintf("c%d-%d", id, seq)
		in := kvcheck.Input{Key: key}
		switch p := rng.Intn(100); {
		case p < 40:
			in.Op = kvcheck.Get
		case p < 65:
			in.Op, in.Value = kvcheck.Put, value
		case p < 75:
			in.Op = kvcheck.Delete
		default:
			in.Op, in.Value = kvcheck.CAS, value
			old, ok := seen[key]
			if !ok {
				in.Op, in.Value = kvcheck.Put, value
			} else {
				in.Old = old
			}
		}
		op := do(r, cli, id, in)
		r.add(op)
		if !op.Output.Unknown {
			switch {
			case in.Op == kvcheck.Get && op.Output.Found:
				seen[key] = op.Output.Value
			case in.Op == kvcheck.Put || (in.Op == kvcheck.CAS && op.Output.Succeeded):
				seen[key] = in.Value
			}
		}
		answered++
		if op.Output.Unknown {
			answered = 0
			lastErr = op.Output.Err
			time.Sleep(200 * time.Millisecond) // do not spin on a cluster that is down
		}
		time.Sleep(r.cfg.interval)
	}
}

// do runs one operation and records its answer and times.
func do(r *recorder, cli *clientv3.Client, id int, in kvcheck.Input) kvcheck.Op {
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.opTimeout)
	defer cancel()
	op := kvcheck.Op{Client: id, Input: in, Call: r.now()}
	var out kvcheck.Output
	var err error
	switch in.Op {
	case kvcheck.Get:
		var resp *clientv3.GetResponse
		if resp, err = cli.Get(ctx, in.Key); err == nil {
			out.Revision = resp.Header.Revision
			if len(resp.Kvs) > 0 {
				out.Found, out.Value = true, string(resp.Kvs[0].Value)
			}
		}
	case kvcheck.Put:
		var resp *clientv3.PutResponse
		if resp, err = cli.Put(ctx, in.Key, in.Value); err == nil {
			out.Revision = resp.Header.Revision
		}
	case kvcheck.Delete:
		var resp *clientv3.DeleteResponse
		if resp, err = cli.Delete(ctx, in.Key); err == nil {
			out.Revision, out.Deleted = resp.Header.Revision, resp.Deleted
		}
	case kvcheck.CAS:
		var resp *clientv3.TxnResponse
		resp, err = cli.Txn(ctx).
			If(clientv3.Compare(clientv3.Value(in.Key), "=", in.Old)).
			Then(clientv3.OpPut(in.Key, in.Value)).Commit()
		if err == nil {
			out.Revision, out.Succeeded = resp.Header.Revision, resp.Succeeded
		}
	}
	op.Return = r.now()
	if err != nil {
		out = kvcheck.Output{Unknown: true, Err: errText(err)}
	}
	op.Output = out
	return op
}

func errText(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "deadline exceeded"
	}
	s := err.Error()
	if len(s) > 160 {
		s = s[:160]
	}
	return s
}
