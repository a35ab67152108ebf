// Command replay shows gov from a Go controller through the package gov.dev/gov (runtime/go/gov:
// libgov's C ABI over cgo, standard library only): it opens a policy store, replays a trace
// instant by instant and prints the decision stream exactly as `gov simulate` prints it.
//
//	replay (-db STORE [-policy NAME] | -file POLICY.gov) -trace TRACE.json [-interp]
//
// Build against an installed gov (docs/embedding.md):
//
//	go mod edit -replace gov.dev/gov=PREFIX/share/gov/go/gov
//	CGO_CFLAGS="$(pkg-config --cflags gov)" CGO_LDFLAGS="$(pkg-config --libs gov)" go build
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"time"

	"gov.dev/gov"
)

// ---------------------------------------------------------------- the trace, as Go reads it

type amounts struct {
	Gpus       *json.Number           `json:"gpus"`
	Vcpus      *json.Number           `json:"vcpus"`
	MemoryGib  *json.Number           `json:"memory_gib"`
	Neuron     *json.Number           `json:"neuron"`
	Efa        *json.Number           `json:"efa"`
	Partitions map[string]json.Number `json:"partitions"` // GPU partitions per MIG profile
}

// podSet is one of a submit's `pod_sets`: a request of its own, on its own instance type.
type podSet struct {
	Name         string       `json:"name"`
	InstanceType *string      `json:"instance_type"`
	Instances    *json.Number `json:"instances"`
	amounts
	Pods   *json.Number `json:"pods"`
	PerPod *amounts     `json:"per_pod"`
}

// labels keeps the order of the JSON object (a map would not).
type labels []gov.Label

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
		*l = append(*l, gov.Label{Key: key.(string), Value: text})
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
	Created  *json.Number `json:"created"` // may be negative: created before the trace starts
	PodSets  []podSet     `json:"pod_sets"`
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
	v, err := scaledSigned(n, scale, field)
	if err == nil && v < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative whole number of base units", field, n)
	}
	return v, err
}

// scaledSigned is scaled for a value that may be negative (a task's `created`).
func scaledSigned(n json.Number, scale int64, field string) (int64, error) {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return 0, fmt.Errorf("%s: %q is not a number", field, n)
	}
	r.Mul(r, big.NewRat(scale, 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("%s: %q is not a whole number of base units", field, n)
	}
	return r.Num().Int64(), nil
}

// reader converts a trace's numbers, keeping the first error.
type reader struct{ err error }

func (r *reader) read(n *json.Number, scale int64, field string, set func(int64)) {
	if n == nil || r.err != nil {
		return
	}
	var v int64
	if v, r.err = scaled(*n, scale, field); r.err == nil {
		set(v)
	}
}

// request reads what a task or a pod set asks for: `instances`, or amounts (each pod's, with
// `pods` and `per_pod`) and GPU partitions.
func (r *reader) request(top *amounts, instances, pods *json.Number, perPod *amounts,
	setInstances func(int64), setPods func(int64), out gov.Amounts, partitions *map[string]int64) {
	r.read(instances, 1, "instances", setInstances)
	r.read(pods, 1, "pods", setPods)
	per := top
	if perPod != nil {
		per = perPod
	}
	for _, a := range []struct {
		n        *json.Number
		scale    int64
		field    string
		resource gov.Resource
	}{
		{per.Gpus, 1, "gpus", gov.GPU},
		{per.Neuron, 1, "neuron", gov.Neuron},
		{per.Vcpus, 1000, "vcpus", gov.VCPU},
		{per.MemoryGib, 1024, "memory_gib", gov.Memory},
		{per.Efa, 1, "efa", gov.EFA},
	} {
		resource := a.resource
		r.read(a.n, a.scale, a.field, func(v int64) { out[resource] = v })
	}
	for profile, count := range per.Partitions {
		count := count
		profile := profile
		r.read(&count, 1, "partitions."+profile, func(v int64) {
			if *partitions == nil {
				*partitions = map[string]int64{}
			}
			(*partitions)[profile] = v
		})
	}
}

// task is a trace's submit object as a gov.Task.
func task(s *submit) (gov.Task, error) {
	t := gov.Task{ID: s.ID, Team: s.Team, Labels: s.Labels, Amounts: gov.Amounts{}}
	if s.Priority != nil {
		t.Priority = *s.Priority
	}
	if s.InstanceType != nil {
		t.InstanceType = *s.InstanceType
	}
	var r reader
	r.request(&s.amounts, s.Instances, s.Pods, s.PerPod, func(v int64) { t.Instances = &v }, func(v int64) { t.Pods = v },
		t.Amounts, &t.Partitions)
	r.read(s.Duration, 1000, "duration", func(v int64) { d := time.Duration(v) * time.Millisecond; t.Duration = &d })
	if s.Created != nil && r.err == nil {
		var ms int64
		if ms, r.err = scaledSigned(*s.Created, 1000, "created"); r.err == nil {
			d := time.Duration(ms) * time.Millisecond
			t.Created = &d
		}
	}
	for i := range s.PodSets {
		p := &s.PodSets[i]
		set := gov.PodSet{Name: p.Name, Amounts: gov.Amounts{}}
		if p.InstanceType != nil {
			set.InstanceType = *p.InstanceType
		}
		r.request(&p.amounts, p.Instances, p.Pods, p.PerPod, func(v int64) { set.Instances = &v },
			func(v int64) { set.Pods = v }, set.Amounts, &set.Partitions)
		t.PodSets = append(t.PodSets, set)
	}
	return t, r.err
}

func convert(ev *event) (gov.Event, error) {
	switch {
	case ev.Submit != nil:
		t, err := task(ev.Submit)
		return gov.Event{Kind: gov.Submit, Task: t}, err
	case ev.Finish != nil:
		return gov.Event{Kind: gov.Finish, ID: *ev.Finish}, nil
	case ev.Cancel != nil:
		return gov.Event{Kind: gov.Cancel, ID: *ev.Cancel}, nil
	}
	return gov.Event{}, errors.New("an event needs one of submit, finish or cancel")
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
	options := &gov.Options{Policy: *policy, Interpreter: *interp}
	var engine *gov.Engine
	if *file != "" {
		engine, err = gov.OpenFile(*file, options)
	} else {
		engine, err = gov.Open(*db, options)
	}
	if err != nil {
		return err
	}
	defer engine.Close()
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()
	times := make([]time.Duration, len(events))
	for i := range events {
		ms, err := scaled(events[i].At, 1000, fmt.Sprintf("event %d: at", i))
		if err != nil {
			return err
		}
		times[i] = time.Duration(ms) * time.Millisecond
	}
	// Events of one instant go to the engine together, as one step.
	for i := 0; i < len(events); {
		j := i + 1
		for ; j < len(events) && times[j] == times[i]; j++ {
		}
		batch := make([]gov.Event, 0, j-i)
		for k := i; k < j; k++ {
			ev, err := convert(&events[k])
			if err != nil {
				return fmt.Errorf("event %d: %v", k, err)
			}
			batch = append(batch, ev)
		}
		step, err := engine.Step(times[i], batch)
		if err != nil {
			return fmt.Errorf("event %d: %v", i, err)
		}
		out.WriteString(step.JSON())
		i = j
	}
	step, err := engine.Tick(gov.Forever) // the durations still running
	if err != nil {
		return err
	}
	_, err = out.WriteString(step.JSON())
	return err
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
