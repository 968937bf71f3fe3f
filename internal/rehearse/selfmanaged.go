package rehearse

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// Self-managed node groups are EC2 Auto Scaling groups (internal/twin/asg).
// The executor upgrades one as the workshop does (§6.4): a new launch
// template version with the hop's AMI, then an instance refresh, with the
// scenario's refresh preferences.

// refreshEnded notes a self-managed group's refresh that killed Ready pods
// without eviction (no termination hook, or its drain did not finish):
// before is the group's status when its step began.
func (r *run) refreshEnded(group string, before asg.GroupStatus) {
	rec, ok, _ := r.asg.RefreshRecord(group)
	if !ok || rec.Status != asg.RefreshSuccessful || (before.Refresh != nil && rec.ID == before.Refresh.ID) {
		return
	}
	if after, err := r.asg.Status(group); err == nil && after.PodsKilled > before.PodsKilled {
		hook := "the termination lifecycle hook's drain did not finish"
		if !after.TerminationHook {
			hook = "no termination lifecycle hook drains the nodes"
		}
		r.phaseNote(fmt.Sprintf("%d Ready pod(s) killed without eviction: %s", after.PodsKilled-before.PodsKilled, hook))
	}
}

// selfManagedReport fills a group's counters.
func (r *run) selfManagedReport(grp *report.Group) {
	st, err := r.asg.Status(grp.Name)
	if err != nil {
		return
	}
	grp.Replaced, grp.Launched = st.Replaced, st.Launched
	grp.MaxConcurrentDisruptions, grp.SurgeNodes = st.MaxConcurrentTerminating, st.MaxSurge
	for _, f := range st.Failures {
		r.notes = append(r.notes, fmt.Sprintf("node group %s: %s", grp.Name, f.Message))
	}
}

// asgEvent turns an Auto Scaling or NTH activity line into a timeline event.
func (r *run) asgEvent(e asg.Event) {
	var fields []string
	if e.Instance != "" && !strings.Contains(e.Message, e.Instance) {
		fields = append(fields, "instance="+e.Instance)
	}
	r.log(report.Event{
		T: seconds(r.eng.Elapsed()), Type: e.Type, Message: e.Message, Node: e.Node, Group: e.Group,
		Source: e.Source, Code: e.Code, Fields: fields,
	})
}
