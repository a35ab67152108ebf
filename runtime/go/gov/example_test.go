package gov_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"gov.dev/gov"
)

// A controller's life: open a policy, ask before admitting, submit, restart from the state.
func Example() {
	engine, err := gov.OpenFile(filepath.Join(repo, "policies/examples/workshop-g5.gov"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer engine.Close()

	task := gov.Task{ID: "a1", Team: "team-a", InstanceType: "ml.g5.8xlarge", Amounts: gov.Amounts{gov.GPU: 3}}
	admission, _ := engine.Check(task)
	fmt.Println("check:", admission.Verdict, admission.Flavor, "borrows:", admission.Borrows)

	step, _ := engine.Submit(0, task)
	fmt.Print(step.JSON())

	// A restart: the state goes to a new engine, which goes on from there.
	state, _ := engine.ExportState()
	restarted, _ := gov.OpenFile(filepath.Join(repo, "policies/examples/workshop-g5.gov"), nil)
	defer restarted.Close()
	failures, _ := restarted.LoadState(state)
	fmt.Println("load failures:", len(failures))
	step, _ = restarted.Finish(time.Minute, "a1")
	fmt.Print(step.JSON())

	_, err = restarted.Decision("never-submitted")
	fmt.Println(errors.Is(err, gov.ErrNotFound))
	// Output:
	// check: admit ml.g5.8xlarge borrows: true
	// {"at":0,"task":"a1","outcome":"admitted","team":"team-a","flavor":"ml.g5.8xlarge","usage":{"gpu":3},"borrowed":{"gpu":1},"message":"Quota reserved in ClusterQueue team-a"}
	// load failures: 0
	// {"at":60,"task":"a1","outcome":"finished","team":"team-a"}
	// true
}
