package asg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// SetDesiredCapacity launches up to the new capacity on the group's launch
// template, within MaxSize; TerminateInstance with decrement terminates the
// instance and lowers the capacity with no replacement, without decrement
// the group replaces it; an unknown or terminating instance, a capacity
// above max and a decrement below min are ValidationErrors.
func TestSetDesiredCapacityAndTerminateInstance(t *testing.T) {
	tw := newTwin(t, 1)
	tw.create(groupSpec("ng", 2, func(s *asg.Spec) { s.Min = 2 })) // max 4
	tw.upgrade("ng", ami131)
	if err := tw.asg.SetDesiredCapacity("ng", 5); err == nil || !strings.Contains(err.Error(), "above max value 4") {
		t.Fatalf("SetDesiredCapacity 5 over max 4: %v", err)
	}
	if err := tw.asg.SetDesiredCapacity("ng", 4); err != nil {
		t.Fatal(err)
	}
	tw.Eng.RunUntil(tw.Eng.Now().Add(time.Hour))
	st := tw.status("ng")
	var old, fresh []asg.InstanceStatus
	for _, in := range st.Instances {
		if in.ImageID == ami131 {
			fresh = append(fresh, in)
		} else {
			old = append(old, in)
		}
	}
	if st.Desired != 4 || len(old) != 2 || len(fresh) != 2 || fresh[0].State != asg.InService || fresh[0].NodeReadyTime.IsZero() {
		t.Fatalf("after surge to 4: desired %d, %d old, %d on the new image (%+v)\n%s", st.Desired, len(old), len(fresh), fresh, tw.dump())
	}
	for _, in := range old {
		if err := terminate(tw, in.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := terminate(tw, old[0].ID, true); err == nil || !strings.Contains(err.Error(), "Instance Id not found") {
		t.Fatalf("terminating %s twice: %v", old[0].ID, err)
	}
	tw.Eng.RunUntil(tw.Eng.Now().Add(time.Hour))
	st = tw.status("ng")
	if st.Desired != 2 || len(st.Instances) != 2 || st.Instances[0].ImageID != ami131 || st.Instances[1].ImageID != ami131 {
		t.Fatalf("after terminating the old instances with decrement: desired %d, instances %+v", st.Desired, st.Instances)
	}
	if err := terminate(tw, st.Instances[0].ID, true); err == nil || !strings.Contains(err.Error(), "min size") {
		t.Fatalf("decrement below min 2: %v", err)
	}
	if err := terminate(tw, st.Instances[0].ID, false); err != nil {
		t.Fatal(err)
	}
	tw.Eng.RunUntil(tw.Eng.Now().Add(time.Hour))
	st2 := tw.status("ng")
	if st2.Desired != 2 || len(st2.Instances) != 2 || st2.Instances[0].ID == st.Instances[0].ID || st2.Instances[1].ID == st.Instances[0].ID {
		t.Fatalf("terminating without decrement: desired %d, instances %+v; want 2, %s replaced", st2.Desired, st2.Instances, st.Instances[0].ID)
	}
}

func terminate(tw *twin, id string, decrement bool) error {
	group, _, err := tw.asg.TerminateInstance(id, decrement)
	if err == nil && group != "ng" {
		tw.t.Fatalf("instance %s terminated in group %q, want ng", id, group)
	}
	return err
}
