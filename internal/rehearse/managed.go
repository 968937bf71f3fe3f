package rehearse

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// Managed node groups are the EKS managed node group twin
// (internal/twin/mng). The playbook upgrades one in place
// (UpdateNodegroupVersion; a custom-AMI group through a new launch template
// version with the hop's AMI, workshop §6.1) or blue/green (a new group at
// the new version, then the old one deleted, which drains it; §6.2).

// updateManaged is the in-place strategy.
func (r *run) updateManaged(g scenario.NodeGroup, to kubeversion.Minor) error {
	name := r.liveGroup[g.Name]
	st, ok := r.mng.Status(name)
	if !ok {
		return fmt.Errorf("node group %s not found", name)
	}
	force := g.Upgrade != nil && g.Upgrade.Force
	lt := st.LaunchTemplate
	if lt == nil || lt.ImageID == "" {
		return r.executor().UpdateNodegroup(context.Background(), name, force, to)
	}
	// A custom-AMI group is not upgraded by a version bump (§B): its
	// launch template gets a new version with the hop's AMI. (Still the
	// twin's own call: the EKS port has no launch template behind a
	// managed node group yet.)
	req := mng.UpdateRequest{Force: force}
	cur, ok := r.lookupAMI(lt.ImageID)
	if !ok {
		return fmt.Errorf("node group %s: launch template image %s is not in the catalog", name, lt.ImageID)
	}
	next, err := catalog.ResolveAlias(cur.Family+"@latest", to.String(), cur.Arch, r.eng.Now())
	if err != nil {
		return fmt.Errorf("node group %s: no %s AMI for Kubernetes %s: %v", name, cur.Family, to, err)
	}
	// CreateLaunchTemplateVersion numbers versions 1, 2, …
	version := "2"
	if n, err := strconv.Atoi(lt.Version); err == nil {
		version = strconv.Itoa(n + 1)
	}
	r.event("Normal", "LaunchTemplateUpdated", fmt.Sprintf("node group %s (custom AMI): launch template %s version %s with image %s (%s)", name, lt.Name, version, next.ID, next.Name))
	req.LaunchTemplate = &mng.LaunchTemplate{ID: lt.ID, Name: lt.Name, Version: version, ImageID: next.ID}
	var result *mng.Update
	if err := r.mng.UpdateVersion(name, req, func(u mng.Update) { result = &u }); err != nil {
		return err
	}
	if err := r.waitFor(func() bool { return result != nil }); err != nil {
		return err
	}
	if result.Status != mng.UpdateSuccessful {
		var errs []string
		for _, e := range result.Errors {
			errs = append(errs, e.Error())
		}
		return fmt.Errorf("node group %s: update %s: %s", name, result.Status, strings.Join(errs, "; "))
	}
	return r.waitFor(func() bool { return r.groupAt(g.Name, to) })
}

// blueGreen creates the green group at the control plane's version — the
// blue one's configuration with the strategy's overrides — waits until it is
// ACTIVE, then deletes the blue group: EKS drains its nodes (PDBs respected
// for up to a few minutes each) and pods move to green by their
// nodeSelector and tolerations. On the next hop the names swap back.
func (r *run) blueGreen(g scenario.NodeGroup, to kubeversion.Minor) error {
	blue := r.liveGroup[g.Name]
	greenName := g.Upgrade.Green.Name
	if blue == greenName {
		greenName = g.Name
	}
	spec := twinbuild.ManagedSpec(greenName, g.Managed)
	o := g.Upgrade.Green
	if len(o.Zones) > 0 {
		spec.Zones = o.Zones
	}
	if len(o.InstanceTypes) > 0 {
		spec.InstanceTypes = o.InstanceTypes
	}
	if o.Desired != nil {
		spec.Desired = *o.Desired
		spec.Min = min(spec.Min, spec.Desired)
		spec.Max = max(spec.Max, spec.Desired)
	}
	if o.Labels != nil {
		spec.Labels = o.Labels
	}
	if o.Taints != nil {
		spec.Taints = o.Taints
	}
	// A custom-AMI group's green gets the hop's AMI in its launch template;
	// an EKS-AMI one the control plane's version and its newest release.
	spec.Version, spec.ReleaseVersion = "", ""
	if lt := spec.LaunchTemplate; lt != nil && lt.ImageID != "" {
		cur, ok := r.lookupAMI(lt.ImageID)
		if !ok {
			return fmt.Errorf("node group %s: launch template image %s is not in the catalog", blue, lt.ImageID)
		}
		next, err := catalog.ResolveAlias(cur.Family+"@latest", to.String(), cur.Arch, r.eng.Now())
		if err != nil {
			return err
		}
		spec.LaunchTemplate = &mng.LaunchTemplate{Name: greenName, Version: "1", ImageID: next.ID}
	}
	var created error
	done := false
	r.event("Normal", "BlueGreenStarted", fmt.Sprintf("node group %s: creating green group %s at %s", blue, greenName, to))
	if err := r.mng.Create(spec, func(err error) { created, done = err, true }); err != nil {
		return err
	}
	r.greens = append(r.greens, greenName)
	r.liveGroup[g.Name] = greenName
	if err := r.waitFor(func() bool { return done }); err != nil {
		return err
	}
	if created != nil {
		return fmt.Errorf("green node group %s: %v", greenName, created)
	}
	deleted := false
	r.event("Normal", "BlueGreenDrain", fmt.Sprintf("node group %s: deleting blue group %s; its pods move to %s", g.Name, blue, greenName))
	if err := r.mng.Delete(blue, func() { deleted = true }); err != nil {
		return err
	}
	if err := r.waitFor(func() bool { return deleted }); err != nil {
		return err
	}
	return r.waitFor(func() bool { return r.groupAt(greenName, to) })
}

// managedBusy reports whether a managed node group is changing.
func (r *run) managedBusy() bool { return r.mng.Busy() }

// managedReport fills a group's counters from its updates.
func (r *run) managedReport(grp *report.Group) {
	st, ok := r.mng.Status(grp.Name)
	if !ok {
		return
	}
	for _, u := range st.Updates {
		grp.Replaced += len(u.Replaced)
		grp.Launched += len(u.Launched)
		grp.MaxConcurrentDisruptions = max(grp.MaxConcurrentDisruptions, u.MaxConcurrentDisruptions)
		grp.SurgeNodes = max(grp.SurgeNodes, u.Surge)
	}
	if st.Status == mng.StatusDeleted {
		grp.Replaced = max(grp.Replaced, r.deletedNodes[grp.Name])
	}
}

// managedBlocked lists the pods whose eviction a managed node group's
// update or deletion (DeleteNodegroup drains every node for up to 5
// minutes, then terminates it) saw refused.
func (r *run) managedBlocked(now time.Time) []report.Blocked {
	var out []report.Blocked
	add := func(bs []mng.Blocked) {
		for _, b := range bs {
			until := b.Until
			if until.IsZero() {
				until = now
			}
			out = append(out, report.Blocked{Node: b.Node, Pod: b.Pod, PDB: b.PDB, Seconds: seconds(until.Sub(b.Since)), Outcome: b.Outcome, Message: b.Message})
		}
	}
	for _, st := range r.mng.Statuses() {
		for _, u := range st.Updates {
			add(u.Blocked)
		}
	}
	add(r.mng.DeletionBlocked())
	return out
}

// mngEvent turns a managed node group event into a timeline event.
func (r *run) mngEvent(e mng.Event) {
	r.events = append(r.events, report.Event{
		T: seconds(r.eng.Elapsed()), Type: e.Type, Message: e.Message, Node: e.Node, Group: e.Nodegroup,
		Source: "eks", Code: e.Reason,
	})
	if e.Reason == mng.ReasonNodegroupDeleting {
		if st, ok := r.mng.Status(e.Nodegroup); ok {
			r.deletedNodes[e.Nodegroup] = len(st.Nodes)
		}
	}
}

// lookupAMI finds an image in the scenario's AMIs or the embedded catalog.
func (r *run) lookupAMI(id string) (catalog.AMI, bool) {
	for _, a := range r.sc.ExtraAMIs() {
		if a.ID == id {
			return a, true
		}
	}
	return catalog.LookupAMI(id)
}
