// The Engine: libgov's C ABI (gov/gov.h) behind Go methods, Go values and Go errors.

package gov

/*
#cgo LDFLAGS: -lgov
#include <stdint.h>
#include <stdlib.h>
#include <gov/gov.h>

extern void govGoOnStep(gov_decisions* step, void* user_data);

// The callback (Go cannot export a function taking a const pointer).
static void gov_go_on_step(const gov_decisions* step, void* user_data) {
  govGoOnStep((gov_decisions*)step, user_data);
}

// The engine's cgo.Handle travels as the callback's user data: an integer, never a Go pointer.
static void gov_go_set_on_step(gov_open_options* options, uintptr_t handle) {
  options->on_step = gov_go_on_step;
  options->on_step_user_data = (void*)handle;
}
*/
import "C"

import (
	"runtime/cgo"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Dialect is the wording of the engine's messages.
type Dialect int

const (
	KueueHead Dialect = iota // Kueue at HEAD
	KueueV0_9                // the Kueue v0.9 of early HyperPod clusters
)

// Options say how an engine is opened. The zero value opens the store's only policy with
// native code, Kueue's HEAD wording and the default bound on live tasks.
type Options struct {
	// In a store with several policies, which one ("": the only one).
	Policy string
	// Use the reference interpreter instead of native code.
	Interpreter bool
	Dialect     Dialect
	// The Ed25519 public key file stored versions are signed with ("": none).
	VerifyKeyPath string
	// Refuse versions not signed by the verify key.
	RequireSignature bool
	// The most live (pending or admitted) tasks (0: the library's default, 1,000,000); a
	// submit past it fails with ErrLimit and changes nothing.
	MaxTasks int
}

// Engine is an admission engine running one compiled policy at a time. Its methods may be
// called from many goroutines at once (state changes are serialised, queries run in
// parallel); Close waits for the calls in progress, and every call after it fails with
// ErrClosed.
type Engine struct {
	mu     sync.RWMutex // held shared by every call, exclusively by Close
	handle *C.gov_engine
	self   cgo.Handle // what the step callback finds the engine by

	watching atomic.Pointer[watcher] // the running Watch, if any
	version  atomic.Int64            // the version of the last step the callback saw
}

// Open opens the policy store at dbPath (read-only) and loads the active version of the policy,
// with its cached native code. Errors: ErrNotFound, ErrStore, ErrPolicy.
func Open(dbPath string, options *Options) (*Engine, error) {
	return open("Open", dbPath, options, false)
}

// OpenFile loads, checks and compiles a policy file. Errors: ErrIO, ErrPolicy.
func OpenFile(policyPath string, options *Options) (*Engine, error) {
	return open("OpenFile", policyPath, options, true)
}

func open(op, path string, options *Options, file bool) (*Engine, error) {
	if options == nil {
		options = &Options{}
	}
	var a arena
	defer a.free()
	var c C.gov_open_options
	C.gov_open_options_init(&c)
	if options.Policy != "" {
		c.policy = a.str(options.Policy)
	}
	if options.Interpreter {
		c.back_end = C.GOV_BACK_END_INTERPRETER
	}
	if options.Dialect == KueueV0_9 {
		c.dialect = C.GOV_DIALECT_KUEUE_V0_9
	}
	if options.VerifyKeyPath != "" {
		c.verify_key_path = a.str(options.VerifyKeyPath)
	}
	if options.RequireSignature {
		c.require_signature = 1
	}
	if options.MaxTasks > 0 {
		c.max_tasks = C.size_t(options.MaxTasks)
	}
	e := &Engine{}
	e.self = cgo.NewHandle(e)
	C.gov_go_set_on_step(&c, C.uintptr_t(e.self))
	err := call(op, func() C.gov_status {
		if file {
			return C.gov_engine_open_file(a.str(path), &c, &e.handle)
		}
		return C.gov_engine_open(a.str(path), &c, &e.handle)
	})
	if err != nil {
		e.self.Delete()
		return nil, err
	}
	e.version.Store(int64(C.gov_engine_version(e.handle)))
	return e, nil
}

// Close stops the engine's watcher and frees it. Calls after Close fail with ErrClosed; Close
// again does nothing.
func (e *Engine) Close() error {
	e.stopWatch()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.handle == nil {
		return nil
	}
	C.gov_engine_close(e.handle) // stops the watcher thread, if any
	e.handle = nil
	e.self.Delete()
	if w := e.watching.Swap(nil); w != nil { // a Watch started while Close waited
		w.stop()
	}
	return nil
}

// use runs f with the engine's handle, or fails with ErrClosed.
func (e *Engine) use(op string, f func(h *C.gov_engine) C.gov_status) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.handle == nil {
		return &Error{Op: op, Kind: ErrClosed}
	}
	return call(op, func() C.gov_status { return f(e.handle) })
}

// millis is a time as the engine's milliseconds (Forever as GOV_TIME_FOREVER).
func millis(at time.Duration) C.int64_t {
	if at == Forever {
		return C.GOV_TIME_FOREVER
	}
	return C.int64_t(at.Milliseconds())
}

// stepCall runs a state change that hands out a gov_decisions and converts it.
func (e *Engine) stepCall(op string, f func(h *C.gov_engine, out **C.gov_decisions) C.gov_status) (Step, error) {
	var list *C.gov_decisions
	if err := e.use(op, func(h *C.gov_engine) C.gov_status { return f(h, &list) }); err != nil {
		return Step{}, err
	}
	defer C.gov_decisions_free(list)
	return stepFromC(list), nil
}

// Submit submits a task at `at` and runs admission until nothing changes; the step holds every
// decision it made (the task's own is step.Find(task.ID)). Errors: ErrLimit past MaxTasks.
func (e *Engine) Submit(at time.Duration, task Task) (Step, error) {
	return e.Step(at, []Event{{Kind: Submit, Task: task}})
}

// Finish finishes an admitted task (a pending one is cancelled). An unknown id changes nothing:
// the step has no decision.
func (e *Engine) Finish(at time.Duration, id string) (Step, error) {
	return e.Step(at, []Event{{Kind: Finish, ID: id}})
}

// Cancel cancels a pending or admitted task.
func (e *Engine) Cancel(at time.Duration, id string) (Step, error) {
	return e.Step(at, []Event{{Kind: Cancel, ID: id}})
}

// Step applies several events at one time, in order, then runs admission until nothing
// changes: what `gov simulate` does with the events of one instant of a trace.
func (e *Engine) Step(at time.Duration, events []Event) (Step, error) {
	var a arena
	defer a.free()
	var batch *C.gov_event
	if len(events) > 0 {
		batch = (*C.gov_event)(a.alloc(unsafe.Sizeof(C.gov_event{}) * uintptr(len(events))))
		view := unsafe.Slice(batch, len(events))
		for i := range events {
			switch events[i].Kind {
			case Submit:
				view[i].kind = C.GOV_EVENT_SUBMIT
				a.task(&view[i].task, &events[i].Task)
			case Finish:
				view[i].kind = C.GOV_EVENT_FINISH
				view[i].id = a.str(events[i].ID)
			case Cancel:
				view[i].kind = C.GOV_EVENT_CANCEL
				view[i].id = a.str(events[i].ID)
			default:
				return Step{}, &Error{Op: "Step", Kind: ErrInvalidArgument, Message: "an event's kind is not Submit, Finish or Cancel"}
			}
		}
	}
	return e.stepCall("Step", func(h *C.gov_engine, out **C.gov_decisions) C.gov_status {
		return C.gov_engine_step(h, millis(at), batch, C.size_t(len(events)), out)
	})
}

// Tick advances the engine's time: duration-based finishes due by `at` happen. Tick(Forever)
// runs every remaining one.
func (e *Engine) Tick(at time.Duration) (Step, error) {
	return e.stepCall("Tick", func(h *C.gov_engine, out **C.gov_decisions) C.gov_status {
		return C.gov_engine_tick(h, millis(at), out)
	})
}

// Reload loads the store's active version (a file engine: the file again) and swaps it in when
// it is new; live tasks carry over. The step is the swap's (Sequence 0 when nothing was new).
func (e *Engine) Reload() (Step, error) {
	return e.stepCall("Reload", func(h *C.gov_engine, out **C.gov_decisions) C.gov_status {
		return C.gov_engine_reload(h, out)
	})
}

// ReloadVersion loads a given version of the store (also an older one).
func (e *Engine) ReloadVersion(version int64) (Step, error) {
	return e.stepCall("ReloadVersion", func(h *C.gov_engine, out **C.gov_decisions) C.gov_status {
		return C.gov_engine_reload_version(h, C.int64_t(version), out)
	})
}

// Pin loads a version of the store and keeps the watcher from moving the engine off it until
// Unpin (a rollback on one replica).
func (e *Engine) Pin(version int64) (Step, error) {
	return e.stepCall("Pin", func(h *C.gov_engine, out **C.gov_decisions) C.gov_status {
		return C.gov_engine_pin(h, C.int64_t(version), out)
	})
}

// Unpin lets the watcher follow the store's active version again.
func (e *Engine) Unpin() error {
	return e.use("Unpin", func(h *C.gov_engine) C.gov_status { return C.gov_engine_unpin(h) })
}

// LastReloadError is why the latest reload failed — the watcher's (on its own thread, so no
// call returns it), Reload's, ReloadVersion's or Pin's — as an *Error with Op "Reload"; nil when
// the latest reload succeeded or none was made. A controller polls it when
// gov_policy_reload_failures_total goes up. The second result is an error of the call itself
// (a closed engine).
func (e *Engine) LastReloadError() (error, error) {
	var code C.gov_status
	var message *C.char
	if err := e.use("LastReloadError", func(h *C.gov_engine) C.gov_status {
		return C.gov_engine_last_reload_error(h, &code, &message)
	}); err != nil {
		return nil, err
	}
	defer C.gov_string_free(message)
	if code == C.GOV_OK {
		return nil, nil
	}
	kind, ok := kinds[code]
	if !ok {
		kind = ErrInternal
	}
	return &Error{Op: "Reload", Kind: kind, Message: C.GoString(message)}, nil
}

// Check answers, without changing anything, whether task would be admitted if submitted now,
// and if not, why not: the hot path of an admission webhook. It runs in parallel with other
// queries.
func (e *Engine) Check(task Task) (Admission, error) {
	var a arena
	defer a.free()
	var c C.gov_task
	a.task(&c, &task)
	var out C.gov_admission
	var admission Admission
	err := e.use("Check", func(h *C.gov_engine) C.gov_status {
		status := C.gov_engine_check(h, &c, &out)
		if status == C.GOV_OK {
			// The names point into the engine: copied while it cannot be closed.
			admission.Flavor = C.GoString(out.flavor)
			admission.Rule = C.GoString(out.rule)
		}
		return status
	})
	if err != nil {
		// Never the zero Admission on an error: its Verdict is VerdictAdmit.
		return Admission{Verdict: VerdictInvalid}, err
	}
	admission.Verdict = Verdict(out.verdict)
	admission.Borrows = out.borrows != 0
	admission.Warnings = uint32(out.warnings)
	admission.Priority = int32(out.priority)
	admission.Version = int64(out.version)
	admission.Sequence = uint64(out.sequence)
	return admission, nil
}

// Decision is the latest decision about the task with this id. Errors: ErrNotFound.
func (e *Engine) Decision(id string) (Decision, error) {
	var a arena
	defer a.free()
	step, err := e.stepCall("Decision", func(h *C.gov_engine, out **C.gov_decisions) C.gov_status {
		return C.gov_engine_decision(h, a.str(id), out)
	})
	if err != nil {
		return Decision{}, err
	}
	return step.Decisions[0], nil
}

// Explain says, as JSON (docs/embedding.md), why the task is where it is. Errors: ErrNotFound.
func (e *Engine) Explain(id string) (string, error) {
	var a arena
	defer a.free()
	return e.text("Explain", func(h *C.gov_engine, out **C.char) C.gov_status {
		return C.gov_engine_explain_json(h, a.str(id), out)
	})
}

// Metrics is the engine's metrics in Prometheus' text format, for the host's /metrics.
func (e *Engine) Metrics() (string, error) {
	return e.text("Metrics", func(h *C.gov_engine, out **C.char) C.gov_status {
		return C.gov_engine_metrics(h, out)
	})
}

// Snapshot is usage per team, flavor and resource, the cohort's, and the live tasks, as JSON.
func (e *Engine) Snapshot() (string, error) {
	var snapshot *C.gov_snapshot
	if err := e.use("Snapshot", func(h *C.gov_engine) C.gov_status { return C.gov_engine_snapshot(h, &snapshot) }); err != nil {
		return "", err
	}
	defer C.gov_snapshot_free(snapshot)
	return C.GoString(C.gov_snapshot_json(snapshot)), nil
}

// Version is the running policy version.
func (e *Engine) Version() int64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.handle == nil {
		return -1
	}
	return int64(C.gov_engine_version(e.handle))
}

// ExportState is the engine's live tasks as a state document (docs/embedding.md "Restart with
// state"): what LoadState of a fresh engine takes back to go on exactly as this one would.
func (e *Engine) ExportState() ([]byte, error) {
	text, err := e.text("ExportState", func(h *C.gov_engine, out **C.char) C.gov_status {
		return C.gov_engine_export_state_json(h, out)
	})
	return []byte(text), err
}

// LoadState loads a state document into an engine that has no tasks yet (right after Open).
// Entries that do not read or load are skipped and returned, one LoadFailure each; the others
// load. Errors: ErrInvalidArgument when the document is not a state (nothing loads; the message
// says where) or the engine already has tasks.
func (e *Engine) LoadState(state []byte) ([]LoadFailure, error) {
	var text *C.char
	if len(state) > 0 {
		text = (*C.char)(C.CBytes(state))
		defer C.free(unsafe.Pointer(text))
	}
	var list *C.gov_load_failures
	err := e.use("LoadState", func(h *C.gov_engine) C.gov_status {
		return C.gov_engine_load_state_json(h, text, C.size_t(len(state)), &list)
	})
	if err != nil {
		return nil, err
	}
	defer C.gov_load_failures_free(list)
	n := int(C.gov_load_failures_count(list))
	failures := make([]LoadFailure, 0, n)
	for i := 0; i < n; i++ {
		f := C.gov_load_failures_get(list, C.size_t(i))
		failures = append(failures, LoadFailure{List: StateList(f.list), Index: int(f.index), Message: C.GoString(f.message)})
	}
	return failures, nil
}

// text runs a call that hands out a string to free with gov_string_free.
func (e *Engine) text(op string, f func(h *C.gov_engine, out **C.char) C.gov_status) (string, error) {
	var out *C.char
	if err := e.use(op, func(h *C.gov_engine) C.gov_status { return f(h, &out) }); err != nil {
		return "", err
	}
	defer C.gov_string_free(out)
	return C.GoString(out), nil
}

// ---------------------------------------------------------------- conversions

// arena holds the C memory of one call's arguments; the engine copies what it keeps.
type arena struct{ blocks []unsafe.Pointer }

func (a *arena) alloc(size uintptr) unsafe.Pointer {
	p := C.calloc(1, C.size_t(size))
	a.blocks = append(a.blocks, p)
	return p
}

func (a *arena) str(s string) *C.char {
	p := C.CString(s)
	a.blocks = append(a.blocks, unsafe.Pointer(p))
	return p
}

func (a *arena) free() {
	for _, p := range a.blocks {
		C.free(p)
	}
	a.blocks = a.blocks[:0]
}

// task fills a C gov_task from a Task.
func (a *arena) task(c *C.gov_task, t *Task) {
	C.gov_task_init(c)
	c.id = a.str(t.ID)
	c.team = a.str(t.Team)
	if t.Priority != "" {
		c.priority = a.str(t.Priority)
	}
	if t.InstanceType != "" {
		c.instance_type = a.str(t.InstanceType)
	}
	if t.Instances != nil {
		c.instances = C.int64_t(*t.Instances)
	}
	for r, amount := range t.Amounts {
		if r >= 0 && r < C.GOV_RESOURCE_COUNT {
			c.amounts[r] = C.int64_t(amount)
		}
	}
	if t.Pods != 0 {
		c.pods = C.int64_t(t.Pods)
	}
	if t.Duration != nil {
		c.duration_ms = C.int64_t(t.Duration.Milliseconds())
	}
	if t.Created != nil {
		c.created_ms = C.int64_t(t.Created.Milliseconds())
	}
	c.partitions, c.partition_count = a.partitions(t.Partitions)
	if len(t.PodSets) > 0 {
		block := a.alloc(unsafe.Sizeof(C.gov_pod_set{}) * uintptr(len(t.PodSets)))
		view := unsafe.Slice((*C.gov_pod_set)(block), len(t.PodSets))
		for i := range t.PodSets {
			p := &t.PodSets[i]
			C.gov_pod_set_init(&view[i])
			view[i].name = a.str(p.Name)
			if p.InstanceType != "" {
				view[i].instance_type = a.str(p.InstanceType)
			}
			if p.Instances != nil {
				view[i].instances = C.int64_t(*p.Instances)
			}
			for r, amount := range p.Amounts {
				if r >= 0 && r < C.GOV_RESOURCE_COUNT {
					view[i].amounts[r] = C.int64_t(amount)
				}
			}
			if p.Pods != 0 {
				view[i].pods = C.int64_t(p.Pods)
			}
			view[i].partitions, view[i].partition_count = a.partitions(p.Partitions)
		}
		c.pod_sets = (*C.gov_pod_set)(block)
		c.pod_set_count = C.size_t(len(t.PodSets))
	}
	if len(t.Labels) > 0 {
		block := a.alloc(unsafe.Sizeof(C.gov_label{}) * uintptr(len(t.Labels)))
		view := unsafe.Slice((*C.gov_label)(block), len(t.Labels))
		for i, l := range t.Labels {
			view[i].key = a.str(l.Key)
			view[i].value = a.str(l.Value)
		}
		c.labels = (*C.gov_label)(block)
		c.label_count = C.size_t(len(t.Labels))
	}
}

// partitions are GPU partitions as C gov_partition views, sorted by profile (map order is random;
// the engine's answers must not be); nil, 0 for none.
func (a *arena) partitions(counts map[string]int64) (*C.gov_partition, C.size_t) {
	if len(counts) == 0 {
		return nil, 0
	}
	profiles := make([]string, 0, len(counts))
	for profile := range counts {
		profiles = append(profiles, profile)
	}
	sort.Strings(profiles)
	block := a.alloc(unsafe.Sizeof(C.gov_partition{}) * uintptr(len(profiles)))
	view := unsafe.Slice((*C.gov_partition)(block), len(profiles))
	for i, profile := range profiles {
		view[i].profile = a.str(profile)
		view[i].count = C.int64_t(counts[profile])
	}
	return (*C.gov_partition)(block), C.size_t(len(profiles))
}

func amountsFromC(c *C.gov_amounts) Amounts {
	if c.present == 0 {
		return nil
	}
	out := Amounts{}
	for r := 0; r < C.GOV_RESOURCE_COUNT; r++ {
		if c.present&(1<<r) != 0 {
			out[Resource(r)] = int64(c.value[r])
		}
	}
	return out
}

func stepFromC(list *C.gov_decisions) Step {
	n := int(C.gov_decisions_count(list))
	step := Step{
		Sequence:  uint64(C.gov_decisions_sequence(list)),
		Version:   int64(C.gov_decisions_version(list)),
		Decisions: make([]Decision, n),
	}
	for i := 0; i < n; i++ {
		d := C.gov_decisions_get(list, C.size_t(i))
		out := &step.Decisions[i]
		out.At = time.Duration(d.at_ms) * time.Millisecond
		out.Version = int64(d.version)
		out.Sequence = uint64(d.sequence)
		out.Task = C.GoString(d.task)
		out.Team = C.GoString(d.team)
		out.Outcome = Outcome(d.outcome)
		out.Flavor = C.GoString(d.flavor)
		out.Usage = amountsFromC(&d.usage)
		out.Borrowed = amountsFromC(&d.borrowed)
		if d.warning_count > 0 {
			for _, w := range unsafe.Slice(d.warnings, int(d.warning_count)) {
				out.Warnings = append(out.Warnings, Warning{Rule: C.GoString(w.rule), Message: C.GoString(w.message)})
			}
		}
		out.Reason = Reason(d.reason)
		out.ShortOf = amountsFromC(&d.short_of)
		out.Maximum = amountsFromC(&d.maximum)
		if d.victim_count > 0 {
			for _, v := range unsafe.Slice(d.victims, int(d.victim_count)) {
				out.Victims = append(out.Victims, C.GoString(v))
			}
		}
		out.By = C.GoString(d.by)
		out.Kind = PreemptionKind(d.kind)
		out.Rule = C.GoString(d.rule)
		out.Message = C.GoString(d.message)
		out.JSON = C.GoString(C.gov_decision_json(list, C.size_t(i)))
	}
	return step
}
