// Command replay shows gov from a Go controller: it opens a policy store through libgov's C ABI
// (cgo, standard library only), replays a trace instant by instant and prints the decision
// stream exactly as `gov simulate` prints it.
//
//	replay (-db STORE [-policy NAME] | -file POLICY.gov) -trace TRACE.json [-interp]
//
// Build against an installed gov (docs/embedding.md):
//
//	CGO_CFLAGS="$(pkg-config --cflags gov)" CGO_LDFLAGS="$(pkg-config --libs gov)" go build
package main

/*
#cgo LDFLAGS: -lgov
#include <stdlib.h>
#include <gov/gov.h>
*/
import "C"

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"unsafe"
)

const (
	unset   = math.MinInt64     // GOV_UNSET
	forever = math.MaxInt64 / 4 // GOV_TIME_FOREVER
)

// ---------------------------------------------------------------- the trace, as Go reads it

type amounts struct {
	Gpus      *json.Number `json:"gpus"`
	Vcpus     *json.Number `json:"vcpus"`
	MemoryGib *json.Number `json:"memory_gib"`
	Neuron    *json.Number `json:"neuron"`
	Efa       *json.Number `json:"efa"`
}

// labels keeps the order of the JSON object (a map would not).
type labels [][2]string

func (l *labels) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("labels: expected an object")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		value, err := dec.Token()
		text, ok := value.(string)
		if err != nil || !ok {
			return fmt.Errorf("labels.%v: expected a string", key)
		}
		*l = append(*l, [2]string{key.(string), text})
	}
	return nil
}

type submit struct {
	ID           string       `json:"id"`
	Team         string       `json:"team"`
	Priority     *string      `json:"priority"`
	InstanceType *string      `json:"instance_type"`
	Instances    *json.Number `json:"instances"`
	amounts
	Pods     *json.Number `json:"pods"`
	PerPod   *amounts     `json:"per_pod"`
	Labels   labels       `json:"labels"`
	Duration *json.Number `json:"duration"`
}

type event struct {
	At     json.Number `json:"at"`
	Submit *submit     `json:"submit"`
	Finish *string     `json:"finish"`
	Cancel *string     `json:"cancel"`
}

type trace struct {
	Events []event `json:"events"`
}

func readTrace(path string) ([]event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var t trace
	if err := dec.Decode(&t); err != nil {
		return nil, err
	}
	return t.Events, nil
}

// scaled reads a decimal exactly (no floating point) and multiplies it by scale: seconds to
// milliseconds (1000), vCPUs to millicores (1000), GiB to MiB (1024), devices (1).
func scaled(n json.Number, scale int64, field string) (int64, error) {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return 0, fmt.Errorf("%s: %q is not a number", field, n)
	}
	r.Mul(r, big.NewRat(scale, 1))
	if !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() {
		return 0, fmt.Errorf("%s: %q is not a non-negative whole number of base units", field, n)
	}
	return r.Num().Int64(), nil
}

func optional(n *json.Number, scale int64, field string) (int64, error) {
	if n == nil {
		return unset, nil
	}
	return scaled(*n, scale, field)
}

// ---------------------------------------------------------------- C memory for one call

// arena holds the C memory of one call's events; the engine copies what it keeps.
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

// fillTask sets a C gov_task from a trace's submit object.
func (a *arena) fillTask(task *C.gov_task, s *submit) error {
	C.gov_task_init(task)
	task.id = a.str(s.ID)
	task.team = a.str(s.Team)
	if s.Priority != nil {
		task.priority = a.str(*s.Priority)
	}
	if s.InstanceType != nil {
		task.instance_type = a.str(*s.InstanceType)
	}
	var err error
	set := func(into *C.int64_t, n *json.Number, scale int64, field string) {
		if err == nil {
			var v int64
			v, err = optional(n, scale, field)
			*into = C.int64_t(v)
		}
	}
	set(&task.instances, s.Instances, 1, "instances")
	set(&task.pods, s.Pods, 1, "pods")
	set(&task.duration_ms, s.Duration, 1000, "duration")
	per := &s.amounts
	if s.PerPod != nil {
		per = s.PerPod
	}
	set(&task.amounts[C.GOV_GPU], per.Gpus, 1, "gpus")
	set(&task.amounts[C.GOV_NEURON], per.Neuron, 1, "neuron")
	set(&task.amounts[C.GOV_VCPU], per.Vcpus, 1000, "vcpus")
	set(&task.amounts[C.GOV_MEMORY], per.MemoryGib, 1024, "memory_gib")
	set(&task.amounts[C.GOV_EFA], per.Efa, 1, "efa")
	if len(s.Labels) > 0 {
		size := unsafe.Sizeof(C.gov_label{})
		block := a.alloc(size * uintptr(len(s.Labels)))
		view := unsafe.Slice((*C.gov_label)(block), len(s.Labels))
		for i, kv := range s.Labels {
			view[i].key = a.str(kv[0])
			view[i].value = a.str(kv[1])
		}
		task.labels = (*C.gov_label)(block)
		task.label_count = C.size_t(len(s.Labels))
	}
	return err
}

// ---------------------------------------------------------------- the engine

type engine struct{ handle *C.gov_engine }

func lastError(what string, status C.gov_status) error {
	return fmt.Errorf("%s: %s (%s)", what, C.GoString(C.gov_last_error()), C.GoString(C.gov_status_name(status)))
}

func open(db, policy, file string, interp bool) (*engine, error) {
	var options C.gov_open_options
	C.gov_open_options_init(&options)
	if interp {
		options.back_end = C.GOV_BACK_END_INTERPRETER
	}
	var a arena
	defer a.free()
	if policy != "" {
		options.policy = a.str(policy)
	}
	e := &engine{}
	var status C.gov_status
	if file != "" {
		status = C.gov_engine_open_file(a.str(file), &options, &e.handle)
	} else {
		status = C.gov_engine_open(a.str(db), &options, &e.handle)
	}
	if status != C.GOV_OK {
		return nil, lastError("cannot open the policy", status)
	}
	return e, nil
}

func (e *engine) close() { C.gov_engine_close(e.handle) }

// step applies the events of one instant and writes the decisions as JSON lines.
func (e *engine) step(at int64, events []event, out io.Writer) error {
	var a arena
	defer a.free()
	var batch *C.gov_event
	if len(events) > 0 {
		batch = (*C.gov_event)(a.alloc(unsafe.Sizeof(C.gov_event{}) * uintptr(len(events))))
	}
	view := unsafe.Slice(batch, len(events))
	for i := range events {
		ev := &events[i]
		switch {
		case ev.Submit != nil:
			view[i].kind = C.GOV_EVENT_SUBMIT
			if err := a.fillTask(&view[i].task, ev.Submit); err != nil {
				return err
			}
		case ev.Finish != nil:
			view[i].kind = C.GOV_EVENT_FINISH
			view[i].id = a.str(*ev.Finish)
		case ev.Cancel != nil:
			view[i].kind = C.GOV_EVENT_CANCEL
			view[i].id = a.str(*ev.Cancel)
		default:
			return errors.New("an event needs one of submit, finish or cancel")
		}
	}
	var decisions *C.gov_decisions
	status := C.gov_engine_step(e.handle, C.int64_t(at), batch, C.size_t(len(events)), &decisions)
	if status != C.GOV_OK {
		return lastError("step", status)
	}
	defer C.gov_decisions_free(decisions)
	_, err := io.WriteString(out, C.GoString(C.gov_decisions_json(decisions)))
	return err
}

func run() error {
	db := flag.String("db", "", "the policy store (its active version)")
	policy := flag.String("policy", "", "the policy in the store (default: the only one)")
	file := flag.String("file", "", "a policy file instead of a store")
	tracePath := flag.String("trace", "", "the trace to replay")
	interp := flag.Bool("interp", false, "use the reference interpreter instead of native code")
	flag.Parse()
	if *tracePath == "" || (*db == "") == (*file == "") {
		flag.Usage()
		os.Exit(2)
	}
	events, err := readTrace(*tracePath)
	if err != nil {
		return fmt.Errorf("%s: %v", *tracePath, err)
	}
	e, err := open(*db, *policy, *file, *interp)
	if err != nil {
		return err
	}
	defer e.close()
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()
	times := make([]int64, len(events))
	for i := range events {
		if times[i], err = scaled(events[i].At, 1000, fmt.Sprintf("event %d: at", i)); err != nil {
			return err
		}
	}
	// Events of one instant go to the engine together, as one step.
	for i := 0; i < len(events); {
		j := i + 1
		for ; j < len(events) && times[j] == times[i]; j++ {
		}
		if err := e.step(times[i], events[i:j], out); err != nil {
			return fmt.Errorf("event %d: %v", i, err)
		}
		i = j
	}
	return e.step(forever, nil, out) // the durations still running
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
