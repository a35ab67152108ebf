// The Go values of the API: tasks and events going in, decisions, steps and admissions coming
// out. Plain values: they hold no C memory and stay valid after the engine is closed.

package gov

import (
	"math"
	"time"
)

// Forever is a time after every duration-based finish: Tick(Forever) runs the remaining
// finishes, as `gov simulate` does after a trace's last event.
const Forever time.Duration = math.MaxInt64

// Times are offsets from an epoch of the caller's choosing (a trace's start, the Unix epoch),
// the same for every call on one engine; the engine counts whole milliseconds.

// Resource is a resource in its base unit.
type Resource int

const (
	GPU    Resource = iota // devices
	Neuron                 // devices
	VCPU                   // millicores
	Memory                 // MiB
	EFA                    // devices
)

var resourceNames = [...]string{"gpu", "neuron", "vcpu", "memory_gib", "efa"}

// String is the name the decision stream uses: "gpu", "neuron", "vcpu", "memory_gib", "efa".
func (r Resource) String() string {
	if r < 0 || int(r) >= len(resourceNames) {
		return "unknown"
	}
	return resourceNames[r]
}

// Amounts maps resources to amounts in base units; a resource not in the map is not given.
type Amounts map[Resource]int64

// Label is one key and value of a task's labels (kept in order: the decision log prints them so).
type Label struct {
	Key, Value string
}

// Task is a task as a controller describes it. Unknown names, negative amounts or a reused id
// are not call errors: the engine answers with an Invalid decision.
type Task struct {
	ID   string
	Team string
	// A priority class ("": the default class).
	Priority string
	// The instance type ("": the team's instance types in declared order).
	InstanceType string
	// Whole instances of the instance type (nil: not given).
	Instances *int64
	// Per-resource amounts in base units (per pod when Pods is set).
	Amounts Amounts
	// The number of pods (0: not given); Amounts are then per pod.
	Pods int64
	// Finishes this long after it was last admitted (nil: runs until finished or cancelled).
	Duration *time.Duration
	Labels   []Label
	// GPU partitions per MIG profile ("mig-1g.5gb": 2), per pod when Pods is set. A profile no
	// quota of the policy gives leaves the task pending (no-matching-flavor). Decisions name
	// partitions in their JSON; Usage and the other Amounts hold the five resources.
	Partitions map[string]int64
	// Its queue-order time on the engine's clock (Kueue's creationTimestamp), at or before the
	// time it is submitted (nil: that time). Tasks of one priority queue by it.
	Created *time.Duration
	// Its pod sets when it has several (a PyTorchJob's master and worker): each is assigned an
	// instance type of its own and all are admitted or none. Then Instances, Amounts, Pods and
	// Partitions stay unset and InstanceType is the pod sets' default. At most 8.
	PodSets []PodSet
	// Fields added later are added here; a Task built with field names keeps compiling.
}

// PodSet is one pod set of a task of several: Pods pods, each requesting Instances or Amounts
// and Partitions, on InstanceType ("": the task's).
type PodSet struct {
	Name         string
	InstanceType string
	Instances    *int64
	Amounts      Amounts
	Pods         int64 // 0: one pod
	Partitions   map[string]int64
}

// EventKind says what an Event does.
type EventKind int

const (
	Submit EventKind = iota
	Finish
	Cancel
)

// Event is one thing that happens to a task in a Step: Task for a submit, ID for a finish or cancel.
type Event struct {
	Kind EventKind
	Task Task
	ID   string
}

// Outcome is what a decision says happened to its task.
type Outcome int

const (
	Admitted Outcome = iota
	Pending
	Preempted
	Rejected
	Finished
	Cancelled
	Invalid
)

var outcomeNames = [...]string{"admitted", "pending", "preempted", "rejected", "finished", "cancelled", "invalid"}

func (o Outcome) String() string {
	if o < 0 || int(o) >= len(outcomeNames) {
		return "unknown"
	}
	return outcomeNames[o]
}

// Reason is why a task is pending.
type Reason int

const (
	NoReason Reason = iota
	WaitingForQuota
	ExceedsMaxQuota
	WaitingForPreemption
	NoMatchingFlavor
	TeamInactive
)

var reasonNames = [...]string{"", "waiting-for-quota", "exceeds-max-quota", "waiting-for-preemption",
	"no-matching-flavor", "team-inactive"}

func (r Reason) String() string {
	if r < 0 || int(r) >= len(reasonNames) {
		return "unknown"
	}
	return reasonNames[r]
}

// PreemptionKind is why a task was preempted.
type PreemptionKind int

const (
	NoPreemption PreemptionKind = iota
	InTeam
	Reclaim
	FairSharing
)

var preemptionNames = [...]string{"", "in-team", "reclaim", "fair-sharing"}

func (k PreemptionKind) String() string {
	if k < 0 || int(k) >= len(preemptionNames) {
		return "unknown"
	}
	return preemptionNames[k]
}

// Warning is a `warn` rule that matched a task, with its message.
type Warning struct {
	Rule, Message string
}

// Decision is one decision about one task: a line of the decision stream (docs/interfaces.md)
// with the policy version it was made under and the engine step that made it. Fields that do not
// apply to Outcome are empty.
type Decision struct {
	At       time.Duration
	Version  int64
	Sequence uint64
	Task     string
	Team     string
	Outcome  Outcome
	// Admitted.
	Flavor   string
	Usage    Amounts
	Borrowed Amounts
	Warnings []Warning
	// Pending.
	Reason  Reason
	ShortOf Amounts
	Maximum Amounts
	Victims []string
	// Preempted.
	By   string
	Kind PreemptionKind
	// Rejected.
	Rule string
	// All but finished and cancelled.
	Message string
	// The decision as one line of `gov simulate --format jsonl` (no newline).
	JSON string
}

// Step is what one state change did: every decision it made, all under one policy version.
type Step struct {
	Sequence  uint64 // 0: nothing happened (a reload that found nothing new)
	Version   int64
	Decisions []Decision
}

// JSON is the step's decisions as `gov simulate --format jsonl` prints them: one line each,
// each ending with a newline.
func (s Step) JSON() string {
	n := 0
	for _, d := range s.Decisions {
		n += len(d.JSON) + 1
	}
	out := make([]byte, 0, n)
	for _, d := range s.Decisions {
		out = append(out, d.JSON...)
		out = append(out, '\n')
	}
	return string(out)
}

// Find returns the last decision about task in the step, or nil.
func (s Step) Find(task string) *Decision {
	for i := len(s.Decisions) - 1; i >= 0; i-- {
		if s.Decisions[i].Task == task {
			return &s.Decisions[i]
		}
	}
	return nil
}

// Verdict is Check's answer.
type Verdict int

const (
	VerdictAdmit   Verdict = iota // fits now in Flavor (borrowing when Borrows)
	VerdictReject                 // the deny rule Rule matches
	VerdictPending                // does not fit now, or its team is inactive
	VerdictInvalid                // unknown team, class or instance type, or bad amounts
)

var verdictNames = [...]string{"admit", "reject", "pending", "invalid"}

func (v Verdict) String() string {
	if v < 0 || int(v) >= len(verdictNames) {
		return "unknown"
	}
	return verdictNames[v]
}

// Admission is what submitting a task now would lead to (Check), computed without changing the
// engine. Pending tasks are not simulated: VerdictAdmit means "fits now".
type Admission struct {
	Verdict  Verdict
	Flavor   string // Admit: the instance type
	Borrows  bool   // Admit: it borrows from other teams
	Rule     string // Reject: the first matching deny rule
	Warnings uint32 // matching warn rules (and deny rules after the first)
	Priority int32  // the task's effective priority
	Version  int64  // the policy version it was computed under
	Sequence uint64 // the last step of the state it was computed against
}

// StateList names a list of a cluster state document.
type StateList int

const (
	StateAdmitted StateList = iota // the document's "admitted" array
	StatePending                   // its "pending" array
)

func (l StateList) String() string {
	if l == StatePending {
		return "pending"
	}
	return "admitted"
}

// LoadFailure is one entry of a state that LoadState skipped.
type LoadFailure struct {
	List    StateList
	Index   int    // in the document's list
	Message string // e.g. `field "team": unknown team "x"; ...`
}
