package eviction

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// withStatus runs the disruption controller (Sync) over pods, as
// kube-controller-manager would before the eviction arrives.
func withStatus(pdb *policyv1.PodDisruptionBudget, ps []*corev1.Pod, scale ScaleFunc) *policyv1.PodDisruptionBudget {
	pdb = pdb.DeepCopy()
	pdb.Status = Sync(pdb, ps, scale, t0.Add(-time.Minute)).Status
	return pdb
}

// semantics.md §D.1, §F pitfalls 7 and 8
func TestEvict(t *testing.T) {
	many := map[string]time.Time{}
	for i := 0; i < MaxDisruptedPodSize+1; i++ {
		many[fmt.Sprintf("gone-%d", i)] = t0
	}
	exactly := map[string]time.Time{}
	for i := 0; i < MaxDisruptedPodSize; i++ {
		exactly[fmt.Sprintf("gone-%d", i)] = t0
	}
	two := pods(2, "web", rsPod("web-rs"))
	three := pods(3, "web", rsPod("web-rs"))

	type want struct {
		code          int32 // 0 = success
		retryAfter    int32
		message       string
		cause         string
		skipped       bool
		rvPrecond     bool
		pdb           string // name of Result.PDB, "" = nil
		updated       bool
		updatedAllow  int32
		updatedReason string
	}
	cases := []struct {
		name   string
		pod    *corev1.Pod
		pdbs   []*policyv1.PodDisruptionBudget
		dryRun bool
		want   want
	}{
		{
			// lab.md §4 smoke test: HTTP 429 with exactly this message and cause.
			name: "minAvailable 2 with 2 ready pods: 429 needs 2 healthy pods and has 2 currently",
			pod:  two[0],
			pdbs: []*policyv1.PodDisruptionBudget{withStatus(newPDB("web-pdb", minAvailable(intstr.FromInt32(2))), two, nil)},
			want: want{code: 429, retryAfter: 0, message: PDBViolationMessage,
				cause: "The disruption budget web-pdb needs 2 healthy pods and has 2 currently", pdb: "web-pdb"},
		},
		{
			// lab.md §4 positive control: scaled to 3, disruptionsAllowed 1, eviction 201.
			name: "minAvailable 2 scaled to 3: allowed 1, success, budget consumed to 0",
			pod:  three[0],
			pdbs: []*policyv1.PodDisruptionBudget{withStatus(newPDB("web-pdb", minAvailable(intstr.FromInt32(2))), three, nil)},
			want: want{pdb: "web-pdb", updated: true, updatedAllow: 0, updatedReason: policyv1.InsufficientPodsReason},
		},
		{
			name: "allowed 2: success, budget decremented to 1, condition stays SufficientPods",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", minAvailable(intstr.FromInt32(1)), status(2, 3, 1, 3),
				condition(metav1.ConditionTrue, policyv1.SufficientPodsReason, t0.Add(-time.Hour)))},
			want: want{pdb: "p", updated: true, updatedAllow: 1, updatedReason: policyv1.SufficientPodsReason},
		},
		{
			name:   "dry run: success, nothing to write",
			pod:    newPod("web-a"),
			pdbs:   []*policyv1.PodDisruptionBudget{newPDB("p", minAvailable(intstr.FromInt32(1)), status(2, 3, 1, 3))},
			dryRun: true,
			want:   want{pdb: "p"},
		},
		{
			name:   "dry run still refuses an exhausted budget",
			pod:    newPod("web-a"),
			pdbs:   []*policyv1.PodDisruptionBudget{newPDB("p", minAvailable(intstr.FromInt32(3)), status(0, 3, 3, 3))},
			dryRun: true,
			want: want{code: 429, message: PDBViolationMessage,
				cause: "The disruption budget p needs 3 healthy pods and has 3 currently", pdb: "p"},
		},
		{
			name: "no matching PDB: success without budget",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{
				newPDB("other-ns", status(0, 0, 1, 1), func(p *policyv1.PodDisruptionBudget) { p.Namespace = "kube-system" }),
				newPDB("other-app", status(0, 0, 1, 1), selector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}})),
				newPDB("nil-selector", status(0, 0, 1, 1), selector(nil)),
			},
			want: want{},
		},
		{
			name: "two PDBs: 500 more than one PodDisruptionBudget",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{
				newPDB("a", status(1, 3, 2, 3)),
				newPDB("b", status(1, 3, 2, 3), selector(&metav1.LabelSelector{})),
			},
			want: want{code: 500, message: MultiplePDBMessage},
		},
		{
			name: "pending pod with exhausted PDB: success, budget skipped, RV precondition",
			pod:  newPod("web-a", phase(corev1.PodPending), unready),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(0, 0, 2, 2))},
			want: want{skipped: true, rvPrecond: true},
		},
		{
			name: "pending pod with two PDBs: success (PDBs not even listed)",
			pod:  newPod("web-a", phase(corev1.PodPending)),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("a", status(0, 0, 2, 2)), newPDB("b", status(0, 0, 2, 2))},
			want: want{skipped: true, rvPrecond: true},
		},
		{
			name: "succeeded pod with exhausted PDB: success, no RV precondition",
			pod:  newPod("web-a", phase(corev1.PodSucceeded)),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(0, 2, 2, 2))},
			want: want{skipped: true},
		},
		{
			name: "failed pod with exhausted PDB: success, no RV precondition",
			pod:  newPod("web-a", phase(corev1.PodFailed)),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(0, 2, 2, 2))},
			want: want{skipped: true},
		},
		{
			name: "running pod already deleting with exhausted PDB: success, no RV precondition",
			pod:  newPod("web-a", deleting(t0.Add(-time.Second))),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(0, 2, 2, 2))},
			want: want{skipped: true},
		},
		{
			name: "unready pod, IfHealthyBudget, currentHealthy 3 >= desired 2: success, budget skipped",
			pod:  newPod("web-d", unready),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", unhealthyPolicy(policyv1.IfHealthyBudget), status(0, 3, 2, 4))},
			want: want{skipped: true, rvPrecond: true, pdb: "p"},
		},
		{
			name: "unready pod, nil policy (= IfHealthyBudget), currentHealthy 3 >= desired 2: success, budget skipped",
			pod:  newPod("web-d", unready),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(0, 3, 2, 4))},
			want: want{skipped: true, rvPrecond: true, pdb: "p"},
		},
		{
			// current == desired is enough (>=): the unready pod does not count.
			name: "unready pod, IfHealthyBudget, currentHealthy 2 == desired 2, allowed 0: success, budget skipped",
			pod:  newPod("web-c", unready),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(0, 2, 2, 3))},
			want: want{skipped: true, rvPrecond: true, pdb: "p"},
		},
		{
			name: "unready pod, IfHealthyBudget, currentHealthy 1 < desired 2: 429",
			pod:  newPod("web-d", unready),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", unhealthyPolicy(policyv1.IfHealthyBudget), status(0, 1, 2, 3))},
			want: want{code: 429, message: PDBViolationMessage,
				cause: "The disruption budget p needs 2 healthy pods and has 1 currently", pdb: "p"},
		},
		{
			name: "unready pod, desiredHealthy 0: no fast path, budget consumed",
			pod:  newPod("web-d", unready),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(1, 1, 0, 2))},
			want: want{pdb: "p", updated: true, updatedAllow: 0, updatedReason: policyv1.InsufficientPodsReason},
		},
		{
			name: "unready pod, AlwaysAllow, exhausted budget: success, budget skipped",
			pod:  newPod("web-d", unready),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", unhealthyPolicy(policyv1.AlwaysAllow), status(0, 1, 2, 3))},
			want: want{skipped: true, rvPrecond: true, pdb: "p"},
		},
		{
			name: "ready pod, AlwaysAllow, exhausted budget: 429 (policy only covers unready pods)",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", unhealthyPolicy(policyv1.AlwaysAllow), status(0, 2, 2, 2))},
			want: want{code: 429, message: PDBViolationMessage,
				cause: "The disruption budget p needs 2 healthy pods and has 2 currently", pdb: "p"},
		},
		{
			name: "observedGeneration 1 < generation 2: 429 still being processed, Retry-After 10",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", generation(2, 1), status(5, 6, 1, 6))},
			want: want{code: 429, retryAfter: 10, message: PDBViolationMessage,
				cause: "The disruption budget p is still being processed by the server.", pdb: "p"},
		},
		{
			// Envtest without kcm (lab.md §5): status never set, observedGeneration 0.
			name: "PDB never processed (observedGeneration 0): 429 still being processed",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("a", generation(1, 0))},
			want: want{code: 429, retryAfter: 10, message: PDBViolationMessage,
				cause: "The disruption budget a is still being processed by the server.", pdb: "a"},
		},
		{
			name: "observedGeneration lag does not block the unready fast path",
			pod:  newPod("web-d", unready),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", generation(2, 1), status(0, 3, 2, 3))},
			want: want{skipped: true, rvPrecond: true, pdb: "p"},
		},
		{
			name: "negative disruptionsAllowed: 403",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(-1, 1, 2, 3))},
			want: want{code: 403, message: `poddisruptionbudget.policy "p" is forbidden: pdb disruptions allowed is negative`, pdb: "p"},
		},
		{
			name: "2001 disruptedPods: 403 map too big",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(3, 6, 1, 6), disrupted(many))},
			want: want{code: 403, message: `poddisruptionbudget.policy "p" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`, pdb: "p"},
		},
		{
			name: "exactly 2000 disruptedPods: allowed",
			pod:  newPod("web-a"),
			pdbs: []*policyv1.PodDisruptionBudget{newPDB("p", status(3, 6, 1, 6), disrupted(exactly))},
			want: want{pdb: "p", updated: true, updatedAllow: 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before []*policyv1.PodDisruptionBudget
			for _, p := range tc.pdbs {
				before = append(before, p.DeepCopy())
			}
			now := t0.Add(1500 * time.Millisecond)
			res := Evict(Request{Pod: tc.pod, PDBs: tc.pdbs, DryRun: tc.dryRun, Now: now})

			if tc.want.code == 0 {
				if res.Err != nil {
					t.Fatalf("unexpected error %v", res.Err)
				}
			} else {
				if res.Err == nil {
					t.Fatalf("want HTTP %d, got success", tc.want.code)
				}
				st := res.Err.ErrStatus
				if st.Code != tc.want.code || st.Message != tc.want.message || st.Status != metav1.StatusFailure {
					t.Errorf("status = %d %q %q, want %d %q", st.Code, st.Status, st.Message, tc.want.code, tc.want.message)
				}
				if tc.want.code == 429 {
					if st.Details == nil || st.Details.RetryAfterSeconds != tc.want.retryAfter {
						t.Errorf("details = %+v, want Retry-After %d", st.Details, tc.want.retryAfter)
					}
					if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause ||
						st.Details.Causes[0].Message != tc.want.cause {
						t.Errorf("causes = %+v, want one DisruptionBudget cause %q", st.Details, tc.want.cause)
					}
					if !IsPDBBlock(res.Err) || !apierrors.IsTooManyRequests(res.Err) {
						t.Errorf("IsPDBBlock/IsTooManyRequests false for %v", res.Err)
					}
				} else if IsPDBBlock(res.Err) {
					t.Errorf("IsPDBBlock true for HTTP %d", tc.want.code)
				}
				if tc.want.code == 403 && !apierrors.IsForbidden(res.Err) {
					t.Errorf("IsForbidden false")
				}
				if IsMultiplePDB(res.Err) != (tc.want.code == 500) {
					t.Errorf("IsMultiplePDB = %v", IsMultiplePDB(res.Err))
				}
			}
			if res.SkippedBudget != tc.want.skipped || res.ResourceVersionPrecondition != tc.want.rvPrecond {
				t.Errorf("skipped/rvPrecondition = %v/%v, want %v/%v", res.SkippedBudget, res.ResourceVersionPrecondition, tc.want.skipped, tc.want.rvPrecond)
			}
			gotPDB := ""
			if res.PDB != nil {
				gotPDB = res.PDB.Name
			}
			if gotPDB != tc.want.pdb {
				t.Errorf("PDB = %q, want %q", gotPDB, tc.want.pdb)
			}
			if (res.UpdatedPDB != nil) != tc.want.updated {
				t.Fatalf("UpdatedPDB = %v, want present=%v", res.UpdatedPDB, tc.want.updated)
			}
			if res.UpdatedPDB != nil {
				u := res.UpdatedPDB
				if u.Status.DisruptionsAllowed != tc.want.updatedAllow {
					t.Errorf("updated allowed = %d, want %d", u.Status.DisruptionsAllowed, tc.want.updatedAllow)
				}
				at, ok := u.Status.DisruptedPods[tc.pod.Name]
				if !ok || !at.Time.Equal(t0.Add(time.Second)) {
					t.Errorf("disruptedPods[%s] = %v (present %v), want %v (now, whole seconds)", tc.pod.Name, at, ok, t0.Add(time.Second))
				}
				if len(u.Status.DisruptedPods) != len(res.PDB.Status.DisruptedPods)+1 {
					t.Errorf("disruptedPods has %d entries, want %d", len(u.Status.DisruptedPods), len(res.PDB.Status.DisruptedPods)+1)
				}
				cond := apimeta.FindStatusCondition(u.Status.Conditions, policyv1.DisruptionAllowedCondition)
				// The handler only touches the condition when the budget reaches 0.
				if tc.want.updatedReason == "" {
					if cond != nil {
						t.Errorf("updated condition = %+v, want none", cond)
					}
				} else if cond == nil || cond.Reason != tc.want.updatedReason {
					t.Errorf("updated condition = %+v, want reason %s", cond, tc.want.updatedReason)
				}
				// Other status numbers are the controller's: untouched.
				if u.Status.CurrentHealthy != res.PDB.Status.CurrentHealthy || u.Status.DesiredHealthy != res.PDB.Status.DesiredHealthy {
					t.Errorf("eviction changed current/desired")
				}
			}
			for i := range tc.pdbs {
				if !apiequality.Semantic.DeepEqual(before[i], tc.pdbs[i]) {
					t.Errorf("input PDB %s was mutated", tc.pdbs[i].Name)
				}
			}
		})
	}
}

func TestEvictMultiplePDBStatusExact(t *testing.T) {
	res := Evict(Request{Pod: newPod("web-a"), PDBs: []*policyv1.PodDisruptionBudget{newPDB("a"), newPDB("b")}, Now: t0})
	want := metav1.Status{Status: metav1.StatusFailure, Code: 500,
		Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}
	if res.Err == nil || !reflect.DeepEqual(res.Err.ErrStatus, want) {
		t.Fatalf("ErrStatus = %#v, want %#v", res.Err, want)
	}
	if res.Err.Error() != want.Message {
		t.Fatalf("Error() = %q", res.Err.Error())
	}
	// kubectl retries only 429 (semantics.md §D.3): this is not one.
	if apierrors.IsTooManyRequests(res.Err) {
		t.Fatalf("multiple-PDB error must not be a 429")
	}
}

func TestEvictConditionTransition(t *testing.T) {
	// The condition flips True -> False at Now when the budget hits 0 and
	// keeps the old transition time otherwise.
	old := t0.Add(-time.Hour)
	pdb := newPDB("p", minAvailable(intstr.FromInt32(1)), status(1, 2, 1, 2),
		condition(metav1.ConditionTrue, policyv1.SufficientPodsReason, old))
	res := Evict(Request{Pod: newPod("web-a"), PDBs: []*policyv1.PodDisruptionBudget{pdb}, Now: t0})
	cond := apimeta.FindStatusCondition(res.UpdatedPDB.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if cond.Status != metav1.ConditionFalse || cond.Reason != policyv1.InsufficientPodsReason || !cond.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("condition = %+v, want False/InsufficientPods at %v", cond, t0)
	}
	pdb = newPDB("p", minAvailable(intstr.FromInt32(1)), status(2, 3, 1, 3),
		condition(metav1.ConditionTrue, policyv1.SufficientPodsReason, old))
	res = Evict(Request{Pod: newPod("web-a"), PDBs: []*policyv1.PodDisruptionBudget{pdb}, Now: t0})
	cond = apimeta.FindStatusCondition(res.UpdatedPDB.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if cond.Status != metav1.ConditionTrue || !cond.LastTransitionTime.Time.Equal(old) {
		t.Fatalf("condition = %+v, want True at %v", cond, old)
	}
}

// An eviction followed by the controller's next sync: the evicted pod is in
// disruptedPods, so it is not counted healthy even though it is still Ready
// (semantics.md §D.2).
func TestEvictThenSync(t *testing.T) {
	ps := pods(3, "web", rsPod("web-rs"))
	pdb := withStatus(newPDB("web-pdb", minAvailable(intstr.FromInt32(2))), ps, nil)
	res := Evict(Request{Pod: ps[0], PDBs: []*policyv1.PodDisruptionBudget{pdb}, Now: t0})
	if res.Err != nil || res.UpdatedPDB == nil {
		t.Fatalf("first eviction: %v", res.Err)
	}
	st := Sync(res.UpdatedPDB, ps, nil, t0.Add(time.Second)).Status
	if st.CurrentHealthy != 2 || st.DisruptionsAllowed != 0 {
		t.Fatalf("after eviction current/allowed = %d/%d, want 2/0", st.CurrentHealthy, st.DisruptionsAllowed)
	}
	pdb2 := res.UpdatedPDB.DeepCopy()
	pdb2.Status = st
	res = Evict(Request{Pod: ps[1], PDBs: []*policyv1.PodDisruptionBudget{pdb2}, Now: t0.Add(2 * time.Second)})
	if !IsPDBBlock(res.Err) || res.Err.ErrStatus.Details.Causes[0].Message != "The disruption budget web-pdb needs 2 healthy pods and has 2 currently" {
		t.Fatalf("second eviction = %v", res.Err)
	}
}

func TestErrorHelpers(t *testing.T) {
	block := Evict(Request{Pod: newPod("web-a"), PDBs: []*policyv1.PodDisruptionBudget{newPDB("web-pdb", status(0, 2, 2, 2))}}).Err
	rateLimited := apierrors.NewTooManyRequests("too many requests, please try again later", 1)
	multi := Evict(Request{Pod: newPod("web-a"), PDBs: []*policyv1.PodDisruptionBudget{newPDB("a"), newPDB("b")}}).Err
	var nilStatus *apierrors.StatusError
	cases := []struct {
		name      string
		err       error
		pdbBlock  bool
		multiple  bool
		blockText string
	}{
		{"PDB 429", block, true, false,
			"Cannot evict pod as it would violate the pod's disruption budget. (The disruption budget web-pdb needs 2 healthy pods and has 2 currently)"},
		{"wrapped PDB 429", fmt.Errorf("evicting: %w", block), true, false,
			"Cannot evict pod as it would violate the pod's disruption budget. (The disruption budget web-pdb needs 2 healthy pods and has 2 currently)"},
		{"API rate limit 429 has no DisruptionBudget cause", rateLimited, false, false, "too many requests, please try again later"},
		{"multiple PDB 500", multi, false, true, MultiplePDBMessage},
		{"still processing", StillProcessingError("x"), true, false,
			"Cannot evict pod as it would violate the pod's disruption budget. (The disruption budget x is still being processed by the server.)"},
		{"plain error", errors.New("boom"), false, false, "boom"},
		{"nil", nil, false, false, ""},
		{"typed nil *StatusError", nilStatus, false, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsPDBBlock(tc.err); got != tc.pdbBlock {
				t.Errorf("IsPDBBlock = %v, want %v", got, tc.pdbBlock)
			}
			if got := IsMultiplePDB(tc.err); got != tc.multiple {
				t.Errorf("IsMultiplePDB = %v, want %v", got, tc.multiple)
			}
			if got := BlockingMessage(tc.err); got != tc.blockText {
				t.Errorf("BlockingMessage = %q, want %q", got, tc.blockText)
			}
		})
	}
}

func TestDisruptionTargetCondition(t *testing.T) {
	c := DisruptionTargetCondition(t0.Add(700 * time.Millisecond))
	want := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.NewTime(t0)}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v, want %+v", c, want)
	}
}

func TestStillProcessingErrorShape(t *testing.T) {
	err := StillProcessingError("web-pdb")
	if err.ErrStatus.Code != http.StatusTooManyRequests || err.ErrStatus.Reason != metav1.StatusReasonTooManyRequests ||
		err.ErrStatus.Details.RetryAfterSeconds != 10 {
		t.Fatalf("got %+v", err.ErrStatus)
	}
	if d, ok := apierrors.SuggestsClientDelay(err); !ok || d != 10 {
		t.Fatalf("SuggestsClientDelay = %d, %v", d, ok)
	}
}
