// Tests of the Go package over libgov: the walkthrough's stream, errors.Is on every kind the
// package can meet, Check's verdicts, a restart from an exported state, Watch, and concurrent
// use (run with -race).

package gov_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gov.dev/gov"
)

// repo is the repository's root, from runtime/go/gov.
const repo = "../../.."

var workshop = filepath.Join(repo, "policies/examples/workshop-g5.gov")

func open(t *testing.T, options *gov.Options) *gov.Engine {
	t.Helper()
	e, err := gov.OpenFile(workshop, options)
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func gpus(id, team string, n int64) gov.Task {
	return gov.Task{ID: id, Team: team, InstanceType: "ml.g5.8xlarge", Amounts: gov.Amounts{gov.GPU: n}}
}

func int64p(v int64) *int64 { return &v }

// The walkthrough (policies/examples/workshop-g5.trace.json) call by call: the stream is
// tests/walkthrough/expected.jsonl byte for byte, and the decisions carry their fields.
func TestWalkthrough(t *testing.T) {
	e := open(t, nil)
	var stream strings.Builder
	step, err := e.Submit(0, gpus("a1", "team-a", 3))
	if err != nil {
		t.Fatal(err)
	}
	d := step.Find("a1")
	if d == nil || d.Outcome != gov.Admitted || d.Flavor != "ml.g5.8xlarge" || d.Borrowed[gov.GPU] != 1 || d.Version != 1 {
		t.Fatalf("a1: got %+v", d)
	}
	stream.WriteString(step.JSON())
	b1 := gov.Task{ID: "b1", Team: "team-b", InstanceType: "ml.g5.8xlarge", Instances: int64p(2)}
	if step, err = e.Submit(5*time.Second, b1); err != nil {
		t.Fatal(err)
	}
	if len(step.Decisions) != 5 || step.Decisions[0].Reason != gov.WaitingForPreemption ||
		step.Decisions[1].Outcome != gov.Preempted || step.Decisions[1].Kind != gov.Reclaim || step.Decisions[1].By != "b1" {
		t.Fatalf("b1's step: got %+v", step.Decisions)
	}
	if a1 := step.Find("a1"); a1.Reason != gov.WaitingForQuota || a1.ShortOf[gov.GPU] != 1 {
		t.Fatalf("a1 after b1: got %+v", a1)
	}
	stream.WriteString(step.JSON())
	if step, err = e.Finish(90*time.Second, "b1"); err != nil {
		t.Fatal(err)
	}
	stream.WriteString(step.JSON())
	if step, err = e.Cancel(95*time.Second, "a1"); err != nil {
		t.Fatal(err)
	}
	stream.WriteString(step.JSON())
	want, err := os.ReadFile(filepath.Join(repo, "tests/walkthrough/expected.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if stream.String() != string(want) {
		t.Fatalf("stream:\n%s\nwant:\n%s", stream.String(), want)
	}
	last, err := e.Decision("a1")
	if err != nil || last.Outcome != gov.Cancelled {
		t.Fatalf("Decision(a1): %+v, %v", last, err)
	}
}

// Every error kind a Go caller can meet, matched with errors.Is, with the library's message.
func TestErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.gov")
	if err := os.WriteFile(bad, []byte("team t {\n  quota nosuch { instances = 1 }\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	closed := open(t, nil)
	closed.Close()
	limited := open(t, &gov.Options{MaxTasks: 1})
	if _, err := limited.Submit(0, gpus("a1", "team-a", 1)); err != nil {
		t.Fatal(err)
	}
	loaded := open(t, nil)
	if _, err := loaded.Submit(0, gpus("a1", "team-a", 1)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		call    func() error
		kind    error
		message string
	}{
		{"no store", func() error { _, err := gov.Open(filepath.Join(t.TempDir(), "none.db"), nil); return err },
			gov.ErrNotFound, "none.db"},
		{"no file", func() error { _, err := gov.OpenFile(filepath.Join(t.TempDir(), "none.gov"), nil); return err },
			gov.ErrIO, "none.gov"},
		{"bad policy", func() error { _, err := gov.OpenFile(bad, nil); return err }, gov.ErrPolicy, "bad.gov"},
		{"closed", func() error { _, err := closed.Submit(0, gpus("a1", "team-a", 1)); return err }, gov.ErrClosed, ""},
		{"closed check", func() error { _, err := closed.Check(gpus("a1", "team-a", 1)); return err }, gov.ErrClosed, ""},
		{"limit", func() error { _, err := limited.Submit(0, gpus("a2", "team-a", 1)); return err }, gov.ErrLimit, "1"},
		{"unknown task", func() error { _, err := limited.Decision("zz"); return err }, gov.ErrNotFound, "zz"},
		{"unknown explain", func() error { _, err := limited.Explain("zz"); return err }, gov.ErrNotFound, "zz"},
		{"state not json", func() error { _, err := open(t, nil).LoadState([]byte("{")); return err },
			gov.ErrInvalidArgument, "the state is not JSON"},
		{"state into tasks", func() error { _, err := loaded.LoadState([]byte("{}")); return err },
			gov.ErrInvalidArgument, "no tasks yet"},
		{"bad event", func() error { _, err := limited.Step(0, []gov.Event{{Kind: 7}}); return err },
			gov.ErrInvalidArgument, "kind"},
		{"watch interval", func() error { _, err := limited.Watch(context.Background(), 0); return err },
			gov.ErrInvalidArgument, "interval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want a %v error", err, tc.kind)
			}
			var ge *gov.Error
			if !errors.As(err, &ge) || !strings.Contains(ge.Message, tc.message) {
				t.Fatalf("got %#v, want a message containing %q", err, tc.message)
			}
			if !strings.HasPrefix(err.Error(), "gov: ") {
				t.Fatalf("Error() = %q", err.Error())
			}
		})
	}
	if err := closed.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

func TestCheck(t *testing.T) {
	e := open(t, nil)
	if _, err := e.Submit(0, gpus("a1", "team-a", 3)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		task    gov.Task
		verdict gov.Verdict
		flavor  string
		borrows bool
	}{
		{"fits", gpus("b1", "team-b", 1), gov.VerdictAdmit, "ml.g5.8xlarge", false},
		{"needs reclaim", gpus("b2", "team-b", 2), gov.VerdictPending, "", false},
		{"unknown team", gpus("x1", "team-x", 1), gov.VerdictInvalid, "", false},
		{"negative", gpus("b3", "team-b", -1), gov.VerdictInvalid, "", false},
		{"unknown class", gov.Task{ID: "b4", Team: "team-b", Priority: "nosuch", Amounts: gov.Amounts{gov.GPU: 1}},
			gov.VerdictInvalid, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.Check(tc.task)
			if err != nil {
				t.Fatal(err)
			}
			if got.Verdict != tc.verdict || got.Flavor != tc.flavor || got.Borrows != tc.borrows || got.Version != 1 {
				t.Fatalf("got %+v (%v), want %v in %q", got, got.Verdict, tc.verdict, tc.flavor)
			}
		})
	}
}

// A controller that restarts: the state exported after every instant of the walkthrough,
// loaded into a new engine, which decides the rest byte for byte as the first would have.
func TestRestart(t *testing.T) {
	b1 := gov.Task{ID: "b1", Team: "team-b", InstanceType: "ml.g5.8xlarge", Instances: int64p(2)}
	events := []struct {
		at    time.Duration
		event gov.Event
	}{
		{0, gov.Event{Kind: gov.Submit, Task: gpus("a1", "team-a", 3)}},
		{5 * time.Second, gov.Event{Kind: gov.Submit, Task: b1}},
		{90 * time.Second, gov.Event{Kind: gov.Finish, ID: "b1"}},
		{95 * time.Second, gov.Event{Kind: gov.Cancel, ID: "a1"}},
	}
	replay := func(e *gov.Engine, from, to int) string {
		var out strings.Builder
		for _, ev := range events[from:to] {
			step, err := e.Step(ev.at, []gov.Event{ev.event})
			if err != nil {
				t.Fatal(err)
			}
			out.WriteString(step.JSON())
		}
		return out.String()
	}
	want := replay(open(t, nil), 0, len(events))
	for cut := 0; cut <= len(events); cut++ {
		first := open(t, nil)
		got := replay(first, 0, cut)
		state, err := first.ExportState()
		if err != nil {
			t.Fatal(err)
		}
		first.Close()
		second := open(t, nil)
		failures, err := second.LoadState(state)
		if err != nil || len(failures) != 0 {
			t.Fatalf("cut %d: LoadState(%s): %v, %v", cut, state, failures, err)
		}
		got += replay(second, cut, len(events))
		if got != want {
			t.Fatalf("cut %d (state %s):\n%s\nwant:\n%s", cut, state, got, want)
		}
	}
}

func TestLoadStateFailures(t *testing.T) {
	e := open(t, nil)
	failures, err := e.LoadState([]byte(`{"admitted": [{"task": {"id": "x", "team": "team-x", "gpus": 1}}],
	  "pending": [{"task": {"id": "a", "team": "team-a", "gpus": 1}}, {"task": {"id": "b", "team": "team-b"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		list  gov.StateList
		index int
		part  string
	}{
		{gov.StateAdmitted, 0, `unknown team "team-x"`},
		{gov.StatePending, 1, "the task requests nothing"},
	}
	if len(failures) != len(want) {
		t.Fatalf("got %+v", failures)
	}
	for i, w := range want {
		f := failures[i]
		if f.List != w.list || f.Index != w.index || !strings.Contains(f.Message, w.part) {
			t.Errorf("failure %d: got %+v, want %v[%d] containing %q", i, f, w.list, w.index, w.part)
		}
	}
	state, err := e.ExportState()
	if err != nil || !strings.Contains(string(state), `"id":"a"`) {
		t.Fatalf("the good entry did not load: %s, %v", state, err)
	}
}

// A file engine's watcher reloads a changed policy file; the step comes out of the channel, and
// the channel closes with the context.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	catalog, err := os.ReadFile(filepath.Join(repo, "policies/catalog/aws-ml.gov"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "aws-ml.gov"), catalog, 0o600); err != nil {
		t.Fatal(err)
	}
	policy := func(instances int) []byte {
		return []byte(strings.ReplaceAll(`import "aws-ml.gov"

cluster c {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 4 }
}

policy {
  task-prioritization = fcfs
  idle-compute        = fair-share
}

team team-a {
  quota ml.g5.8xlarge { instances = N }
}
`, "N", string(rune('0'+instances))))
	}
	path := filepath.Join(dir, "p.gov")
	if err := os.WriteFile(path, policy(1), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := gov.OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if step, err := e.Submit(0, gpus("a1", "team-a", 2)); err != nil || step.Decisions[0].Outcome != gov.Pending {
		t.Fatalf("a1 under 1 instance: %+v, %v", step, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	steps, err := e.Watch(ctx, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Watch(ctx, 5*time.Millisecond); !errors.Is(err, gov.ErrInvalidArgument) {
		t.Fatalf("a second Watch: %v", err)
	}
	if err := os.WriteFile(path, policy(2), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case step := <-steps:
		if step.Version != 2 || step.Find("a1") == nil || step.Find("a1").Outcome != gov.Admitted {
			t.Fatalf("the reload's step: %+v", step)
		}
	case <-time.After(time.Minute):
		t.Fatal("no reload within a minute")
	}
	// A version that does not check: the watcher's failure is asked for, since no call returns it.
	if err := os.WriteFile(path, []byte("team broken {\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	var failed error
	for failed == nil && time.Now().Before(deadline) {
		if failed, err = e.LastReloadError(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !errors.Is(failed, gov.ErrPolicy) || !strings.Contains(failed.Error(), "team broken") {
		t.Fatalf("LastReloadError: %v", failed)
	}
	cancel()
	for range steps { // closed once the watcher stopped
	}
	again, err := e.Watch(context.Background(), time.Second)
	if err != nil {
		t.Fatalf("Watch after the first stopped: %v", err)
	}
	e.Close()
	for range again { // Close closes the running Watch's channel
	}
}

// Many goroutines submit, check, read metrics and export at once (meaningful under -race).
func TestConcurrentUse(t *testing.T) {
	e := open(t, nil)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				id := string(rune('a'+g)) + "-" + string(rune('0'+i%10)) + string(rune('0'+i/10))
				if _, err := e.Submit(time.Duration(i)*time.Millisecond, gpus(id, "team-a", 1)); err != nil {
					t.Error(err)
					return
				}
				if _, err := e.Check(gpus("probe", "team-b", 1)); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if _, err := e.Metrics(); err != nil {
						t.Error(err)
					}
					if _, err := e.ExportState(); err != nil {
						t.Error(err)
					}
				}
				if _, err := e.Cancel(time.Duration(i)*time.Millisecond, id); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	metrics, err := e.Metrics()
	if err != nil || !strings.Contains(metrics, "kueue_") {
		t.Fatalf("Metrics: %v", err)
	}
}

// GPU partitions and queue-order times from Go: a task's Partitions are charged per profile
// (the decision's JSON names them), a profile no quota gives is no-matching-flavor, and of two
// tasks submitted in one step the one Created first is admitted.
func TestPartitionsAndCreated(t *testing.T) {
	e, err := gov.OpenFile(filepath.Join(repo, "policies/examples/mig-partitions.gov"), nil)
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	defer e.Close()
	tests := []struct {
		name    string
		task    gov.Task
		outcome gov.Outcome
		json    string
	}{
		{"charged per profile", gov.Task{ID: "nb1", Team: "research", Priority: "notebook",
			Partitions: map[string]int64{"mig-1g.5gb": 20}}, gov.Admitted, `"usage":{"mig-1g.5gb":20}`},
		{"per pod", gov.Task{ID: "s1", Team: "serving", Pods: 2,
			Partitions: map[string]int64{"mig-3g.20gb": 2}}, gov.Admitted, `"usage":{"mig-3g.20gb":4}`},
		{"no quota gives it", gov.Task{ID: "x", Team: "research", Partitions: map[string]int64{"mig-7g.40gb": 1}},
			gov.Pending, `resource nvidia.com/mig-7g.40gb unavailable in ClusterQueue`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			step, err := e.Submit(0, tc.task)
			if err != nil {
				t.Fatal(err)
			}
			d := step.Decisions[0]
			if d.Outcome != tc.outcome || !strings.Contains(d.JSON, tc.json) {
				t.Fatalf("got %v %s, want %v with %s", d.Outcome, d.JSON, tc.outcome, tc.json)
			}
		})
	}
	// research has 1 of its 21 partitions left and may borrow 5: 4 fit, twice 4 do not. Without
	// Created the two queue by id (a first); created first, b is admitted.
	early, late := 1*time.Second, 5*time.Second
	step, err := e.Step(10*time.Second, []gov.Event{
		{Kind: gov.Submit, Task: gov.Task{ID: "a", Team: "research", Partitions: map[string]int64{"mig-1g.5gb": 4}, Created: &late}},
		{Kind: gov.Submit, Task: gov.Task{ID: "b", Team: "research", Partitions: map[string]int64{"mig-1g.5gb": 4}, Created: &early}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range step.Decisions {
		if d.Outcome == gov.Admitted && d.Task != "b" {
			t.Fatalf("%s admitted first: %s", d.Task, d.JSON)
		}
	}
}

// A task of several pod sets from Go: admitted whole (its JSON names each pod set's instance
// type), or, when one pod set cannot be placed, nothing is admitted and the message names it.
func TestPodSets(t *testing.T) {
	e, err := gov.OpenFile(filepath.Join(repo, "policies/examples/workshop-g5.gov"), nil)
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	defer e.Close()
	job := gov.Task{ID: "job", Team: "team-a", InstanceType: "ml.g5.8xlarge", PodSets: []gov.PodSet{
		{Name: "master", Amounts: gov.Amounts{gov.GPU: 1}},
		{Name: "worker", Amounts: gov.Amounts{gov.GPU: 1}},
	}}
	step, err := e.Submit(0, job)
	if err != nil {
		t.Fatal(err)
	}
	d := step.Decisions[0]
	if d.Outcome != gov.Admitted || !strings.Contains(d.JSON, `"pod_sets":[{"name":"master","flavor":"ml.g5.8xlarge","pods":1`) {
		t.Fatalf("job: %v %s", d.Outcome, d.JSON)
	}
	big := job
	big.ID = "big"
	big.PodSets = []gov.PodSet{{Name: "master", Amounts: gov.Amounts{gov.GPU: 1}}, {Name: "worker", Pods: 3, Amounts: gov.Amounts{gov.GPU: 1}}}
	step, err = e.Submit(time.Second, big)
	if err != nil {
		t.Fatal(err)
	}
	d = step.Decisions[0]
	if d.Outcome != gov.Pending || !strings.HasPrefix(d.Message, "couldn't assign flavors to pod set worker: ") {
		t.Fatalf("big: %v %s", d.Outcome, d.Message)
	}
}
