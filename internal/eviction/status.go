package eviction

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"
)

// DeletionTimeout is how long an entry of status.disruptedPods keeps a pod
// out of currentHealthy: the eviction handler records the pod, and if the
// controller has not seen it being deleted after this long it assumes the
// deletion will not happen (semantics.md §D.2; upstream
// disruption.DeletionTimeout).
const DeletionTimeout = 2 * time.Minute

// ScaleFunc tells the controller how many replicas the controller owning a
// pod wants (ReplicaSet→its Deployment, StatefulSet, ReplicationController,
// or any scale subresource). ok=false when the pod has no controller or it
// cannot be found.
//
// It is the pure stand-in for upstream's finders() (getPodReplicationController,
// getPodDeployment, getPodReplicaSet, getPodStatefulSet, getScaleController):
// controllerUID is the UID of the object whose scale was used (the
// Deployment, not the ReplicaSet, for Deployment-owned pods), so pods of the
// same workload are summed once.
type ScaleFunc func(pod *corev1.Pod) (controllerUID types.UID, replicas int32, ok bool)

// SyncResult is the full outcome of one disruption-controller sync of a PDB.
type SyncResult struct {
	// Status is the status the controller would write (or, when Changed is
	// false, the PDB's current status itself, sharing its maps and slices).
	Status policyv1.PodDisruptionBudgetStatus
	// Changed reports whether the controller would write a new status.
	Changed bool
	// SyncError is non-nil when the sync failed and upstream failSafe was
	// applied (disruptionsAllowed forced to 0, condition SyncFailed).
	SyncError error
	// UnmanagedPods are the selected pods without a controllerRef, skipped
	// when summing scales (upstream emits an "UnmanagedPods" warning event).
	UnmanagedPods []string
	// RecheckAt, when non-nil, is the earliest time an entry of
	// DisruptedPods expires: upstream enqueues the PDB for a recheck then.
	RecheckAt *time.Time
}

// Sync is the disruption controller's sync of one PDB (semantics.md §D.2,
// upstream DisruptionController.sync → trySync → updatePdbStatus, and
// failSafe on any error other than a write conflict), as a pure function.
// pods may be every pod of the namespace: the PDB's namespace and selector
// are applied here. now replaces the controller's clock.
func Sync(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod, scale ScaleFunc, now time.Time) SyncResult {
	if pdb == nil {
		return SyncResult{}
	}
	// getPodsForPdb: an invalid selector is a sync error (→ failSafe);
	// a nil selector lists nothing, an empty one everything.
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return failSafe(pdb, err, now)
	}
	var selected []PodFacts
	for _, p := range pods {
		if p == nil || p.Namespace != pdb.Namespace {
			continue
		}
		if sel.Matches(labels.Set(p.Labels)) {
			selected = append(selected, FactsOf(p))
		}
	}
	return SyncFacts(pdb, selected, scale, now)
}

// PodFacts is what a PDB status sync reads of a pod: its name, controller
// reference, whether it is being deleted and whether it is Ready. A caller
// that keeps these beside its pods (the twin's pod index) hands them over
// without reading thousands of pod objects per sync.
type PodFacts struct {
	Pod           *corev1.Pod // what the ScaleFunc is asked about
	Name          string
	ControllerUID types.UID // the controllerRef's UID, when HasController
	HasController bool
	// ControllerAPIVersion and ControllerKind are the controllerRef's: a
	// kind without a scale fails a sync that needs one (ScaleError).
	ControllerAPIVersion, ControllerKind string
	Deleting                             bool // metadata.deletionTimestamp is set
	Ready                                bool // podutils.IsPodReady
}

// FactsOf reads a pod's PodFacts.
func FactsOf(pod *corev1.Pod) PodFacts {
	f := PodFacts{Pod: pod, Name: pod.Name, Deleting: pod.DeletionTimestamp != nil, Ready: podutils.IsPodReady(pod)}
	if ref := ControllerOf(pod); ref != nil {
		f.ControllerUID, f.HasController = ref.UID, true
		f.ControllerAPIVersion, f.ControllerKind = ref.APIVersion, ref.Kind
	}
	return f
}

// SyncFacts is Sync for pods the caller has already matched to the PDB
// (same namespace, selector matches), as the disruption controller's pod
// informer index hands them over, read as facts. The PDB's selector must be
// valid: an invalid one is Sync's fail-safe path.
func SyncFacts(pdb *policyv1.PodDisruptionBudget, selected []PodFacts, scale ScaleFunc, now time.Time) SyncResult {
	var unmanaged []string
	var healthy int32
	for i := range selected {
		if !selected[i].Deleting && selected[i].Ready {
			healthy++
		}
	}
	var byName map[string]*PodFacts
	if len(pdb.Status.DisruptedPods) > 0 {
		byName = make(map[string]*PodFacts, len(selected))
		for i := range selected {
			byName[selected[i].Name] = &selected[i]
		}
	}
	res := syncStatus(pdb, int32(len(selected)), healthy,
		func() (sum int32, err error) {
			sum, unmanaged, err = expectedScale(selected, scale)
			return sum, err
		},
		func(name string) (present, ready bool) {
			f := byName[name]
			if f == nil || f.Deleting {
				return false, false
			}
			return true, f.Ready
		}, now)
	res.UnmanagedPods = unmanaged
	return res
}

// PodCounts is what a PDB's status depends on, kept as counters by a
// caller that follows its pods as they change (the twin's pod index), so a
// sync costs the few DisruptedPods entries instead of every selected pod.
// SyncCounts gives the result SyncFacts gives for the same pods, provided
// every pod with a controllerRef resolves to a scale (no sync error): a
// caller with an unresolved pod uses SyncFacts, which words the error.
type PodCounts struct {
	// Selected counts the pods the selector picks; Healthy those of them
	// that are Ready and not being deleted.
	Selected, Healthy int32
	// Scale is the sum of spec.replicas of the distinct scale owners of the
	// selected pods' controllers (expectedScale).
	Scale int32
	// Lookup reports, for the name in a DisruptedPods entry, whether a
	// selected pod of that name exists and is not being deleted, and if so
	// whether it is Ready.
	Lookup func(name string) (present, ready bool)
}

// SyncCounts is SyncFacts over counters (PodCounts).
func SyncCounts(pdb *policyv1.PodDisruptionBudget, counts PodCounts, now time.Time) SyncResult {
	return syncStatus(pdb, counts.Selected, counts.Healthy, func() (int32, error) { return counts.Scale, nil }, counts.Lookup, now)
}

// syncStatus is the one computation of a PDB's status every sync comes
// down to (trySync): the expected and desired counts (getExpectedPodCount,
// asking scale only when the budget needs it), status.disruptedPods kept
// for present pods until DeletionTimeout has passed (buildDisruptedPodMap),
// currentHealthy as the healthy pods less the Ready ones such an entry
// still holds back (countHealthyPods), then updatePdbStatus. healthy counts
// the selected pods that are Ready and not being deleted; lookup answers
// for the name of a DisruptedPods entry.
func syncStatus(pdb *policyv1.PodDisruptionBudget, selected, healthy int32, scale func() (int32, error), lookup func(name string) (present, ready bool), now time.Time) SyncResult {
	expectedCount, desiredHealthy, err := expectedPodCount(pdb, selected, scale)
	if err != nil {
		return failSafe(pdb, err, now)
	}
	d := newDisruptedEntries()
	currentHealthy := healthy
	for name, t := range pdb.Status.DisruptedPods {
		present, ready := lookup(name)
		if present && d.keep(name, t, now) && ready && t.Time.Add(DeletionTimeout).After(now) {
			currentHealthy--
		}
	}
	status, changed := updatePdbStatus(pdb, currentHealthy, desiredHealthy, expectedCount, d.kept, now)
	return SyncResult{Status: status, Changed: changed, RecheckAt: d.recheck}
}

// DesiredHealthy is the status.desiredHealthy a sync gives a PDB over
// selected pods whose controllers want scale replicas in all: its floor of
// healthy pods (expectedPodCount).
func DesiredHealthy(pdb *policyv1.PodDisruptionBudget, selected, scale int32) (int32, error) {
	_, desired, err := expectedPodCount(pdb, selected, func() (int32, error) { return scale, nil })
	return desired, err
}

// expectedPodCount is upstream getExpectedPodCount (semantics.md §D.2):
//   - maxUnavailable (int or %): expectedCount = Σ scale, maxUnavailable
//     scaled with round-up, desiredHealthy = max(0, expectedCount − maxUnavailable);
//   - minAvailable int: desiredHealthy = minAvailable, expectedCount = len(pods);
//   - minAvailable %: expectedCount = Σ scale, desiredHealthy = ceil(pct × expectedCount).
func expectedPodCount(pdb *policyv1.PodDisruptionBudget, selected int32, scale func() (int32, error)) (expectedCount, desiredHealthy int32, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expectedCount, err = scale()
		if err != nil {
			return
		}
		var maxUnavailable int
		maxUnavailable, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expectedCount), true)
		if err != nil {
			return
		}
		desiredHealthy = expectedCount - int32(maxUnavailable)
		if desiredHealthy < 0 {
			desiredHealthy = 0
		}
	case pdb.Spec.MinAvailable != nil:
		if pdb.Spec.MinAvailable.Type == intstr.Int {
			desiredHealthy = pdb.Spec.MinAvailable.IntVal
			expectedCount = selected
		} else if pdb.Spec.MinAvailable.Type == intstr.String {
			expectedCount, err = scale()
			if err != nil {
				return
			}
			var minAvailable int
			minAvailable, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expectedCount), true)
			if err != nil {
				return
			}
			desiredHealthy = int32(minAvailable)
		}
	}
	return
}

// expectedScale is upstream getExpectedScale: the sum of the scales of the
// distinct controllers of the pods. Pods without a controllerRef are
// "unmanaged" and skipped (current upstream; older releases failed the
// sync). A pod whose controllerRef names a controller that cannot be found
// is a sync error ("found no controllers for pod"), which leads to failSafe.
// ControllerOf is metav1.GetControllerOf without the copy: the owner reference
// with controller=true, or nil. It is read on every PDB sync, for every pod.
func ControllerOf(pod *corev1.Pod) *metav1.OwnerReference {
	for i := range pod.OwnerReferences {
		if r := &pod.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

func expectedScale(pods []PodFacts, scale ScaleFunc) (expectedCount int32, unmanaged []string, err error) {
	// controllerScale maps controller UID to scale, as upstream's map does;
	// a PDB rarely spans more than one or two controllers, so a slice.
	type scaleOf struct {
		uid      types.UID
		replicas int32
	}
	var controllerScale []scaleOf
	find := func(uid types.UID) int {
		for i, s := range controllerScale {
			if s.uid == uid {
				return i
			}
		}
		return -1
	}
	// seen holds the controllerRefs already resolved: upstream checks the
	// map by the pod's controllerRef UID but fills it by the scale's owner
	// (a ReplicaSet's pods resolve to their Deployment), so it resolves
	// every pod again; the result is the same for the same ref.
	var seen []types.UID
	for i := range pods {
		pod := &pods[i]
		if !pod.HasController {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if slices.Contains(seen, pod.ControllerUID) || find(pod.ControllerUID) >= 0 {
			continue
		}
		seen = append(seen, pod.ControllerUID)
		if err = ScaleError(pod.ControllerAPIVersion, pod.ControllerKind); err != nil {
			return
		}
		var (
			uid      types.UID
			replicas int32
			ok       bool
		)
		if scale != nil {
			uid, replicas, ok = scale(pod.Pod)
		}
		if !ok {
			err = fmt.Errorf("found no controllers for pod %q", pod.Name)
			return
		}
		if i := find(uid); i >= 0 {
			controllerScale[i].replicas = replicas
		} else {
			controllerScale = append(controllerScale, scaleOf{uid, replicas})
		}
	}
	for _, s := range controllerScale {
		expectedCount += s.replicas
	}
	return
}

// disruptedEntries is the new status.disruptedPods being built: an entry
// of a selected pod not being deleted is kept until DeletionTimeout has
// passed; recheck is the earliest time a kept entry expires.
type disruptedEntries struct {
	kept    map[string]metav1.Time
	recheck *time.Time
}

func newDisruptedEntries() disruptedEntries {
	return disruptedEntries{kept: make(map[string]metav1.Time)}
}

// keep keeps the entry for name unless it has expired, and says whether it
// did.
func (d *disruptedEntries) keep(name string, t metav1.Time, now time.Time) bool {
	expectedDeletion := t.Time.Add(DeletionTimeout)
	if expectedDeletion.Before(now) {
		return false // upstream: event "NotDeleted", entry dropped
	}
	if d.recheck == nil || expectedDeletion.Before(*d.recheck) {
		e := expectedDeletion
		d.recheck = &e
	}
	d.kept[name] = t
	return true
}

// updatePdbStatus is upstream updatePdbStatus: disruptionsAllowed =
// currentHealthy − desiredHealthy, forced to 0 when expectedCount ≤ 0 or the
// difference ≤ 0; nothing is written when every field and the condition are
// already up to date.
func updatePdbStatus(pdb *policyv1.PodDisruptionBudget, currentHealthy, desiredHealthy, expectedCount int32, disruptedPods map[string]metav1.Time, now time.Time) (policyv1.PodDisruptionBudgetStatus, bool) {
	disruptionsAllowed := currentHealthy - desiredHealthy
	if expectedCount <= 0 || disruptionsAllowed <= 0 {
		disruptionsAllowed = 0
	}

	if pdb.Status.CurrentHealthy == currentHealthy &&
		pdb.Status.DesiredHealthy == desiredHealthy &&
		pdb.Status.ExpectedPods == expectedCount &&
		pdb.Status.DisruptionsAllowed == disruptionsAllowed &&
		apiequality.Semantic.DeepEqual(pdb.Status.DisruptedPods, disruptedPods) &&
		pdb.Status.ObservedGeneration == pdb.Generation &&
		conditionsAreUpToDate(pdb) {
		return pdb.Status, false // nothing to write: the same status, not a copy
	}

	newPdb := withStatusCopy(pdb)
	newPdb.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy:     currentHealthy,
		DesiredHealthy:     desiredHealthy,
		ExpectedPods:       expectedCount,
		DisruptionsAllowed: disruptionsAllowed,
		DisruptedPods:      disruptedPods,
		ObservedGeneration: pdb.Generation,
		Conditions:         newPdb.Status.Conditions,
	}
	UpdateDisruptionAllowedCondition(newPdb, now)
	return newPdb.Status, true
}

// failSafe is upstream failSafe: keep the old status, force
// disruptionsAllowed to 0 and set DisruptionAllowed=False reason SyncFailed
// with the error as message (semantics.md §D.2). ObservedGeneration is not
// advanced.
func failSafe(pdb *policyv1.PodDisruptionBudget, err error, now time.Time) SyncResult {
	newPdb := withStatusCopy(pdb)
	newPdb.Status.DisruptionsAllowed = 0
	if newPdb.Status.Conditions == nil {
		newPdb.Status.Conditions = make([]metav1.Condition, 0)
	}
	apimeta.SetStatusCondition(&newPdb.Status.Conditions, metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.SyncFailedReason,
		Message:            err.Error(),
		ObservedGeneration: newPdb.Status.ObservedGeneration,
		LastTransitionTime: apiTime(now),
	})
	return SyncResult{
		Status:    newPdb.Status,
		Changed:   !apiequality.Semantic.DeepEqual(pdb.Status, newPdb.Status),
		SyncError: err,
	}
}

// UpdateDisruptionAllowedCondition is
// k8s.io/component-helpers/apps/poddisruptionbudget.UpdateDisruptionAllowedCondition
// with the clock made explicit: DisruptionAllowed=True reason SufficientPods
// when disruptionsAllowed > 0, else False reason InsufficientPods;
// ObservedGeneration = status.observedGeneration. LastTransitionTime is now
// only when the condition is new or its status flips (apimeta.SetStatusCondition
// semantics); otherwise the old one is kept.
func UpdateDisruptionAllowedCondition(pdb *policyv1.PodDisruptionBudget, now time.Time) {
	if pdb.Status.Conditions == nil {
		pdb.Status.Conditions = make([]metav1.Condition, 0)
	}
	cond := metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Reason:             policyv1.InsufficientPodsReason,
		Status:             metav1.ConditionFalse,
		ObservedGeneration: pdb.Status.ObservedGeneration,
		LastTransitionTime: apiTime(now),
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		cond.Reason = policyv1.SufficientPodsReason
		cond.Status = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&pdb.Status.Conditions, cond)
}

// conditionsAreUpToDate is component-helpers ConditionsAreUpToDate.
func conditionsAreUpToDate(pdb *policyv1.PodDisruptionBudget) bool {
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if cond == nil {
		return false
	}
	if pdb.Status.ObservedGeneration != pdb.Generation {
		return false
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		return cond.Status == metav1.ConditionTrue && cond.Reason == policyv1.SufficientPodsReason
	}
	return cond.Status == metav1.ConditionFalse && cond.Reason == policyv1.InsufficientPodsReason
}

// apiTime converts now to the value a client reads back from the apiserver:
// metav1.Time is serialised with second precision (JSON RFC3339 and
// protobuf both drop the nanoseconds), so timestamps written into status are
// truncated to the second.
func apiTime(now time.Time) metav1.Time {
	return metav1.NewTime(now.Truncate(time.Second))
}

// withStatusCopy is upstream's pdb.DeepCopy() where only the status is
// written afterwards: a new object with its own status, sharing metadata
// and spec with pdb (read-only here), without copying them.
func withStatusCopy(pdb *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{TypeMeta: pdb.TypeMeta, ObjectMeta: pdb.ObjectMeta, Spec: pdb.Spec, Status: *pdb.Status.DeepCopy()}
}
