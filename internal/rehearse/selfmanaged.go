package rehearse

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/asg"
)

// Self-managed node groups are EC2 Auto Scaling groups (internal/twin/asg).
// The playbook upgrades one as the workshop does (§6.4): a new launch
// template version with the hop's AMI, then an instance refresh.

// refreshSelfManaged moves the group's launch template to the newest AMI of
// its family for the hop's version and runs an instance refresh with the
// group's preferences, waiting until it ends.
func (r *run) refreshSelfManaged(g scenario.NodeGroup, to kubeversion.Minor) error {
	st, err := r.asg.Status(g.Name)
	if err != nil {
		return err
	}
	cur, ok := r.lookupAMI(st.LaunchTemplate.ImageID)
	if !ok {
		return fmt.Errorf("node group %s: launch template image %s is not in the catalog", g.Name, st.LaunchTemplate.ImageID)
	}
	next, err := catalog.ResolveAlias(cur.Family+"@latest", to.String(), cur.Arch, r.eng.Now())
	if err != nil {
		return fmt.Errorf("node group %s: no %s AMI for Kubernetes %s: %v", g.Name, cur.Family, to, err)
	}
	if next.ID != cur.ID {
		r.event("Normal", "LaunchTemplateUpdated", fmt.Sprintf("node group %s: launch template %s gets image %s (%s)", g.Name, st.LaunchTemplate.Name, next.ID, next.Name))
		if err := r.asg.SetLaunchTemplate(g.Name, asg.LaunchTemplate{Name: st.LaunchTemplate.Name, ImageID: next.ID}); err != nil {
			return err
		}
	}
	var prefs asg.Preferences
	if g.Upgrade != nil && g.Upgrade.Refresh != nil {
		prefs = g.Upgrade.Refresh.ASG()
	}
	var result *asg.InstanceRefresh
	if err := r.asg.StartInstanceRefresh(g.Name, prefs, func(ir asg.InstanceRefresh) { result = &ir }); err != nil {
		return fmt.Errorf("node group %s: %v", g.Name, err)
	}
	if err := r.waitFor(func() bool { return result != nil }); err != nil {
		return err
	}
	if result.Status != asg.RefreshSuccessful {
		return fmt.Errorf("node group %s: instance refresh %s: %s", g.Name, result.Status, result.StatusReason)
	}
	if after, err := r.asg.Status(g.Name); err == nil && after.PodsKilled > st.PodsKilled {
		hook := "the termination lifecycle hook's drain did not finish"
		if !after.TerminationHook {
			hook = "no termination lifecycle hook drains the nodes"
		}
		r.phaseNote(fmt.Sprintf("%d Ready pod(s) killed without eviction: %s", after.PodsKilled-st.PodsKilled, hook))
	}
	return r.waitFor(func() bool { return r.groupAt(g.Name, to) })
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
	r.events = append(r.events, report.Event{
		T: seconds(r.eng.Elapsed()), Type: e.Type, Message: e.Message, Node: e.Node, Group: e.Group,
		Source: e.Source, Code: e.Code, Fields: fields,
	})
}
