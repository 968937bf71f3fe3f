package eviction

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/util/podutils"
)

const (
	// MaxDisruptedPodSize is the largest status.disruptedPods the eviction
	// handler accepts before refusing evictions (upstream MaxDisruptedPodSize).
	MaxDisruptedPodSize = 2000

	// MultiplePDBMessage is the message of the 500 returned when a pod is
	// selected by more than one PDB (semantics.md §D.1, §F pitfall 7).
	// Karpenter recognises the error by this exact message.
	MultiplePDBMessage = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."

	// PDBViolationMessage is the message of every PDB 429.
	PDBViolationMessage = "Cannot evict pod as it would violate the pod's disruption budget."

	// DisruptionTargetReason is the reason of the DisruptionTarget pod
	// condition added by the eviction subresource before it deletes the pod.
	DisruptionTargetReason = "EvictionByEvictionAPI"
	// DisruptionTargetMessage is the message of that condition.
	DisruptionTargetMessage = "Eviction API: evicting"
)

// pdbResource is policy.Resource("poddisruptionbudget"), as used by the
// apiserver for its Forbidden errors (note: singular, group "policy").
var pdbResource = schema.GroupResource{Group: policyv1.GroupName, Resource: "poddisruptionbudget"}

// Request is one POST to pods/{name}/eviction.
type Request struct {
	Pod *corev1.Pod
	// PDBs are all PDBs of the pod's namespace, with their current status.
	PDBs []*policyv1.PodDisruptionBudget
	// Selected says PDBs are exactly the PDBs whose selector picks the pod
	// (the caller indexes them), so they are not matched again.
	Selected bool
	DryRun   bool
	Now      time.Time
}

// Result is the decision of the eviction subresource.
type Result struct {
	// Err is nil for 200/201: the pod may be deleted now.
	Err *apierrors.StatusError
	// PDB is the single matching PDB, if the PDB check ran and one matched.
	PDB *policyv1.PodDisruptionBudget
	// UpdatedPDB is non-nil when the budget was consumed and the caller must
	// write it back (UpdateStatus): a copy with DisruptionsAllowed
	// decremented, DisruptedPods[pod]=Now (second precision) and the
	// DisruptionAllowed condition updated when it reaches 0. It is nil on dry
	// run: upstream returns before the status update, nothing is persisted.
	UpdatedPDB *policyv1.PodDisruptionBudget
	// SkippedBudget: the pod may be deleted without consuming the budget
	// (terminal/pending/deleting pod, or the unhealthy-pod fast path).
	SkippedBudget bool
	// ResourceVersionPrecondition: the delete must carry the pod's
	// resourceVersion as precondition (pending pods, unhealthy fast path).
	// When that delete fails with a Conflict on the unhealthy fast path, the
	// apiserver answers with StillProcessingError(PDB.Name).
	ResourceVersionPrecondition bool
}

// Evict decides an eviction as the apiserver's EvictionREST.Create does
// (semantics.md §D.1), minus the I/O: the caller performs the delete (adding
// DisruptionTargetCondition first) when Err is nil and writes UpdatedPDB.
//
// Request.Pod must be the current pod (the caller answers 404 itself when
// the pod does not exist).
func Evict(req Request) Result {
	pod := req.Pod
	if pod == nil {
		return Result{Err: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "")}
	}

	// semantics.md §D.1 / §F pitfall 8: terminal, pending and deleting pods
	// are never checked against a PDB. Only pending pods get the
	// resourceVersion precondition (shouldEnforceResourceVersion).
	if canIgnorePDB(pod) {
		return Result{
			SkippedBudget:               true,
			ResourceVersionPrecondition: shouldEnforceResourceVersion(pod),
		}
	}

	pdbs := req.PDBs
	if !req.Selected {
		pdbs = MatchingPDBs(pod, req.PDBs)
	}
	if len(pdbs) > 1 {
		// semantics.md §D.1, §F pitfall 7: 500, not 429. The handler returns
		// this Status object; the client decodes it into a StatusError.
		return Result{Err: &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Message: MultiplePDBMessage,
			Code:    http.StatusInternalServerError,
		}}}
	}
	if len(pdbs) == 0 {
		return Result{}
	}
	pdb := pdbs[0]

	// semantics.md §D.1, §F pitfall 8: unready pods.
	if !podutils.IsPodReady(pod) {
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
			return Result{PDB: pdb, SkippedBudget: true, ResourceVersionPrecondition: true}
		}
		// IfHealthyBudget (and the nil default).
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return Result{PDB: pdb, SkippedBudget: true, ResourceVersionPrecondition: true}
		}
	}

	updated, err := checkAndDecrement(pod.Name, pdb, req.DryRun, req.Now)
	if err != nil {
		return Result{Err: err, PDB: pdb}
	}
	return Result{PDB: pdb, UpdatedPDB: updated}
}

// canIgnorePDB is upstream canIgnorePDB.
func canIgnorePDB(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
		pod.Status.Phase == corev1.PodPending || !pod.DeletionTimestamp.IsZero()
}

// shouldEnforceResourceVersion is upstream shouldEnforceResourceVersion.
func shouldEnforceResourceVersion(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || !pod.DeletionTimestamp.IsZero() {
		return false
	}
	return true
}

// checkAndDecrement is upstream checkAndDecrement (semantics.md §D.1). It
// returns the PDB to write back, or nil on dry run.
func checkAndDecrement(podName string, in *policyv1.PodDisruptionBudget, dryRun bool, now time.Time) (*policyv1.PodDisruptionBudget, *apierrors.StatusError) {
	if in.Status.ObservedGeneration < in.Generation {
		return nil, StillProcessingError(in.Name)
	}
	if in.Status.DisruptionsAllowed < 0 {
		return nil, apierrors.NewForbidden(pdbResource, in.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	}
	if len(in.Status.DisruptedPods) > MaxDisruptedPodSize {
		return nil, apierrors.NewForbidden(pdbResource, in.Name, fmt.Errorf("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	}
	if in.Status.DisruptionsAllowed == 0 {
		err := apierrors.NewTooManyRequests(PDBViolationMessage, 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", in.Name, in.Status.DesiredHealthy, in.Status.CurrentHealthy),
		})
		return nil, err
	}

	pdb := withStatusCopy(in)
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		UpdateDisruptionAllowedCondition(pdb, now)
	}
	if dryRun {
		return nil, nil
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = make(map[string]metav1.Time)
	}
	pdb.Status.DisruptedPods[podName] = apiTime(now)
	return pdb, nil
}

// StillProcessingError is upstream createTooManyRequestsError: 429 with
// Retry-After 10 and cause "The disruption budget NAME is still being
// processed by the server." Returned when observedGeneration lags, and when
// the resourceVersion-guarded delete of the unhealthy fast path conflicts.
func StillProcessingError(pdbName string) *apierrors.StatusError {
	err := apierrors.NewTooManyRequests(PDBViolationMessage, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName),
	})
	return err
}

// DisruptionTargetCondition is the pod condition the eviction subresource
// adds before deleting the pod (semantics.md §D.1 addConditionAndDeletePod):
// DisruptionTarget=True, reason EvictionByEvictionAPI.
func DisruptionTargetCondition(now time.Time) corev1.PodCondition {
	return corev1.PodCondition{
		Type:               corev1.DisruptionTarget,
		Status:             corev1.ConditionTrue,
		Reason:             DisruptionTargetReason,
		Message:            DisruptionTargetMessage,
		LastTransitionTime: apiTime(now),
	}
}

// IsPDBBlock reports whether err is a 429 caused by a PodDisruptionBudget
// (it carries a DisruptionBudget cause), as opposed to API rate limiting.
// kubectl drain retries these every 5 s (semantics.md §D.3).
func IsPDBBlock(err error) bool {
	st, ok := apiStatus(err)
	if !ok || st.Code != http.StatusTooManyRequests || st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == policyv1.DisruptionBudgetCause {
			return true
		}
	}
	return false
}

// IsMultiplePDB reports whether err is the 500 "more than one
// PodDisruptionBudget" error, recognised by its message exactly as Karpenter
// does (terminator/eviction.go; semantics.md §F pitfall 7).
func IsMultiplePDB(err error) bool {
	st, ok := apiStatus(err)
	return ok && st.Message == MultiplePDBMessage
}

// BlockingMessage renders err for reports: the status message followed by
// the causes, e.g. "Cannot evict pod as it would violate the pod's
// disruption budget. (The disruption budget web-pdb needs 2 healthy pods and
// has 2 currently)". Non-API errors give err.Error(); nil gives "".
func BlockingMessage(err error) string {
	if isNil(err) {
		return ""
	}
	s, ok := apiStatus(err)
	if !ok {
		return err.Error()
	}
	msg := s.Message
	if msg == "" {
		msg = err.Error()
	}
	if s.Details != nil && len(s.Details.Causes) > 0 {
		causes := make([]string, 0, len(s.Details.Causes))
		for _, c := range s.Details.Causes {
			if c.Message != "" {
				causes = append(causes, c.Message)
			}
		}
		if len(causes) > 0 {
			msg += " (" + strings.Join(causes, "; ") + ")"
		}
	}
	return msg
}

// apiStatus extracts the API status carried by err. A typed nil
// *StatusError (for example a nil Result.Err passed as error) is no status.
func apiStatus(err error) (metav1.Status, bool) {
	if isNil(err) {
		return metav1.Status{}, false
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return metav1.Status{}, false
	}
	if se, ok := st.(*apierrors.StatusError); ok && se == nil {
		return metav1.Status{}, false
	}
	return st.Status(), true
}

// isNil reports whether err is nil or a typed nil *StatusError.
func isNil(err error) bool {
	if err == nil {
		return true
	}
	se, ok := err.(*apierrors.StatusError)
	return ok && se == nil
}
