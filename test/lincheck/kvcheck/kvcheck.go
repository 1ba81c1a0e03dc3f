// Package kvcheck checks a history of key-value operations made by concurrent
// etcd clients for linearizability with porcupine.
//
// The model is a register per key (partitioned by key, so each key is checked
// on its own): get, put, delete (its deleted count is checked), and
// compare-and-swap on the value (a transaction "if value(key) == old then put
// new"). Every written value is unique, so a CAS on the value is as strong as
// one on the mod revision (no ABA).
//
// An operation whose outcome the client does not know (a timeout, a lost
// connection) may or may not have taken effect: it is recorded with Return =
// Pending, after every other event, and the model lets it either apply or not
// (porcupine's nondeterministic model). A read that failed is dropped: it
// cannot have changed anything.
package kvcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Pending is the return time of an operation whose outcome is unknown.
const Pending int64 = math.MaxInt64

// Operation kinds.
const (
	Get    = "get"
	Put    = "put"
	Delete = "delete"
	CAS    = "cas"
)

// Input is what a client asked.
type Input struct {
	Op    string `json:"op"`
	Key   string `json:"key"`
	Value string `json:"value,omitempty"` // put, cas: the value written
	Old   string `json:"old,omitempty"`   // cas: the value compared
}

// Output is what etcd answered.
type Output struct {
	Unknown   bool   `json:"unknown,omitempty"` // no answer: may or may not have applied
	Found     bool   `json:"found,omitempty"`   // get
	Value     string `json:"value,omitempty"`   // get
	Deleted   int64  `json:"deleted,omitempty"` // delete
	Succeeded bool   `json:"succeeded,omitempty"`
	Err       string `json:"error,omitempty"` // why the outcome is unknown
	Revision  int64  `json:"revision,omitempty"`
}

// Op is one operation of a history: times in nanoseconds since the run began.
type Op struct {
	Client int    `json:"client"`
	Input  Input  `json:"input"`
	Call   int64  `json:"call"`
	Output Output `json:"output"`
	Return int64  `json:"return"`
}

// History is what a run recorded, as written to history.json.
type History struct {
	Prefix string `json:"prefix,omitempty"`
	Ops    []Op   `json:"ops"`
}

// Result of a check.
type Result string

const (
	Ok        Result = "ok"
	Violation Result = "violation"
	Unknown   Result = "unknown" // the checker ran out of time
)

type state struct {
	found bool
	value string
}

func step(s interface{}, in interface{}, out interface{}) []interface{} {
	st := s.(state)
	i := in.(Input)
	o := out.(Output)
	switch i.Op {
	case Get:
		if o.Unknown || (o.Found == st.found && (!st.found || o.Value == st.value)) {
			return []interface{}{st}
		}
		return nil
	case Put:
		applied := state{found: true, value: i.Value}
		if o.Unknown {
			return []interface{}{st, applied}
		}
		return []interface{}{applied}
	case Delete:
		applied := state{}
		if o.Unknown {
			return []interface{}{st, applied}
		}
		want := int64(0)
		if st.found {
			want = 1
		}
		if o.Deleted != want {
			return nil
		}
		return []interface{}{applied}
	case CAS:
		match := st.found && st.value == i.Old
		applied := state{found: true, value: i.Value}
		switch {
		case o.Unknown && match:
			return []interface{}{st, applied}
		case o.Unknown:
			return []interface{}{st}
		case o.Succeeded != match:
			return nil
		case match:
			return []interface{}{applied}
		default:
			return []interface{}{st}
		}
	}
	return nil
}

func partition(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	for _, op := range history {
		k := op.Input.(Input).Key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

func describeOp(in interface{}, out interface{}) string {
	i := in.(Input)
	o := out.(Output)
	var res string
	switch i.Op {
	case Get:
		res = "absent"
		if o.Found {
			res = fmt.Sprintf("%q", o.Value)
		}
	case Put:
		res = "ok"
	case Delete:
		res = fmt.Sprintf("deleted %d", o.Deleted)
	case CAS:
		res = fmt.Sprintf("succeeded=%v", o.Succeeded)
	}
	if o.Unknown {
		res = "unknown (" + o.Err + ")"
	}
	switch i.Op {
	case Put:
		return fmt.Sprintf("put(%s, %q) -> %s", i.Key, i.Value, res)
	case CAS:
		return fmt.Sprintf("cas(%s, %q -> %q) -> %s", i.Key, i.Old, i.Value, res)
	default:
		return fmt.Sprintf("%s(%s) -> %s", i.Op, i.Key, res)
	}
}

func describeState(s interface{}) string {
	st := s.(state)
	if !st.found {
		return "absent"
	}
	return fmt.Sprintf("%q", st.value)
}

// Model is the porcupine model of the key-value store.
func Model() porcupine.Model {
	m := porcupine.NondeterministicModel{
		Partition:         partition,
		Init:              func() []interface{} { return []interface{}{state{}} },
		Step:              step,
		Equal:             func(a, b interface{}) bool { return a.(state) == b.(state) },
		DescribeOperation: describeOp,
		DescribeState:     describeState,
	}
	return m.ToModel()
}

// Operations converts a history to porcupine's form: reads without an answer
// are dropped, writes without one return at Pending.
func Operations(h []Op) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(h))
	for _, op := range h {
		if op.Output.Unknown && op.Input.Op == Get {
			continue
		}
		ret := op.Return
		if op.Output.Unknown {
			ret = Pending
		}
		ops = append(ops, porcupine.Operation{
			ClientId: op.Client, Input: op.Input, Call: op.Call, Output: op.Output, Return: ret,
		})
	}
	return ops
}

// Checked is the outcome of Check.
type Checked struct {
	Result Result
	Ops    int // operations checked (unanswered reads excluded)
	Keys   int
	info   porcupine.LinearizationInfo
	model  porcupine.Model
}

// Check checks a history; timeout 0 means no limit.
func Check(h []Op, timeout time.Duration) Checked {
	model := Model()
	ops := Operations(h)
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	c := Checked{Ops: len(ops), Keys: len(partition(ops)), info: info, model: model}
	switch res {
	case porcupine.Ok:
		c.Result = Ok
	case porcupine.Illegal:
		c.Result = Violation
	default:
		c.Result = Unknown
	}
	return c
}

// Visualize writes porcupine's HTML visualisation of the checked history.
func (c Checked) Visualize(w io.Writer) error {
	return porcupine.Visualize(c.model, c.info, w)
}

// WriteArtifacts writes history.json and visualization.html into dir.
func (c Checked) WriteArtifacts(dir string, h History) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(h, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "history.json"), js, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "visualization.html"))
	if err != nil {
		return err
	}
	if err := c.Visualize(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadHistory reads a history.json written by WriteArtifacts.
func ReadHistory(path string) (History, error) {
	var h History
	b, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	err = json.Unmarshal(b, &h)
	return h, err
}

// InjectStaleRead appends to h, for a self-test of the whole pipeline, a get
// made after every other operation returned that answers the value of an
// answered put p1 of a key that an answered put p2 called after p1 returned
// overwrote. Values are unique and p1 must precede p2, so no order explains
// the read: the check must report a violation. False when h has no such pair.
func InjectStaleRead(h []Op) ([]Op, bool) {
	var last int64
	for _, op := range h {
		if !op.Output.Unknown && op.Return > last {
			last = op.Return
		}
		if op.Call > last {
			last = op.Call
		}
	}
	for _, p1 := range h {
		if p1.Input.Op != Put || p1.Output.Unknown {
			continue
		}
		for _, p2 := range h {
			if p2.Input.Op == Put && !p2.Output.Unknown && p2.Input.Key == p1.Input.Key && p2.Call > p1.Return {
				stale := Op{Client: p1.Client, Input: Input{Op: Get, Key: p1.Input.Key}, Call: last + 1,
					Return: last + 2, Output: Output{Found: true, Value: p1.Input.Value}}
				return append(h, stale), true
			}
		}
	}
	return h, false
}
