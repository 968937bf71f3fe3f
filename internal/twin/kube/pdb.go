package kube

import (
	"iter"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ladder-eks/ladder/internal/eviction"
)

// pdbState is a PDB and the pods its selector picks. Its status is
// recomputed by the disruption controller's rules (internal/eviction) when a
// selected pod changes; the twin's controller is instantaneous, so
// observedGeneration always equals generation.
type pdbState struct {
	pdb   *policyv1.PodDisruptionBudget
	sel   labels.Selector // nil when the selector matches nothing
	pods  podSet
	dirty bool
	// recheck is when an entry of status.disruptedPods expires (the
	// controller's 2-minute DeletionTimeout), forcing a recomputation.
	recheck *time.Time
	// What a sync reads of the pods, counted as they join, leave and turn
	// Ready or terminating (eviction.PodCounts): the Ready pods not being
	// deleted, the pods per controllerRef with the workload whose scale
	// counts for them, and the pods whose controllerRef has no workload
	// here (a sync error, worded by the per-pod sync).
	healthy    int32
	owners     []ownerCount
	unresolved int32
	// c is the cluster, told when the PDB's status may have changed while
	// its history is recorded (hist, pdbhistory.go).
	c       *Cluster
	hist    *pdbHistory
	touched bool
}

// ownerCount is how many of a PDB's pods have one controllerRef UID, and
// the workload the disruption controller's scale lookup finds for them.
//
// An entry whose pods were all lost at once — their node went away with
// them, the pod garbage collector removed them, or they were a
// StatefulSet's, which replaces a pod only once it is gone, evicted or
// not — stays, with no pod, while its workload still wants replicas and
// can create them (awaiting): the disruption controller lists the
// controller's replacements the moment the ReplicaSet or StatefulSet
// controller creates them (milliseconds later), so the controller keeps
// counting in expectedPods. The twin removes a
// node's pods one by one before any controller runs; without this a PDB
// spanning several controllers would lose a controller's scale mid-removal
// and its floor would drop with it (a budget "growing" while its pods go).
// An awaiting entry stands for one replacement pod among the selected
// pods (status.expectedPods of an integer minAvailable); it ends when a pod
// of its workload joins the PDB, or the workload no longer wants pods.
type ownerCount struct {
	controller types.UID
	pods       int32
	owner      *workload
	awaiting   bool
}

// counts reports whether the entry counts for the PDB: it has pods, or it
// awaits its workload's replacements.
func (o *ownerCount) counts() bool {
	return o.pods > 0 || (o.awaiting && o.owner.replicas > 0 && !o.owner.refused)
}

// markDirty flags the PDB for a status recomputation and, while its
// history is recorded, for a sample once the event is over.
func (st *pdbState) markDirty() {
	st.dirty = true
	if st.hist != nil && !st.touched {
		st.touched = true
		st.c.touched = append(st.c.touched, st)
	}
}

// join adds a pod to the PDB's pods and counters; leave takes it out.
func (st *pdbState) join(ps *podState) {
	st.pods.add(ps)
	st.markDirty()
	if st.hist != nil {
		st.hist.noteWorkload(ps)
	}
	st.count(ps, 1)
}

func (st *pdbState) leave(ps *podState) {
	st.pods.remove(ps)
	st.markDirty()
	st.count(ps, -1)
}

func (st *pdbState) count(ps *podState, d int32) {
	if category(ps) == catReady {
		st.healthy += d
	}
	if !ps.hasController {
		return
	}
	// A pod whose controller the twin does not know, or a DaemonSet's
	// (no scale subresource: eviction.ScaleError), is synced pod by pod,
	// which words the controller's error.
	if ps.owner == nil || ps.owner.kind == "Pod" || ps.owner.kind == "DaemonSet" {
		st.unresolved += d
		return
	}
	if d > 0 {
		// A pod of a workload whose entry awaited replacements: the
		// replacement is here (under another ReplicaSet, for a Deployment
		// that rolled meanwhile).
		st.owners = slices.DeleteFunc(st.owners, func(o ownerCount) bool {
			return o.pods == 0 && o.owner == ps.owner && o.controller != ps.controllerUID
		})
	}
	for i := range st.owners {
		if o := &st.owners[i]; o.controller == ps.controllerUID {
			o.pods += d
			o.awaiting = o.pods == 0 && ps.lost
			if o.pods == 0 && !o.awaiting {
				st.owners = slices.Delete(st.owners, i, i+1)
			}
			return
		}
	}
	st.owners = append(st.owners, ownerCount{controller: ps.controllerUID, pods: d, owner: ps.owner})
}

// scale is the sum of spec.replicas over the distinct workloads whose
// scale counts for the PDB's pods (eviction's expectedScale).
func (st *pdbState) scale() int32 {
	var sum int32
	for i := range st.owners {
		o := &st.owners[i]
		if o.counts() && !slices.ContainsFunc(st.owners[:i], func(p ownerCount) bool { return p.owner.uid == o.owner.uid && p.counts() }) {
			sum += o.owner.replicas
		}
	}
	return sum
}

// awaited is the number of owner entries awaiting replacements: each
// stands for one replacement pod among the selected.
func (st *pdbState) awaited() int32 {
	var n int32
	for i := range st.owners {
		if o := &st.owners[i]; o.pods == 0 && o.counts() {
			n++
		}
	}
	return n
}

func (c *Cluster) applyPDB(pdb *policyv1.PodDisruptionBudget) {
	k := key(pdb.Namespace, pdb.Name)
	st, ok := c.pdbs[k]
	if ok {
		pdb.Generation = st.pdb.Generation + 1
		pdb.UID = st.pdb.UID
		pdb.Status = st.pdb.Status
	} else {
		pdb.Generation = 1
		pdb.UID = c.newUID("PodDisruptionBudget")
		pdb.CreationTimestamp = c.now()
	}
	st = &pdbState{pdb: pdb, pods: newPodSet(), dirty: true, c: c}
	if ok && c.tracking && c.pdbs[k].hist != nil {
		st.hist = c.pdbs[k].hist
		st.hist.Spec = pdb.Spec
		st.markDirty()
	} else if c.tracking {
		st.hist = newPDBHistory(pdb)
		c.histOrder = append(c.histOrder, st.hist)
		st.markDirty()
	}
	c.pdbGen++
	// semantics.md §D.1: an invalid or nil selector matches nothing; an
	// empty one matches every pod of the namespace.
	if pdb.Spec.Selector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			st.sel = sel
		}
	}
	if old, ok := c.pdbs[k]; ok {
		for _, ps := range old.pods.all() {
			ps.pdbs = without(ps.pdbs, old)
		}
		ik := pdbIndexKey(old)
		c.pdbsByIndex[ik] = without(c.pdbsByIndex[ik], old)
	}
	c.pdbs[k] = st
	ik := pdbIndexKey(st)
	c.pdbsByIndex[ik] = append(c.pdbsByIndex[ik], st)
	if st.sel != nil {
		for _, ps := range c.pods {
			if ps.pod.Namespace == pdb.Namespace && st.sel.Matches(labels.Set(ps.pod.Labels)) {
				st.join(ps)
				ps.pdbs = sortedPDBs(append(ps.pdbs, st))
			}
		}
	}
}

// pdbIndex is a namespace and a label (key and value; both empty for the
// PDBs without matchLabels).
type pdbIndex struct{ namespace, key, value string }

// pdbIndexKey is where a PDB is filed in Cluster.pdbsByIndex: under its
// namespace and the first of its selector's matchLabels (a pod without
// that label cannot match it), else under its namespace alone.
func pdbIndexKey(st *pdbState) pdbIndex {
	ns := st.pdb.Namespace
	if st.pdb.Spec.Selector == nil || len(st.pdb.Spec.Selector.MatchLabels) == 0 {
		return pdbIndex{namespace: ns}
	}
	first := ""
	for k := range st.pdb.Spec.Selector.MatchLabels {
		if first == "" || k < first {
			first = k
		}
	}
	return pdbIndex{ns, first, st.pdb.Spec.Selector.MatchLabels[first]}
}

// indexPodInPDBs links a new pod and the PDBs that select it: those filed
// under one of its labels, and those without matchLabels.
func (c *Cluster) indexPodInPDBs(ps *podState) {
	// A Deployment's pods of one ReplicaSet carry the same labels (the
	// template's and its pod-template-hash) unless admission changed them:
	// they match the same PDBs, found once per ReplicaSet until a PDB is
	// added or changed.
	rev := ps.rev
	cache := rev != nil && ps.asTemplate && ps.owner.kind == "Deployment"
	if cache && rev.pdbGen == c.pdbGen {
		for _, st := range rev.pdbs {
			st.join(ps)
		}
		ps.pdbs = slices.Clone(rev.pdbs)
		return
	}
	defer func() {
		if cache {
			rev.pdbs, rev.pdbGen = slices.Clone(ps.pdbs), c.pdbGen
		}
	}()
	ns := ps.pod.Namespace
	set := labels.Set(ps.pod.Labels)
	link := func(list []*pdbState) {
		for _, st := range list {
			if st.sel != nil && st.sel.Matches(set) {
				st.join(ps)
				ps.pdbs = append(ps.pdbs, st)
			}
		}
	}
	link(c.pdbsByIndex[pdbIndex{namespace: ns}])
	for k, v := range ps.pod.Labels {
		link(c.pdbsByIndex[pdbIndex{ns, k, v}])
	}
	ps.pdbs = sortedPDBs(ps.pdbs)
}

func (c *Cluster) unindexPod(ps *podState) {
	for _, st := range ps.pdbs {
		st.leave(ps)
	}
}

// markPDBsDirty flags the PDBs covering a pod for a status recomputation.
func (c *Cluster) markPDBsDirty(ps *podState) {
	for _, st := range ps.pdbs {
		st.markDirty()
	}
}

func without(list []*pdbState, st *pdbState) []*pdbState {
	out := list[:0]
	for _, x := range list {
		if x != st {
			out = append(out, x)
		}
	}
	return out
}

func sortedPDBs(list []*pdbState) []*pdbState {
	sort.Slice(list, func(i, j int) bool { return list[i].pdb.Name < list[j].pdb.Name })
	return list
}

// sync recomputes a PDB's status when something it depends on changed, or
// when DisruptedPods entries may have expired.
func (c *Cluster) sync(st *pdbState) *policyv1.PodDisruptionBudget {
	now := c.eng.Now()
	expired := st.recheck != nil && !now.Before(*st.recheck)
	if !st.dirty && !expired && st.pdb.Status.ObservedGeneration == st.pdb.Generation {
		return st.pdb
	}
	var res eviction.SyncResult
	if st.sel != nil && st.unresolved == 0 {
		res = c.syncByCounts(st, now)
	} else {
		res = c.syncByPods(st, now)
	}
	st.pdb.Status = res.Status
	st.recheck = res.RecheckAt
	st.dirty = false
	if st.hist != nil {
		st.hist.sample(now, st.pdb.Status, res.SyncError, st.healthy)
	}
	return st.pdb
}

// syncByCounts is the disruption controller's sync (§D.2) over the
// counters the PDB keeps, when every controllerRef resolves; it gives what
// syncByPods gives (TestPDBCountersAgreeWithPods).
func (c *Cluster) syncByCounts(st *pdbState, now time.Time) eviction.SyncResult {
	return eviction.SyncCounts(st.pdb, eviction.PodCounts{
		Selected: int32(st.pods.len()) + st.awaited(), Healthy: st.healthy, Scale: st.scale(),
		Lookup: func(name string) (present, ready bool) {
			ps := c.pods[string(c.podKey(st.pdb.Namespace, name))]
			if ps == nil || ps.deleting || !slices.Contains(ps.pdbs, st) {
				return false, false
			}
			return true, ps.ready
		},
	}, now)
}

// syncByPods is the sync reading every selected pod. The status does not
// depend on the pods' order, only a sync error's message does (it names the
// first pod whose controller is missing): the pods are handed over unsorted,
// and in key order only to word an error. Their facts come from the pod
// index (podState mirrors the Ready condition and the deletion timestamp,
// and keeps the name and controllerRef), in a buffer reused from sync to
// sync.
func (c *Cluster) syncByPods(st *pdbState, now time.Time) eviction.SyncResult {
	facts := c.syncFacts[:0]
	add := func(ps *podState) { facts = append(facts, ps.facts()) }
	for _, ps := range st.pods.all() {
		add(ps)
	}
	// The replacements the owners awaiting them stand for (ownerCount):
	// selected, not healthy, with their controller's scale.
	var awaiting map[*corev1.Pod]*workload
	addAwaiting := func() {
		for i := range st.owners {
			if o := &st.owners[i]; o.pods == 0 && o.counts() {
				if awaiting == nil {
					awaiting = map[*corev1.Pod]*workload{}
				}
				p := &corev1.Pod{}
				awaiting[p] = o.owner
				facts = append(facts, eviction.PodFacts{Pod: p, ControllerUID: o.controller, HasController: true,
					ControllerAPIVersion: "apps/v1", ControllerKind: o.owner.kind, Deleting: true})
			}
		}
	}
	addAwaiting()
	defer func() { c.syncFacts = facts[:0] }()
	// The disruption controller's scale lookup: the Deployment (not the
	// ReplicaSet) or StatefulSet and its spec.replicas.
	scale := func(pod *corev1.Pod) (types.UID, int32, bool) {
		if w := awaiting[pod]; w != nil {
			return w.uid, w.replicas, true
		}
		ps := c.byPod[pod]
		if ps == nil || ps.owner == nil || ps.owner.kind == "Pod" {
			return "", 0, false
		}
		return ps.owner.uid, ps.owner.replicas, true
	}
	if st.sel == nil {
		// A nil or invalid selector: nothing, or fail-safe.
		pods := make([]*corev1.Pod, len(facts))
		for i := range facts {
			pods[i] = facts[i].Pod
		}
		return eviction.Sync(st.pdb, pods, scale, now)
	}
	res := eviction.SyncFacts(st.pdb, facts, scale, now) // st.pods is the selector's index
	if res.SyncError != nil {
		facts = facts[:0]
		for _, ps := range st.pods.list() {
			add(ps)
		}
		addAwaiting()
		res = eviction.SyncFacts(st.pdb, facts, scale, now)
	}
	return res
}

func (c *Cluster) pdbsFor(ps *podState) []*pdbState { return ps.pdbs }

// facts is what a PDB sync reads of the pod (eviction.PodFacts), from the
// pod index but for the controllerRef's kind, read off the pod.
func (ps *podState) facts() eviction.PodFacts {
	f := eviction.PodFacts{Pod: ps.pod, Name: ps.name, ControllerUID: ps.controllerUID,
		HasController: ps.hasController, Deleting: ps.deleting, Ready: ps.ready}
	if ps.hasController {
		if ref := eviction.ControllerOf(ps.pod); ref != nil {
			f.ControllerAPIVersion, f.ControllerKind = ref.APIVersion, ref.Kind
		}
	}
	return f
}

// PDBs returns the PDBs of a namespace ("" for all) with current status,
// sorted by namespace/name.
func (c *Cluster) PDBs(namespace string) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, k := range sortedKeys(c.pdbs) {
		if st := c.pdbs[k]; namespace == "" || st.pdb.Namespace == namespace {
			out = append(out, c.sync(st))
		}
	}
	return out
}

// PDBsForPod returns the PDBs that select a pod, with current status.
func (c *Cluster) PDBsForPod(namespace, name string) []*policyv1.PodDisruptionBudget {
	ps, ok := c.pods[string(c.podKey(namespace, name))]
	if !ok {
		return nil
	}
	var out []*policyv1.PodDisruptionBudget
	for _, st := range c.pdbsFor(ps) {
		out = append(out, c.sync(st))
	}
	return out
}

// PodOnNode is one of a node's pods as NodePods hands it out, with the
// PDBs that select it.
type PodOnNode struct {
	c  *Cluster
	ps *podState
}

// Pod is the pod object.
func (p PodOnNode) Pod() *corev1.Pod { return p.ps.pod }

// PDBs is how many PDBs select the pod.
func (p PodOnNode) PDBs() int { return len(p.ps.pdbs) }

// PDB is the pod's i-th PDB, in PDBsOf's order, its status synced as
// PDBsOf gives it.
func (p PodOnNode) PDB(i int) *policyv1.PodDisruptionBudget { return p.c.sync(p.ps.pdbs[i]) }

// NodePods yields a node's pods in PodsOnNode's order, each with its PDBs:
// a controller that checks every pod of many nodes (Karpenter's candidate
// checks) reads them without a lookup per pod. The cluster must not change
// while the pods are walked.
func (c *Cluster) NodePods(node string) iter.Seq[PodOnNode] {
	return func(yield func(PodOnNode) bool) {
		ns, ok := c.nodes[node]
		if !ok {
			return
		}
		for _, ps := range ns.pods.list() {
			if !yield(PodOnNode{c, ps}) {
				return
			}
		}
	}
}

// PDBsOf is PDBsForPod for a pod object the store handed out (PodsOnNode,
// Pods), found without building its key.
func (c *Cluster) PDBsOf(pod *corev1.Pod) []*policyv1.PodDisruptionBudget {
	ps, ok := c.byPod[pod]
	if !ok {
		return c.PDBsForPod(pod.Namespace, pod.Name)
	}
	if len(ps.pdbs) == 0 {
		return nil
	}
	out := make([]*policyv1.PodDisruptionBudget, len(ps.pdbs))
	for i, st := range ps.pdbs {
		out[i] = c.sync(st)
	}
	return out
}

// Evict is POST pods/NAME/eviction: the apiserver's rules (semantics.md
// §D.1, internal/eviction) decide; on success the budget is consumed and the
// pod deleted gracefully with its own grace period. Errors are the
// *apierrors.StatusError a client would get: 429 for an exhausted PDB, 500
// for a pod with two PDBs, 404 for a missing pod.
func (c *Cluster) Evict(namespace, name string) error {
	ps, ok := c.pods[string(c.podKey(namespace, name))]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	states := c.pdbsFor(ps)
	pdbs := make([]*policyv1.PodDisruptionBudget, len(states))
	for i, st := range states {
		pdbs[i] = c.sync(st)
	}
	res := eviction.Evict(eviction.Request{Pod: ps.pod, PDBs: pdbs, Selected: true, Now: c.eng.Now()})
	if res.Err != nil {
		return res.Err
	}
	if res.UpdatedPDB != nil {
		for _, st := range states {
			if st.pdb.Name == res.UpdatedPDB.Name {
				st.pdb.Status = res.UpdatedPDB.Status
				// The new disruptedPods entry expires after DeletionTimeout.
				at := c.eng.Now().Add(eviction.DeletionTimeout)
				if st.recheck == nil || at.Before(*st.recheck) {
					st.recheck = &at
				}
			}
		}
	}
	ps.pod.Status.Conditions = append(ps.pod.Status.Conditions, eviction.DisruptionTargetCondition(c.eng.Now()))
	c.deletePod(ps, *ps.pod.Spec.TerminationGracePeriodSeconds)
	return nil
}
