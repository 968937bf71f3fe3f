package kube

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/eviction"
	workloadrules "github.com/ladder-eks/ladder/internal/rules/workload"
	"github.com/ladder-eks/ladder/internal/sim"
)

type podState struct {
	// What a PDB sync reads (eviction.PodFacts) comes first, on one cache
	// line: the pod, whether it is Ready and being deleted (mirroring its
	// Ready condition and deletion timestamp), and its name and
	// controllerRef as created (neither changes afterwards).
	pod           *corev1.Pod
	ready         bool
	deleting      bool
	hasController bool
	name          string
	controllerUID types.UID

	key string
	seq uint64
	// priority is spec.priority as admitted (it cannot change); pending is
	// true while the pod waits to be scheduled (Cluster.pendingOrder).
	priority int32
	pending  bool
	req      Resources
	owner    *workload
	node     *nodeState
	timers   []*sim.Event
	// unschedulable is true when the last scheduling pass found no node;
	// fitError is its message when the pass had one at hand (else it is
	// worked out on demand).
	unschedulable bool
	fitError      string
	// unschedulableSince is when the pod got PodScheduled=False
	// Unschedulable.
	unschedulableSince time.Time
	// pdbs are the PDBs whose selector picks the pod, sorted by name.
	pdbs []*pdbState
	// hasClaims is true when the pod mounts a PersistentVolumeClaim.
	hasClaims bool
	// rev is the revision of its owner's template the pod was made from
	// (nil for a bare pod); sig numbers its scheduling constraints.
	rev *revision
	sig int
	// asTemplate is true when the pod's spec is its revision's template
	// as written (admission changed nothing; not a DaemonSet pod, whose
	// node affinity names its node).
	asTemplate bool
	// readySince is when the pod last turned Ready; available is true once
	// it has been Ready for its owner's minReadySeconds (available.go).
	readySince time.Time
	available  bool
	// gone is true once the store forgot the pod (removePod): a new pod
	// may take its key, this state never comes back.
	gone bool
	// lost is true when the store forgot the pod and its controller
	// replaces it only now (ownerCount): it went without a deletion first
	// (its node went away, or it was Pending), or it was a StatefulSet's,
	// which creates a pod's replacement once the pod is gone.
	lost bool
	// external is true when spec.schedulerName names another scheduler: the
	// default scheduler leaves the pod Pending until something binds it.
	external bool
	// nominatedNode is the node a preemption made room on for the pod
	// (status.nominatedNodeName), until it is bound or gone.
	nominatedNode *nodeState
}

// createPod stores a new, unscheduled pod made from rev (nil for a bare
// pod). As the API server does, it defaults the pod, runs the Priority
// admission plugin (priority.go; its refusal is the error) and the
// mutating admission hooks (OnAdmit), stores it, and tells OnPodCreated.
func (c *Cluster) createPod(pod *corev1.Pod, owner *workload, rev *revision) (*podState, error) {
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		pod.Spec.TerminationGracePeriodSeconds = &grace
	}
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
	if err := c.admitPriority(pod); err != nil {
		return nil, err
	}
	c.podSeq++
	changed := c.admit(pod)
	pod.CreationTimestamp = c.now()
	pod.UID = c.newUID("Pod")
	pod.ResourceVersion = "1"
	// As the API server does on create (BeforeCreate, the pod strategy's
	// PrepareForCreate): no deletion timestamp, a fresh status.
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = nil, nil
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	ps := &podState{pod: pod, key: key(pod.Namespace, pod.Name), seq: c.podSeq, owner: owner, rev: rev, name: pod.Name, priority: podPriority(pod),
		hasClaims: len(podClaims(pod)) > 0, external: pod.Spec.SchedulerName != corev1.DefaultSchedulerName}
	if ref := eviction.ControllerOf(pod); ref != nil {
		ps.controllerUID, ps.hasController = ref.UID, true
	}
	switch {
	case rev != nil && !changed:
		// Pods of one template request the same (a DaemonSet pod differs
		// from its template only in its node affinity and tolerations):
		// computed once per revision.
		ps.req = rev.requests(pod)
	default:
		ps.req = PodRequests(pod)
	}
	if rev != nil {
		ps.asTemplate = !changed && owner.kind != "DaemonSet"
		ps.sig = rev.sig
		if changed && owner.kind != "DaemonSet" && !sameSchedulingConstraints(&pod.Spec, &rev.template.Spec) {
			ps.sig = c.signature(&pod.Spec)
		}
		rev.pods++
	}
	c.pods[ps.key] = ps
	c.byPod[pod] = ps
	c.recount(ps, catGone, catNotReady)
	c.indexPodInPDBs(ps)
	if owner != nil {
		owner.pods.add(ps)
	}
	if ns := c.presetNode(pod); ns != nil {
		c.bind(ps, ns)
	} else {
		c.addPending(ps)
		c.scheduler.Fire()
	}
	c.podCreated(ps)
	return ps, nil
}

// presetNode is the node a new pod names in spec.nodeName, if it exists:
// such a pod skips scheduling.
func (c *Cluster) presetNode(pod *corev1.Pod) *nodeState {
	if pod.Spec.NodeName == "" {
		return nil
	}
	return c.nodes[pod.Spec.NodeName]
}

// bind places a pod on a node and starts it.
func (c *Cluster) bind(ps *podState, ns *nodeState) {
	c.leavePending(ps)
	c.clearNomination(ps)
	c.forgetNoVictims(ps)
	c.countBound(ps.priority, 1)
	ps.node = ns
	c.endUnschedulable(ps)
	ps.unschedulable, ps.fitError = false, ""
	ps.pod.Spec.NodeName = ns.node.Name
	setPodCondition(ps.pod, corev1.PodScheduled, corev1.ConditionTrue, "", "", c.now())
	ns.pods.add(ps)
	c.setUsed(ns, ns.used.Add(ps.req))
	if movable(ps) {
		ns.active++
		c.idleChanged(ns)
	}
	ns.lastPodEvent = c.eng.Now()
	c.bindVolumes(ps, ns)
	c.podChanged(ns.node.Name)
	c.podUpdated(ps)
	c.startPod(ps)
}

// startPod runs the pod's containers: after its volumes attach and its
// containers start, it is Running; after its readiness delay, Ready.
func (c *Cluster) startPod(ps *podState) {
	attachAt, ok := c.volumesReadyAt(ps)
	if !ok {
		return // a volume is still attached elsewhere; releaseVolumes starts the pod
	}
	startup, ready := c.startDelays(ps)
	// The kubelet reports a pod it has admitted as not ready until its
	// containers are (Ready=False, reason ContainersNotReady).
	setPodCondition(ps.pod, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", "", c.now())
	setPodCondition(ps.pod, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", "", c.now())
	if c.holdStarts {
		// The pod will be started at once (StartPodsNow); the kubelet's
		// timers are set only for a pod left over when the hold ends.
		c.held = append(c.held, heldStart{ps, attachAt})
		return
	}
	c.startTimers(ps, attachAt, startup, ready)
}

// startTimers schedules a bound pod's Running and Ready.
func (c *Cluster) startTimers(ps *podState, attachAt time.Time, startup, ready time.Duration) {
	running := attachAt.Add(startup)
	readyAt := attachAt.Add(ready)
	ps.timers = append(ps.timers,
		c.eng.At(running, func() {
			ps.pod.Status.Phase = corev1.PodRunning
			ps.pod.Status.StartTime = ptrTime(c.now())
			setPodCondition(ps.pod, corev1.PodInitialized, corev1.ConditionTrue, "", "", c.now())
		}),
		c.eng.At(readyAt, func() { c.setPodReady(ps, true, c.eng.Now()) }),
	)
}

// startDelays is how long after its volumes are ready a pod runs, and is
// Ready.
func (c *Cluster) startDelays(ps *podState) (startup, ready time.Duration) {
	startup = c.opts.Timings.PodStartup
	ready = startup
	if d, ok := startupOverride(ps.pod); ok {
		startup, ready = d, d
	} else if p := readinessProbe(ps.pod); p != nil {
		ready += time.Duration(p.InitialDelaySeconds) * time.Second
	}
	return startup, ready
}

// heldStart is a pod bound while starts were held, and when its volumes
// were ready.
type heldStart struct {
	ps       *podState
	attachAt time.Time
}

// HoldPodStarts is for building a scenario's starting state: pods bound
// from now on get no kubelet timers, since StartPodsNow will start them;
// ReleasePodStarts sets the timers of any it did not start. The result is
// the same as starting them normally and cancelling the timers, without
// queueing hundreds of thousands of cancelled events.
func (c *Cluster) HoldPodStarts() { c.holdStarts = true }

// ReleasePodStarts ends HoldPodStarts.
func (c *Cluster) ReleasePodStarts() {
	c.holdStarts = false
	for _, h := range c.held {
		if ps := h.ps; !ps.gone && !ps.deleting && ps.pod.Status.Phase != corev1.PodRunning {
			startup, ready := c.startDelays(ps)
			c.startTimers(ps, h.attachAt, startup, ready)
		}
	}
	c.held = nil
}

// startImmediately makes a just-bound pod Running and Ready now, for the
// starting state of a scenario (a cluster that has been running for hours).
func (c *Cluster) startImmediately(ps *podState, since time.Time) {
	for _, t := range ps.timers {
		t.Cancel()
	}
	ps.timers = nil
	ps.pod.CreationTimestamp = metav1.NewTime(since)
	ps.pod.Status.Phase = corev1.PodRunning
	ps.pod.Status.StartTime = ptrTime(metav1.NewTime(since))
	setPodCondition(ps.pod, corev1.PodInitialized, corev1.ConditionTrue, "", "", metav1.NewTime(since))
	c.setPodReady(ps, true, since)
}

// setPodReady sets the pod's Ready condition; since is when it turned
// Ready, which starts its minReadySeconds.
func (c *Cluster) setPodReady(ps *podState, ready bool, since time.Time) {
	if ps.ready == ready {
		return
	}
	before := category(ps)
	ps.ready = ready
	c.recount(ps, before, category(ps))
	if ready {
		ps.readySince = since
		c.updateAvailability(ps)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	setPodCondition(ps.pod, corev1.ContainersReady, status, "", "", c.now())
	setPodCondition(ps.pod, corev1.PodReady, status, "", "", c.now())
	c.podUpdated(ps)
	c.podReadinessChanged(ps)
}

// podReadinessChanged updates availability and the PDBs that cover the pod.
func (c *Cluster) podReadinessChanged(ps *podState) {
	c.markPDBsDirty(ps)
	if ps.owner != nil {
		c.observeReady(ps.owner)
		ps.owner.kick()
	}
}

// deletePod starts a graceful deletion: the pod stops serving at once and
// exits after its shutdown time, capped by grace seconds.
func (c *Cluster) deletePod(ps *podState, grace int64) {
	if ps.deleting {
		// A shorter grace period shortens a deletion already in progress.
		if ps.pod.DeletionGracePeriodSeconds != nil && grace >= *ps.pod.DeletionGracePeriodSeconds {
			return
		}
	}
	wasReady := ps.ready && !ps.deleting
	before := category(ps)
	if ps.node != nil && movable(ps) {
		ps.node.active--
		c.idleChanged(ps.node)
	}
	ps.deleting = true
	c.recount(ps, before, category(ps))
	now := c.now()
	ps.pod.DeletionTimestamp = &now
	ps.pod.DeletionGracePeriodSeconds = &grace
	for _, t := range ps.timers {
		t.Cancel()
	}
	ps.timers = nil
	if ps.node == nil {
		c.removePod(ps)
		return
	}
	c.podUpdated(ps)
	if wasReady {
		c.podReadinessChanged(ps)
	}
	if ps.owner != nil {
		if ps.owner.kind == "DaemonSet" {
			c.dsDirty[ps.node.node.Name] = true
		}
		ps.owner.kick()
	}
	exit := c.opts.Timings.PodShutdown
	if g := time.Duration(grace) * time.Second; g < exit {
		exit = g
	}
	ps.timers = append(ps.timers, c.eng.After(exit, func() { c.removePod(ps) }))
}

// endUnschedulable records, once tracking has started, how long a pod that
// is bound or gone was unschedulable, as its owner's longest.
func (c *Cluster) endUnschedulable(ps *podState) {
	if !ps.unschedulable || ps.owner == nil || !c.tracking {
		return
	}
	if d := c.unschedulableFor(ps); d > ps.owner.avail.unschedulable {
		ps.owner.avail.unschedulable = d
	}
}

// unschedulableFor is how long a pod has been unschedulable since tracking
// started.
func (c *Cluster) unschedulableFor(ps *podState) time.Duration {
	since := ps.unschedulableSince
	if since.Before(c.trackedSince) {
		since = c.trackedSince
	}
	return c.eng.Now().Sub(since)
}

// removePod removes a pod from the store, freeing its node's resources.
func (c *Cluster) removePod(ps *podState) {
	if ps.gone {
		return
	}
	ps.gone = true
	for _, t := range ps.timers {
		t.Cancel()
	}
	ps.timers = nil
	wasReady := ps.ready && !ps.deleting
	wasDeleting := ps.deleting
	ps.lost = !wasDeleting || (ps.owner != nil && ps.owner.kind == "StatefulSet")
	c.recount(ps, category(ps), catGone)
	ps.deleting = true
	ps.ready = false
	if ps.rev != nil {
		ps.rev.pods--
	}
	delete(c.pods, ps.key)
	delete(c.byPod, ps.pod)
	c.leavePending(ps)
	c.clearNomination(ps)
	c.forgetNoVictims(ps)
	c.endUnschedulable(ps)
	ps.unschedulable = false
	if ns := ps.node; ns != nil {
		c.countBound(ps.priority, -1)
		if !wasDeleting && !isDaemonSetPod(ps.pod) {
			ns.active--
			c.idleChanged(ns)
		}
		ns.pods.remove(ps)
		c.capacityGen++
		c.setUsed(ns, ns.used.Sub(ps.req))
		ns.lastPodEvent = c.eng.Now()
		c.releaseVolumes(ps)
		c.podChanged(ns.node.Name)
	}
	if ps.owner != nil {
		if ps.owner.kind == "DaemonSet" && ps.node != nil {
			c.dsDirty[ps.node.node.Name] = true
		}
		ps.owner.pods.remove(ps)
		if wasReady {
			c.observeReady(ps.owner)
		}
		ps.owner.kick()
	}
	c.unindexPod(ps)
	c.scheduler.Fire()
	c.podDeleted(ps)
}

func (c *Cluster) podChanged(node string) {
	for _, h := range c.podHook {
		h(node)
	}
}

// DeletePod deletes a pod the way DELETE /pods/NAME does, without the
// Eviction API: PDBs are not consulted. grace nil means the pod's own
// terminationGracePeriodSeconds. by says who deletes it (e.g. "Karpenter:
// terminationGracePeriod of nodeclaim default-abcde"): when the pod was
// healthy under a PDB that allowed no disruption, the deletion is recorded
// as a PDB breach by that name (breach.go).
func (c *Cluster) DeletePod(namespace, name string, grace *int64, by string) error {
	ps, ok := c.pods[string(c.podKey(namespace, name))]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	c.takeDown(ps, DropDeleted, by)
	g := *ps.pod.Spec.TerminationGracePeriodSeconds
	if grace != nil {
		g = *grace
	}
	c.deletePod(ps, g)
	return nil
}

// Pod returns a pod, or nil.
func (c *Cluster) Pod(namespace, name string) *corev1.Pod {
	if ps, ok := c.pods[string(c.podKey(namespace, name))]; ok {
		return ps.pod
	}
	return nil
}

// PodsOnNode returns the pods bound to a node, terminating ones included,
// sorted by namespace/name.
func (c *Cluster) PodsOnNode(node string) []*corev1.Pod {
	ns, ok := c.nodes[node]
	if !ok {
		return nil
	}
	out := make([]*corev1.Pod, 0, ns.pods.len())
	for _, ps := range ns.pods.list() {
		out = append(out, ps.pod)
	}
	return out
}

// Pods returns every pod, sorted by namespace/name.
func (c *Cluster) Pods() []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(c.pods))
	for _, k := range sortedKeys(c.pods) {
		out = append(out, c.pods[k].pod)
	}
	return out
}

// PendingPods returns pods not bound to a node and not being deleted, in
// scheduling order.
func (c *Cluster) PendingPods() []*corev1.Pod {
	ps := c.pendingInOrder()
	out := make([]*corev1.Pod, len(ps))
	for i, p := range ps {
		out[i] = p.pod
	}
	return out
}

// Unschedulable returns why a pending pod fits no node, as kube-scheduler's
// FitError says it ("0/3 nodes are available: ..."), or "".
func (c *Cluster) Unschedulable(namespace, name string) string {
	ps, ok := c.pods[string(c.podKey(namespace, name))]
	if !ok || !ps.unschedulable {
		return ""
	}
	if ps.fitError != "" {
		return ps.fitError
	}
	return c.fitErrorOf(ps)
}

// PodOwner returns "Kind/name" of the workload that owns a pod, or "".
func (c *Cluster) PodOwner(namespace, name string) (kind, owner string) {
	if ps, ok := c.pods[string(c.podKey(namespace, name))]; ok && ps.owner != nil {
		return ps.owner.kind, ps.owner.name
	}
	return "", ""
}

func (c *Cluster) pendingInOrder() []*podState {
	// Pods that left since are dropped here, in a new slice (one handed
	// out before is never changed).
	out := make([]*podState, 0, c.pending)
	for _, ps := range c.pendingOrder {
		if ps.pending {
			out = append(out, ps)
		}
	}
	if !c.pendingOrdered {
		slices.SortFunc(out, func(a, b *podState) int {
			if a.priority != b.priority {
				return cmp.Compare(b.priority, a.priority)
			}
			return cmp.Compare(a.seq, b.seq)
		})
	}
	c.pendingOrder, c.pendingOrdered = out, true
	return out
}

// addPending queues a pod for scheduling. The scheduling order (priority,
// then creation) is kept as pods come: a new pod usually sorts last; any
// other makes the next pendingInOrder sort again.
//
// A pod is queued once: it is pending from its creation until it is bound
// or removed, never again.
func (c *Cluster) addPending(ps *podState) {
	ps.pending = true
	c.pending++
	if n := len(c.pendingOrder); c.pendingOrdered && n > 0 {
		last := c.pendingOrder[n-1]
		if last.priority < ps.priority || (last.priority == ps.priority && last.seq > ps.seq) {
			c.pendingOrdered = false
		}
	}
	c.pendingOrder = append(c.pendingOrder, ps)
}

// leavePending takes a pod that was bound or removed out of the queue.
func (c *Cluster) leavePending(ps *podState) {
	if ps.pending {
		ps.pending = false
		c.pending--
	}
}

func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

func setPodCondition(p *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus, reason, msg string, now metav1.Time) {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			if p.Status.Conditions[i].Status != s {
				p.Status.Conditions[i].LastTransitionTime = now
			}
			p.Status.Conditions[i].Status = s
			p.Status.Conditions[i].Reason = reason
			p.Status.Conditions[i].Message = msg
			return
		}
	}
	if p.Status.Conditions == nil {
		// A running pod has four: PodScheduled, Initialized, ContainersReady,
		// Ready; an evicted one a fifth, DisruptionTarget.
		p.Status.Conditions = make([]corev1.PodCondition, 0, 5)
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: now})
}

func readinessProbe(p *corev1.Pod) *corev1.Probe {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].ReadinessProbe != nil {
			return p.Spec.Containers[i].ReadinessProbe
		}
	}
	return nil
}

func startupOverride(p *corev1.Pod) (time.Duration, bool) {
	v, ok := p.Annotations[workloadrules.StartupAnnotation]
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

func isDaemonSetPod(p *corev1.Pod) bool { return drain.IsDaemonSetPod(p) }

// Pod categories for the settled counters.
const (
	catGone = iota
	catNotReady
	catReady
	catTerminating
)

func category(ps *podState) int {
	switch {
	case ps.deleting:
		return catTerminating
	case ps.ready:
		return catReady
	}
	return catNotReady
}

// recount moves a pod between categories, keeping the cluster's counters
// and its workload's ready count.
func (c *Cluster) recount(ps *podState, from, to int) {
	c.count(from, to)
	if (from == catReady) != (to == catReady) {
		d := int32(1)
		if from == catReady {
			d = -1
		}
		for _, st := range ps.pdbs {
			st.healthy += d
		}
	}
	if ps.owner != nil {
		if from == catReady {
			ps.owner.ready--
		}
		if to == catReady {
			ps.owner.ready++
		}
	}
	if r := ps.rev; r != nil {
		if from == catReady {
			r.ready--
		}
		if to == catReady {
			r.ready++
		}
		if from == catReady || from == catNotReady {
			r.active--
		}
		if to == catReady || to == catNotReady {
			r.active++
		}
	}
	if from == catReady && to != catReady {
		c.clearAvailability(ps)
	}
}

func (c *Cluster) count(from, to int) {
	switch from {
	case catNotReady:
		c.notReady--
	case catTerminating:
		c.terminating--
	}
	switch to {
	case catNotReady:
		c.notReady++
	case catTerminating:
		c.terminating++
	}
}

// Quiet reports, in constant time, whether every pod is bound and Ready,
// none is terminating, and no workload is missing pods the API server
// refused.
func (c *Cluster) Quiet() bool {
	return c.pending == 0 && c.notReady == 0 && c.terminating == 0 && c.refused == 0
}

// NotReadyPods lists live pods that are not Ready, sorted.
func (c *Cluster) NotReadyPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, k := range sortedKeys(c.pods) {
		if ps := c.pods[k]; !ps.ready && !ps.deleting {
			out = append(out, ps.pod)
		}
	}
	return out
}

// StartPodsNow makes every pod bound to a node Running and Ready at once,
// created at since: the starting state of a scenario, whose cluster has been
// running for hours.
func (c *Cluster) StartPodsNow(node string, since time.Time) {
	ns, ok := c.nodes[node]
	if !ok {
		return
	}
	for _, ps := range ns.pods.list() {
		if !ps.deleting {
			c.startImmediately(ps, since)
		}
	}
}

// movable reports whether a pod counts in its node's active pods: the pods
// a drain would have to move, drain.Select with SkipTerminating and
// SkipDaemonSet, read from the pod's state here because it runs per pod on
// every placement.
func movable(ps *podState) bool { return !ps.deleting && !isDaemonSetPod(ps.pod) }
