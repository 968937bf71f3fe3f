package mng

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/sim"
)

// UpdateNodegroupVersion: what EKS refuses, then the update's four phases —
// setup, scale-up, upgrade, scale-down — exactly as semantics.md §B lists
// them (source: managed-node-update-behavior.adoc).

// Update statuses (DescribeUpdate) and phases.
const (
	UpdateInProgress = "InProgress"
	UpdateSuccessful = "Successful"
	UpdateFailed     = "Failed"

	PhaseSetup     = "Setup"
	PhaseScaleUp   = "ScaleUp"
	PhaseUpgrade   = "Upgrade"
	PhaseScaleDown = "ScaleDown"
)

// update is an update in progress.
type update struct {
	s   *Service
	g   *group
	rec *Update

	target         ltVersion
	version        kubeversion.Minor
	maxUnavailable int
	surgeNodes     []*member
	// inFlight are the old nodes being replaced: from their selection
	// until their instance is terminated. They are what maxUnavailable
	// bounds.
	inFlight  map[string]bool
	drains    map[string]*drainer
	waits     map[string]*sim.Event
	scalingIn bool
	blocked   []*Blocked
	done      func(Update)
	finished  bool
}

// UpdateVersion is UpdateNodegroupVersion. It refuses at once what EKS
// refuses; otherwise the group turns UPDATING and the update runs in
// virtual time, and done (if not nil) receives the finished update.
func (s *Service) UpdateVersion(name string, req nodegroup.UpdateRequest, done func(Update)) error {
	g := s.groups[name]
	if g == nil || g.status == StatusDeleted {
		return nodegroup.NewError(nodegroup.ResourceNotFoundException, nodegroup.OpUpdateNodegroupVersion, "No node group found for name: %s.", name)
	}
	p, err := s.planUpdate(g, req)
	if err != nil {
		return err
	}
	target, version := p.target, p.version
	s.updateSeq++
	u := &update{s: s, g: g, target: target, version: version, done: done,
		inFlight: map[string]bool{}, drains: map[string]*drainer{}, waits: map[string]*sim.Event{}}
	u.rec = &Update{
		ID: updateID(g.spec.Name, s.updateSeq), Nodegroup: g.spec.Name, Status: UpdateInProgress,
		CreatedAt: s.eng.Now(), Force: req.Force, Strategy: g.spec.UpdateStrategy,
		FromVersion: g.version, ToVersion: version,
		FromReleaseVersion: g.releaseVersion(), ToReleaseVersion: releaseVersionOf(g, target.ami),
		FromAMI: g.ami.ID, ToAMI: target.ami.ID,
		FromLaunchTemplateVersion: g.lt.source, ToLaunchTemplateVersion: target.source,
	}
	g.status = StatusUpdating
	g.update = u
	g.updates = append(g.updates, u.rec)
	s.eng.After(0, u.setup)
	return nil
}

// plan is what an update aims at: the launch template version (and AMI)
// the nodes will run, and the Kubernetes version the group will report.
type plan struct {
	target  ltVersion
	version kubeversion.Minor
}

// planUpdate applies EKS's refusals (internal/rules/nodegroup) and works
// out the plan.
func (s *Service) planUpdate(g *group, req nodegroup.UpdateRequest) (plan, error) {
	running := ""
	if g.update != nil {
		running = g.update.rec.ID
	}
	if err := nodegroup.CheckUpdatable(g.spec.Name, g.status, running); err != nil {
		return plan{}, err
	}
	p := plan{target: ltVersion{ami: g.lt.ami, source: g.lt.source}, version: g.version}
	if req.LaunchTemplate != nil {
		if err := s.planLaunchTemplate(g, req.LaunchTemplate, &p); err != nil {
			return plan{}, err
		}
	}
	if g.custom() {
		if err := nodegroup.CheckCustomAMIRequest(g.spec.Name, g.lt.ami.ID, req); err != nil {
			return plan{}, err
		}
	} else if err := s.planEKSAMI(g, req, &p); err != nil {
		return plan{}, err
	}
	current := nodegroup.Configuration{AMI: g.lt.ami.ID, LaunchTemplateVersion: g.lt.source}
	target := nodegroup.Configuration{AMI: p.target.ami.ID, LaunchTemplateVersion: p.target.source}
	if err := nodegroup.CheckChange(g.spec.Name, g.version, g.ami.ID, current, target, len(g.oldMembers())); err != nil {
		return plan{}, err
	}
	return p, nil
}

// planLaunchTemplate moves the plan to another version of the group's
// launch template. For a custom-AMI group the version's image becomes the
// target, and its Kubernetes minor the group's version.
func (s *Service) planLaunchTemplate(g *group, r *nodegroup.LaunchTemplate, p *plan) error {
	var id string
	if lt := g.spec.LaunchTemplate; lt != nil {
		id = launchTemplateID(lt)
	}
	if err := nodegroup.CheckLaunchTemplate(g.spec.Name, g.spec.LaunchTemplate, id, r); err != nil {
		return err
	}
	p.target.source = r.Version
	if !g.custom() || r.ImageID == "" {
		return nil
	}
	a, err := nodegroup.CustomAMI(s.opts.ExtraAMIs, r.ImageID, nodegroup.OpUpdateNodegroupVersion)
	if err != nil {
		return err
	}
	if a.KubeArch() != g.it.Arch {
		return nodegroup.NewError(nodegroup.InvalidParameterException, nodegroup.OpUpdateNodegroupVersion, "AMI %s is %s but instance type %s is %s", a.ID, a.Arch, g.it.Name, g.it.Arch)
	}
	v, err := kubeversion.Parse(a.KubernetesMinor)
	if err != nil {
		return nodegroup.NewError(nodegroup.InvalidParameterException, nodegroup.OpUpdateNodegroupVersion, "AMI %s: %v", a.ID, err)
	}
	p.target.ami, p.version = a, v
	return nil
}

// planEKSAMI picks the EKS-optimized AMI of an update: the requested
// version (default: the control plane's) and release (default: the newest).
func (s *Service) planEKSAMI(g *group, req nodegroup.UpdateRequest, p *plan) error {
	version, err := nodegroup.TargetVersion(g.spec.Name, g.version, s.opts.ControlPlaneVersion(), req.Version)
	if err != nil {
		return err
	}
	a, err := nodegroup.EKSAMI(s.opts.ExtraAMIs, g.family, g.arch, version, req.ReleaseVersion, s.eng.Now(), nodegroup.OpUpdateNodegroupVersion)
	if err != nil {
		return err
	}
	from := nodegroup.Release{Version: nodegroup.ReleaseVersion(g.ami), Date: g.ami.ReleaseDate}
	to := nodegroup.Release{Version: nodegroup.ReleaseVersion(a), Date: a.ReleaseDate}
	if err := nodegroup.CheckRelease(g.spec.Name, g.version, version, from, to); err != nil {
		return err
	}
	p.target.ami, p.version = a, version
	return nil
}

// ---- setup phase ------------------------------------------------------------

// setup (§B setup phase): a new launch template version with the target
// AMI or the user's launch template version (steps 1–2: the Auto Scaling
// group launches it from now on), and the number of nodes to upgrade in
// parallel (step 3).
func (u *update) setup() {
	s, g := u.s, u.g
	u.enter(PhaseSetup)
	if u.target.ami.ID != g.lt.ami.ID || u.target.source != g.lt.source {
		g.ltSeq++
		g.lt = ltVersion{number: g.ltSeq, ami: u.target.ami, source: u.target.source}
	}
	// maxUnavailablePercentage is a percentage of the group's size: its
	// configured desired size (§B updateConfig; rounding in surge.go).
	u.maxUnavailable = nodegroup.MaxUnavailable(g.spec.UpdateConfig, g.spec.Desired)
	u.rec.MaxUnavailable = u.maxUnavailable
	s.log(Event{Reason: ReasonUpdateStarted, Nodegroup: g.spec.Name, Message: fmt.Sprintf(
		"UpdateNodegroupVersion %s InProgress: Kubernetes %s → %s, AMI %s → %s%s, strategy %s, maxUnavailable %d, force %t; %d nodes to replace",
		u.rec.ID, u.rec.FromVersion, u.rec.ToVersion, u.rec.FromAMI, u.rec.ToAMI, ltArrow(u.rec.FromLaunchTemplateVersion, u.rec.ToLaunchTemplateVersion),
		g.spec.UpdateStrategy, u.maxUnavailable, u.rec.Force, len(g.oldMembers()))})
	if g.spec.UpdateStrategy == nodegroup.StrategyMinimal {
		// MINIMAL has no scale-up: "the same, minus the initial desired-count
		// increase" (§B). It "cordons all nodes of the node group in the
		// beginning" — the user guide's newer wording of the minimal
		// strategy (awsdocs/amazon-eks-user-guide#1008, #1013), later than
		// the version §B was read from.
		u.cordonOld()
		u.upgrade()
		return
	}
	u.scaleUp()
}

// ---- scale-up phase ---------------------------------------------------------

// scaleUp (§B scale-up phase, DEFAULT only) raises the Auto Scaling group's
// desired and maximum size by Surge and launches the new nodes "in the same
// Availability Zone as those that are being upgraded": round-robin over the
// zones that hold old nodes, in the group's zone order (two per zone when
// there are three zones and maxUnavailable is at most 6, "up to two
// instances per Availability Zone"). The surge counts the zones the group
// is deployed in, not only those with nodes, as the user guide words it.
func (u *update) scaleUp() {
	s, g := u.s, u.g
	u.enter(PhaseScaleUp)
	surge := nodegroup.Surge(len(g.spec.Zones), u.maxUnavailable)
	u.rec.Surge = surge
	s.log(Event{Reason: ReasonScaled, Nodegroup: g.spec.Name, Message: fmt.Sprintf(
		"Auto Scaling group desired %d → %d, max %d → %d (surge = max(2 × %d AZs, maxUnavailable %d) = %d)",
		g.desired, g.desired+surge, g.max, g.max+surge, len(g.spec.Zones), u.maxUnavailable, surge)})
	g.desired += surge
	g.max += surge
	for _, zone := range nodegroup.SurgeZones(g.instances(nil), g.lt.number, g.spec.Zones, surge) {
		m, err := s.launch(g, zone, "scale-up")
		if err != nil {
			u.nodeCreationFailed(err.Error())
			return
		}
		u.surgeNodes = append(u.surgeNodes, m)
	}
	u.checkScaleUp()
}

// checkScaleUp applies the scale-up success criteria (§B): every new node
// Ready, and "At least one new node is launched in every Availability Zone
// where the node exists"; the EKS labels are on the nodes from their
// registration (asg.go nodeLabels). Then the old nodes are cordoned and
// labelled out of load balancers.
func (u *update) checkScaleUp() {
	if u.finished || u.rec.Phase != PhaseScaleUp {
		return
	}
	for _, m := range u.surgeNodes {
		if u.g.members[m.name] == m && !m.ready {
			return
		}
	}
	for _, zone := range u.g.zonesOf(u.g.oldMembers()) {
		if !u.g.hasReadyNew(zone) {
			u.nodeCreationFailed(fmt.Sprintf("no new node is Ready in %s", zone))
			return
		}
	}
	u.cordonOld()
	u.upgrade()
}

// nodeCreationFailed fails the update with NodeCreationFailure; the AWS
// wording is "Couldn't proceed with upgrade process as new nodes are not
// joining node group".
func (u *update) nodeCreationFailed(cause string) {
	u.fail(Failure{Code: nodegroup.NodeCreationFailure,
		Message: fmt.Sprintf("Couldn't proceed with upgrade process as new nodes are not joining node group %s: %s", u.g.spec.Name, cause)})
}

// cordonOld cordons every node still on an earlier launch template version
// and labels it out of external load balancers (§B scale-up phase).
func (u *update) cordonOld() {
	for _, m := range u.g.oldMembers() {
		if m.registered && !m.leaving {
			u.s.cordon(u.g, m.name, true)
		}
	}
}

// ---- upgrade phase ----------------------------------------------------------

func (u *update) upgrade() {
	u.enter(PhaseUpgrade)
	u.pump()
}

// pump selects old nodes "randomly ..., up to the maximum unavailable" (§B
// upgrade phase step 2; nodegroup.NextToUpgrade) — a node counts from its
// selection until its instance is terminated — and moves to the scale-down
// phase once "there are no nodes in the node group that are deployed with
// the earlier version of the launch template" (step 6). Candidates are in
// name order when the engine's seeded source picks one, so a seed fixes the
// order.
func (u *update) pump() {
	if u.finished || u.rec.Phase != PhaseUpgrade {
		return
	}
	for {
		i, ok := nodegroup.NextToUpgrade(u.g.instances(u.inFlight), u.g.lt.number, len(u.inFlight), u.maxUnavailable, u.s.eng.Rand().IntN)
		if !ok {
			break
		}
		u.replace(u.g.sortedMembers()[i])
	}
	if len(u.inFlight) == 0 && len(u.g.oldMembers()) == 0 {
		u.scaleDown()
	}
}

// replace upgrades one old node: drain (step 3), wait 60 s once it is
// empty (step 4), then ask the Auto Scaling group to terminate it (step 5),
// which replaces it (asg.go terminate).
func (u *update) replace(m *member) {
	s, g := u.s, u.g
	u.inFlight[m.name] = true
	u.rec.MaxConcurrentDisruptions = max(u.rec.MaxConcurrentDisruptions, len(u.inFlight))
	s.log(Event{Reason: ReasonNodeSelected, Nodegroup: g.spec.Name, Node: m.name, Message: fmt.Sprintf(
		"selected node/%s (launch template version %d, AMI %s) for upgrade; %d of at most %d nodes in progress",
		m.name, m.lt, m.ami.ID, len(u.inFlight), u.maxUnavailable)})
	if !m.registered || s.kube.Node(m.name) == nil {
		u.terminateOld(m) // still booting: nothing to drain
		return
	}
	timeout := failDrain
	if u.rec.Force {
		timeout = deletePods
	}
	d := s.drain(g, m.name, nodegroup.UpgradeDrainLimit, timeout, u.noteBlocked, func(r drainResult) {
		delete(u.drains, m.name)
		if r.timedOut {
			u.evictionFailed(m, r)
			return
		}
		u.waits[m.name] = s.eng.After(nodegroup.EmptyWait, func() {
			delete(u.waits, m.name)
			u.terminateOld(m)
		})
	})
	if !d.finished {
		u.drains[m.name] = d
	}
}

func (u *update) terminateOld(m *member) {
	u.s.terminate(u.g, m, true, "UpdateNodegroupVersion "+u.rec.ID, func() {
		delete(u.inFlight, m.name)
		u.rec.Replaced = append(u.rec.Replaced, m.name)
	})
}

// evictionFailed fails the update with PodEvictionFailure, in EKS's words
// ("Reached max retries while trying to evict pods from nodes in node
// group ...", aws/containers-roadmap#1282, where AWS agreed to add the pod
// name), naming the pod and its PDB.
func (u *update) evictionFailed(m *member, r drainResult) {
	f := Failure{Code: nodegroup.PodEvictionFailure, ResourceIDs: []string{m.name}}
	why := ""
	if b := r.blocked; b != nil {
		f.Pod, f.PDB = b.Pod, b.PDB
		why = ": " + b.Message
		if b.PDB != "" {
			why = fmt.Sprintf(", blocked by PodDisruptionBudget %s: %s", b.PDB, b.Message)
		}
	} else if len(r.remaining) > 0 {
		p := r.remaining[0]
		f.Pod = p.Namespace + "/" + p.Name
	}
	f.Message = fmt.Sprintf("Reached max retries while trying to evict pods from nodes in node group %s: pod %s did not leave node %s within %s%s",
		u.g.spec.Name, f.Pod, m.name, nodegroup.UpgradeDrainLimit, why)
	u.fail(f)
}

func (u *update) noteBlocked(b *Blocked) { u.blocked = append(u.blocked, b) }

// ---- scale-down phase -------------------------------------------------------

// scaleDown (§B scale-down phase) "decrements the Auto Scaling group
// maximum size and desired size by one to return to values before the
// update started": one instance at a time, each drained first — PDBs are
// honoured for up to 15 minutes, then the node is terminated regardless
// (§B Other MNG rules). The values before the update are the group's
// scaling config. The twin lets the Auto Scaling group settle (every
// instance Ready) before each decrement, so a booting replacement is never
// the one scaled in. A MINIMAL update never raised the sizes and succeeds
// at once.
func (u *update) scaleDown() {
	if u.finished {
		return
	}
	g := u.g
	if u.rec.Phase != PhaseScaleDown {
		u.enter(PhaseScaleDown)
	}
	if u.scalingIn {
		return
	}
	for _, m := range g.members {
		if !m.leaving && !m.ready {
			return // memberReady comes back
		}
	}
	for g.desired > g.spec.Desired || g.max > g.spec.Max {
		from, fromMax := g.desired, g.max
		g.desired = max(g.desired-1, g.spec.Desired)
		g.max = max(g.max-1, g.spec.Max)
		u.s.log(Event{Reason: ReasonScaled, Nodegroup: g.spec.Name, Message: fmt.Sprintf(
			"Auto Scaling group desired %d → %d, max %d → %d (scale-down phase)", from, g.desired, fromMax, g.max)})
		if g.live() > g.desired {
			u.scaleIn(g.scaleInVictim(u.s))
			return
		}
	}
	u.succeed()
}

// scaleIn drains one instance and terminates it without a replacement.
func (u *update) scaleIn(m *member) {
	s, g := u.s, u.g
	u.scalingIn = true
	finish := func(drainResult) {
		s.terminate(g, m, false, "scale-down phase of "+u.rec.ID, func() { u.scalingIn = false })
	}
	if !m.registered || s.kube.Node(m.name) == nil {
		finish(drainResult{})
		return
	}
	s.drain(g, m.name, nodegroup.UpgradeDrainLimit, proceed, u.noteBlocked, finish)
}

// scaleInVictim is the instance the Auto Scaling group's default
// termination policy removes (nodegroup.ScaleInVictim), nil if none.
func (g *group) scaleInVictim(s *Service) *member {
	i, ok := nodegroup.ScaleInVictim(g.instances(nil), g.spec.Zones, s.eng.Rand().IntN)
	if !ok {
		return nil
	}
	return g.sortedMembers()[i]
}

// instances is the Auto Scaling group as the selection rules see it, in
// name order (sortedMembers' order); selected are the instances an update
// has taken. The slice is the group's own buffer, valid until the next
// call: the upgrade phase asks once per node it selects.
func (g *group) instances(selected map[string]bool) []nodegroup.Instance {
	ms := g.sortedMembers()
	g.view = g.view[:0]
	for _, m := range ms {
		in := nodegroup.Instance{Name: m.name, Zone: m.zone, LaunchTemplateVersion: m.lt, Leaving: m.leaving}
		if len(selected) > 0 {
			in.Selected = selected[m.name]
		}
		g.view = append(g.view, in)
	}
	return g.view
}

// ---- the end ----------------------------------------------------------------

// succeed ends the update: the group reports its new version and AMI.
func (u *update) succeed() {
	s, g := u.s, u.g
	g.version, g.ami = u.version, u.target.ami
	if lt := g.spec.LaunchTemplate; lt != nil {
		lt.Version = u.target.source
		if g.custom() {
			lt.ImageID = u.target.ami.ID
		}
	}
	g.status = StatusActive
	g.health = nil
	u.finish(UpdateSuccessful)
	s.log(Event{Reason: ReasonUpdateSucceeded, Nodegroup: g.spec.Name, Message: fmt.Sprintf(
		"UpdateNodegroupVersion %s Successful after %s: Kubernetes %s, AMI %s; %d nodes replaced, %d launched, surge %d, at most %d in progress at once",
		u.rec.ID, u.rec.FinishedAt.Sub(u.rec.CreatedAt), g.version, g.ami.ID, len(u.rec.Replaced), len(u.rec.Launched), u.rec.Surge, u.rec.MaxConcurrentDisruptions)})
	u.report()
}

// fail ends the update with an error. EKS does not roll back: nodes
// already replaced stay replaced, old nodes stay cordoned, the Auto
// Scaling group keeps its raised size and its new launch template version
// ("leaving the remaining nodes with the old update template and others
// with the new update template", ministryofjustice/cloud-platform#4533),
// and the group keeps reporting its old version. Drains of this update
// stop; terminations already requested complete. A NodeCreationFailure
// also marks the group DEGRADED.
func (u *update) fail(f Failure) {
	if u.finished {
		return
	}
	s, g := u.s, u.g
	for _, name := range sortedKeys(u.drains) {
		u.drains[name].abort()
	}
	for _, name := range sortedKeys(u.waits) {
		u.waits[name].Cancel()
	}
	g.status = StatusActive
	if f.Code == nodegroup.NodeCreationFailure {
		g.status = StatusDegraded
		g.health = append(g.health, f)
	}
	u.rec.Errors = append(u.rec.Errors, f)
	u.finish(UpdateFailed)
	s.log(Event{Type: "Warning", Reason: ReasonUpdateFailed, Nodegroup: g.spec.Name, Node: strings.Join(f.ResourceIDs, ","), Object: f.Pod,
		Message: fmt.Sprintf("UpdateNodegroupVersion %s Failed: Update failed due to [{ErrorCode: %s,ErrorMessage: %s,ResourceIds: [%s]}]",
			u.rec.ID, f.Code, f.Message, strings.Join(f.ResourceIDs, ", "))})
	u.report()
}

func (u *update) finish(status string) {
	u.finished = true
	u.g.update = nil
	u.rec.Status = status
	u.rec.FinishedAt = u.s.eng.Now()
	*u.rec = u.view()
}

func (u *update) report() {
	if u.done != nil {
		u.done(u.view())
	}
}

func (u *update) enter(phase string) {
	u.rec.Phase = phase
	u.rec.Phases = append(u.rec.Phases, PhaseTime{Phase: phase, At: u.s.eng.Now()})
	u.s.log(Event{Reason: ReasonPhase, Nodegroup: u.g.spec.Name, Message: fmt.Sprintf("UpdateNodegroupVersion %s: %s phase", u.rec.ID, phase)})
}

// memberReady and memberGone resume whichever phase waits on instances.
func (u *update) memberReady() {
	switch u.rec.Phase {
	case PhaseScaleUp:
		u.checkScaleUp()
	case PhaseScaleDown:
		u.scaleDown()
	}
}

func (u *update) memberGone() {
	switch u.rec.Phase {
	case PhaseUpgrade:
		u.pump()
	case PhaseScaleDown:
		u.scaleDown()
	}
}

// ---- helpers ----------------------------------------------------------------

// oldMembers are the instances launched from an earlier launch template
// version than the Auto Scaling group's current one, by name.
func (g *group) oldMembers() []*member {
	var out []*member
	for _, m := range g.sortedMembers() {
		if m.lt != g.lt.number {
			out = append(out, m)
		}
	}
	return out
}

// zonesOf lists the zones of some instances, in the group's zone order.
func (g *group) zonesOf(ms []*member) []string {
	var out []string
	for _, z := range g.spec.Zones {
		for _, m := range ms {
			if m.zone == z {
				out = append(out, z)
				break
			}
		}
	}
	return out
}

func (g *group) hasReadyNew(zone string) bool {
	for _, m := range g.members {
		if m.zone == zone && m.lt == g.lt.number && m.ready && !m.leaving {
			return true
		}
	}
	return false
}

// live counts the instances not being terminated.
func (g *group) live() int {
	n := 0
	for _, m := range g.members {
		if !m.leaving {
			n++
		}
	}
	return n
}

func (g *group) releaseVersion() string { return releaseVersionOf(g, g.ami) }

// releaseVersionOf is the release version EKS reports for a group running
// an AMI: none for a custom-AMI group.
func releaseVersionOf(g *group, a catalog.AMI) string {
	if g.custom() {
		return ""
	}
	return nodegroup.ReleaseVersion(a)
}

func updateID(group string, seq int) string {
	h := fnv.New128a()
	fmt.Fprintf(h, "%s/%d", group, seq)
	b := h.Sum(nil)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func ltArrow(from, to string) string {
	if from == "" && to == "" {
		return ""
	}
	return fmt.Sprintf(", launch template version %s → %s", from, to)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
