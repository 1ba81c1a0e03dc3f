package kvcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func get(c int, k string, call, ret int64, found bool, v string) Op {
	return Op{Client: c, Input: Input{Op: Get, Key: k}, Call: call, Return: ret, Output: Output{Found: found, Value: v}}
}

func put(c int, k, v string, call, ret int64) Op {
	return Op{Client: c, Input: Input{Op: Put, Key: k, Value: v}, Call: call, Return: ret}
}

func del(c int, k string, call, ret int64, deleted int64) Op {
	return Op{Client: c, Input: Input{Op: Delete, Key: k}, Call: call, Return: ret, Output: Output{Deleted: deleted}}
}

func cas(c int, k, old, v string, call, ret int64, ok bool) Op {
	return Op{Client: c, Input: Input{Op: CAS, Key: k, Old: old, Value: v}, Call: call, Return: ret, Output: Output{Succeeded: ok}}
}

func unknown(op Op) Op {
	op.Output = Output{Unknown: true, Err: "context deadline exceeded"}
	op.Return = 0 // whatever the client saw; Operations moves it to Pending
	return op
}

func expect(t *testing.T, h []Op, want Result) Checked {
	t.Helper()
	c := Check(h, 0)
	if c.Result != want {
		t.Fatalf("result %s, want %s", c.Result, want)
	}
	return c
}

// The case the checker exists for: put x=1 acknowledged, then a later get
// (started after the put returned) answers the old value.
func TestStaleReadIsViolation(t *testing.T) {
	h := []Op{
		put(0, "x", "0", 0, 10),
		put(0, "x", "1", 20, 30),
		get(1, "x", 40, 50, true, "0"),
	}
	c := expect(t, h, Violation)
	dir := t.TempDir()
	if err := c.WriteArtifacts(dir, History{Ops: h}); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "visualization.html"))
	if err != nil || !strings.Contains(string(html), `put(x, \"1\")`) {
		t.Fatalf("visualization lacks the put: err=%v", err)
	}
	back, err := ReadHistory(filepath.Join(dir, "history.json"))
	if err != nil || len(back.Ops) != 3 {
		t.Fatalf("history.json round trip: %v, %d ops", err, len(back.Ops))
	}
	expect(t, back.Ops, Violation)
}

// A read of a key never written that answers "absent" after a put of it was
// acknowledged is stale too.
func TestStaleAbsentReadIsViolation(t *testing.T) {
	expect(t, []Op{
		put(0, "x", "1", 0, 10),
		get(1, "x", 20, 30, false, ""),
	}, Violation)
}

// Concurrent operations on two keys that have a linearization: the read that
// overlaps the put may see either value; CAS, delete and their answers agree.
func TestValidConcurrentHistoryIsOk(t *testing.T) {
	expect(t, []Op{
		put(0, "x", "a", 0, 100),
		get(1, "x", 10, 20, false, ""),
		get(2, "x", 30, 40, true, "a"),
		get(1, "x", 50, 60, true, "a"), // the put took effect between 30 and 40
		cas(2, "x", "a", "b", 110, 120, true),
		cas(0, "x", "a", "c", 115, 130, false),
		get(1, "x", 140, 150, true, "b"),
		put(3, "y", "p", 0, 10),
		del(3, "y", 20, 30, 1),
		del(0, "y", 40, 50, 0),
		get(1, "y", 60, 70, false, ""),
		del(2, "x", 200, 210, 1),
		get(3, "x", 220, 230, false, ""),
	}, Ok)
}

// A write whose outcome is unknown may have applied, at any time after its
// call: a read may see it, but once seen it cannot be undone.
func TestUnknownWrite(t *testing.T) {
	expect(t, []Op{
		put(0, "x", "0", 0, 5),
		unknown(put(0, "x", "1", 10, 0)),
		get(1, "x", 20, 30, true, "0"),
		get(1, "x", 40, 50, true, "1"),
	}, Ok)
	undone := []Op{
		put(0, "x", "0", 0, 5),
		unknown(put(0, "x", "1", 10, 0)),
		get(1, "x", 20, 30, true, "1"),
		get(1, "x", 40, 50, true, "0"),
	}
	c := expect(t, undone, Violation)
	// the visualisation copes with an operation returning at Pending
	if err := c.WriteArtifacts(t.TempDir(), History{Ops: undone}); err != nil {
		t.Fatal(err)
	}
	// An unanswered read is dropped, not held against the history.
	expect(t, []Op{
		put(0, "x", "1", 0, 5),
		unknown(get(1, "x", 10, 0, false, "")),
	}, Ok)
}

// Answers that contradict the state are violations.
func TestWrongAnswersAreViolations(t *testing.T) {
	expect(t, []Op{
		put(0, "x", "a", 0, 10),
		cas(1, "x", "a", "b", 20, 30, false), // x was "a": must succeed
	}, Violation)
	expect(t, []Op{
		put(0, "x", "a", 0, 10),
		del(1, "x", 20, 30, 0), // x existed: deleted must be 1
	}, Violation)
	expect(t, []Op{
		cas(1, "x", "a", "b", 0, 10, true), // x never existed
	}, Violation)
}

func TestCountsOpsAndKeys(t *testing.T) {
	c := expect(t, []Op{
		put(0, "x", "a", 0, 10),
		put(0, "y", "a", 0, 10),
		unknown(get(1, "y", 20, 0, false, "")),
	}, Ok)
	if c.Ops != 2 || c.Keys != 2 {
		t.Fatalf("ops=%d keys=%d, want 2 and 2", c.Ops, c.Keys)
	}
}

// The e2e self-test's injection turns a linearizable history into a violation.
func TestInjectStaleRead(t *testing.T) {
	h := []Op{
		put(0, "x", "a", 0, 10),
		get(1, "x", 5, 15, true, "a"),
		put(1, "x", "b", 20, 30),
		unknown(put(2, "x", "c", 25, 0)),
	}
	expect(t, h, Ok)
	h2, ok := InjectStaleRead(h)
	if !ok || len(h2) != len(h)+1 {
		t.Fatalf("nothing injected")
	}
	expect(t, h2, Violation)
	if _, ok := InjectStaleRead(h[:2]); ok {
		t.Fatalf("injected without an overwritten key")
	}
}
