package eviction

import (
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// semantics.md §D.2
func TestSync(t *testing.T) {
	deploy := map[string]scaleEntry{"web-rs": {uid: "uid-web-deploy", replicas: 10}}
	type want struct {
		expected, desired, current, allowed int32
		reason                              string // DisruptionAllowed condition reason
		disrupted                           []string
		unmanaged                           []string
		syncErr                             string
	}
	cases := []struct {
		name  string
		pdb   *policyv1.PodDisruptionBudget
		pods  []*corev1.Pod
		scale ScaleFunc
		want  want
	}{
		{
			// lab.md §4: currentHealthy 2, desiredHealthy 2, disruptionsAllowed 0, reason InsufficientPods.
			name: "minAvailable 2 with 2 ready pods: desired 2, current 2, allowed 0",
			pdb:  newPDB("web-pdb", minAvailable(intstr.FromInt32(2))),
			pods: pods(2, "web", rsPod("web-rs")),
			want: want{expected: 2, desired: 2, current: 2, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "minAvailable 2 scaled to 3 ready pods: allowed 1",
			pdb:  newPDB("web-pdb", minAvailable(intstr.FromInt32(2))),
			pods: pods(3, "web", rsPod("web-rs")),
			want: want{expected: 3, desired: 2, current: 3, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "minAvailable int counts pods without controllers and never calls scale",
			pdb:  newPDB("p", minAvailable(intstr.FromInt32(1))),
			pods: pods(3, "bare"),
			scale: func(*corev1.Pod) (_ types.UID, _ int32, _ bool) {
				panic("scale must not be called for integer minAvailable")
			},
			want: want{expected: 3, desired: 1, current: 3, allowed: 2, reason: policyv1.SufficientPodsReason},
		},
		{
			name:  "maxUnavailable 25% of 10 replicas: maxUnavailable 3 (2.5 rounded up), desired 7",
			pdb:   newPDB("p", maxUnavailable(intstr.FromString("25%"))),
			pods:  pods(10, "web", rsPod("web-rs")),
			scale: scaleFrom(deploy),
			want:  want{expected: 10, desired: 7, current: 10, allowed: 3, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "maxUnavailable 1 of 3 replicas with one pod unready: desired 2, current 2, allowed 0",
			pdb:  newPDB("p", maxUnavailable(intstr.FromInt32(1))),
			pods: concat(pods(2, "web", rsPod("web-rs")), []*corev1.Pod{newPod("web-z", rsPod("web-rs"), unready)}),
			scale: scaleFrom(map[string]scaleEntry{
				"web-rs": {uid: "uid-web-deploy", replicas: 3},
			}),
			want: want{expected: 3, desired: 2, current: 2, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "maxUnavailable uses the scale, not the pod count: 2 pods of a 4-replica deployment, desired 3",
			pdb:  newPDB("p", maxUnavailable(intstr.FromInt32(1))),
			pods: pods(2, "web", rsPod("web-rs")),
			scale: scaleFrom(map[string]scaleEntry{
				"web-rs": {uid: "uid-web-deploy", replicas: 4},
			}),
			want: want{expected: 4, desired: 3, current: 2, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "maxUnavailable 200% of 3: desired clamps at 0, allowed = current 3",
			pdb:  newPDB("p", maxUnavailable(intstr.FromString("200%"))),
			pods: pods(3, "web", rsPod("web-rs")),
			scale: scaleFrom(map[string]scaleEntry{
				"web-rs": {uid: "uid-web-deploy", replicas: 3},
			}),
			want: want{expected: 3, desired: 0, current: 3, allowed: 3, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "minAvailable 50% of 3: desired 2 (1.5 rounded up)",
			pdb:  newPDB("p", minAvailable(intstr.FromString("50%"))),
			pods: pods(3, "web", rsPod("web-rs")),
			scale: scaleFrom(map[string]scaleEntry{
				"web-rs": {uid: "uid-web-deploy", replicas: 3},
			}),
			want: want{expected: 3, desired: 2, current: 3, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			// Two ReplicaSets of one Deployment (mid-rollout) share the Deployment's
			// UID, so its scale 3 is counted once; a StatefulSet of 2 adds 2.
			name: "minAvailable 50%: unique controllers summed once, 3+2=5, desired 3",
			pdb:  newPDB("p", minAvailable(intstr.FromString("50%"))),
			pods: concat(
				pods(2, "old", rsPod("web-rs-old")),
				pods(1, "new", rsPod("web-rs-new")),
				pods(2, "db", ownedBy("apps/v1", "StatefulSet", "db")),
			),
			scale: scaleFrom(map[string]scaleEntry{
				"web-rs-old": {uid: "uid-web-deploy", replicas: 3},
				"web-rs-new": {uid: "uid-web-deploy", replicas: 3},
				"db":         {uid: "uid-db", replicas: 2},
			}),
			want: want{expected: 5, desired: 3, current: 5, allowed: 2, reason: policyv1.SufficientPodsReason},
		},
		{
			name:  "pods without controller under maxUnavailable: unmanaged, expected 0, allowed 0",
			pdb:   newPDB("p", maxUnavailable(intstr.FromInt32(1)), status(2, 2, 0, 2)),
			pods:  pods(2, "bare"),
			scale: scaleFrom(deploy),
			want: want{expected: 0, desired: 0, current: 2, allowed: 0, reason: policyv1.InsufficientPodsReason,
				unmanaged: []string{"bare-a", "bare-b"}},
		},
		{
			// Current upstream skips unmanaged pods when summing scales but still
			// counts them healthy: 3 (scale) - 1 = desired 2, 4 ready -> allowed 2.
			name: "maxUnavailable 1 with one unmanaged pod beside a 3-replica deployment: allowed 2",
			pdb:  newPDB("p", maxUnavailable(intstr.FromInt32(1))),
			pods: concat(pods(3, "web", rsPod("web-rs")), pods(1, "bare")),
			scale: scaleFrom(map[string]scaleEntry{
				"web-rs": {uid: "uid-web-deploy", replicas: 3},
			}),
			want: want{expected: 3, desired: 2, current: 4, allowed: 2, reason: policyv1.SufficientPodsReason,
				unmanaged: []string{"bare-a"}},
		},
		{
			name:  "controllerRef whose controller cannot be found under maxUnavailable: failSafe, allowed 0",
			pdb:   newPDB("p", maxUnavailable(intstr.FromInt32(1)), status(1, 3, 2, 3)),
			pods:  pods(3, "web", rsPod("gone-rs")),
			scale: scaleFrom(deploy),
			// failSafe keeps the old numbers and only zeroes disruptionsAllowed.
			want: want{expected: 3, desired: 2, current: 3, allowed: 0, reason: policyv1.SyncFailedReason,
				syncErr: `found no controllers for pod "web-a"`},
		},
		{
			name:  "nil ScaleFunc when a scale is needed: failSafe",
			pdb:   newPDB("p", minAvailable(intstr.FromString("50%")), status(1, 3, 2, 3)),
			pods:  pods(3, "web", rsPod("web-rs")),
			scale: nil,
			want: want{expected: 3, desired: 2, current: 3, allowed: 0, reason: policyv1.SyncFailedReason,
				syncErr: `found no controllers for pod "web-a"`},
		},
		{
			name:  "invalid percentage: failSafe",
			pdb:   newPDB("p", maxUnavailable(intstr.FromString("abc")), status(1, 3, 2, 3)),
			pods:  pods(3, "web", rsPod("web-rs")),
			scale: scaleFrom(deploy),
			want: want{expected: 3, desired: 2, current: 3, allowed: 0, reason: policyv1.SyncFailedReason,
				syncErr: `invalid value for IntOrString: invalid type: string is not a percentage`},
		},
		{
			name: "disruptedPods entry younger than 2m: pod not counted healthy, entry kept",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)),
				disrupted(map[string]time.Time{"web-a": t0.Add(-119 * time.Second)})),
			pods: pods(3, "web", rsPod("web-rs")),
			want: want{expected: 3, desired: 1, current: 2, allowed: 1, reason: policyv1.SufficientPodsReason,
				disrupted: []string{"web-a"}},
		},
		{
			name: "disruptedPods entry older than 2m: pod counted healthy again, entry dropped",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)),
				disrupted(map[string]time.Time{"web-a": t0.Add(-121 * time.Second)})),
			pods: pods(3, "web", rsPod("web-rs")),
			want: want{expected: 3, desired: 1, current: 3, allowed: 2, reason: policyv1.SufficientPodsReason},
		},
		{
			// countHealthyPods uses After(now): exactly 2m old is healthy;
			// buildDisruptedPodMap uses Before(now): the entry is kept.
			name: "disruptedPods entry exactly 2m old: counted healthy but entry kept",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)),
				disrupted(map[string]time.Time{"web-a": t0.Add(-2 * time.Minute)})),
			pods: pods(3, "web", rsPod("web-rs")),
			want: want{expected: 3, desired: 1, current: 3, allowed: 2, reason: policyv1.SufficientPodsReason,
				disrupted: []string{"web-a"}},
		},
		{
			name: "deleting pod is not healthy and its disruptedPods entry is dropped; missing pod entry dropped",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)),
				disrupted(map[string]time.Time{"web-a": t0.Add(-10 * time.Second), "ghost": t0.Add(-10 * time.Second)})),
			pods: concat([]*corev1.Pod{newPod("web-a", rsPod("web-rs"), deleting(t0.Add(-5*time.Second)))},
				pods(2, "more", rsPod("web-rs"))),
			want: want{expected: 3, desired: 1, current: 2, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "unready and not-running pods are not healthy",
			pdb:  newPDB("p", minAvailable(intstr.FromInt32(1))),
			pods: concat(pods(1, "ok", rsPod("web-rs")), pods(2, "bad", rsPod("web-rs"), unready)),
			want: want{expected: 3, desired: 1, current: 1, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "empty selector {} matches every pod of the namespace, not other namespaces",
			pdb:  newPDB("p", minAvailable(intstr.FromInt32(1)), selector(&metav1.LabelSelector{})),
			pods: concat(pods(2, "web", rsPod("web-rs")),
				pods(1, "other", withLabels(map[string]string{"app": "other"}), rsPod("o-rs")),
				pods(4, "elsewhere", inNamespace("kube-system"), rsPod("x-rs"))),
			want: want{expected: 3, desired: 1, current: 3, allowed: 2, reason: policyv1.SufficientPodsReason},
		},
		{
			name: "nil selector matches no pod: expected 0, allowed 0",
			pdb:  newPDB("p", minAvailable(intstr.FromInt32(0)), selector(nil)),
			pods: pods(3, "web", rsPod("web-rs")),
			want: want{expected: 0, desired: 0, current: 0, allowed: 0, reason: policyv1.InsufficientPodsReason},
		},
		{
			name: "invalid selector: failSafe",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)), status(2, 3, 1, 3),
				selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}})),
			pods: pods(3, "web", rsPod("web-rs")),
			want: want{expected: 3, desired: 1, current: 3, allowed: 0, reason: policyv1.SyncFailedReason,
				syncErr: `"Bogus" is not a valid label selector operator`},
		},
		{
			name: "pods only in matching labels are selected",
			pdb:  newPDB("p", minAvailable(intstr.FromInt32(1))),
			pods: concat(pods(2, "web", rsPod("web-rs")), pods(5, "other", withLabels(map[string]string{"app": "other"}), rsPod("o-rs"))),
			want: want{expected: 2, desired: 1, current: 2, allowed: 1, reason: policyv1.SufficientPodsReason},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.pdb.DeepCopy()
			res := Sync(tc.pdb, tc.pods, tc.scale, t0)
			st := res.Status
			if got := [4]int32{st.ExpectedPods, st.DesiredHealthy, st.CurrentHealthy, st.DisruptionsAllowed}; got != [4]int32{tc.want.expected, tc.want.desired, tc.want.current, tc.want.allowed} {
				t.Errorf("expected/desired/current/allowed = %v, want %v", got, [4]int32{tc.want.expected, tc.want.desired, tc.want.current, tc.want.allowed})
			}
			cond := apimeta.FindStatusCondition(st.Conditions, policyv1.DisruptionAllowedCondition)
			if cond == nil || cond.Reason != tc.want.reason {
				t.Errorf("condition = %+v, want reason %q", cond, tc.want.reason)
			}
			wantStatus := metav1.ConditionFalse
			if tc.want.reason == policyv1.SufficientPodsReason {
				wantStatus = metav1.ConditionTrue
			}
			if cond != nil && cond.Status != wantStatus {
				t.Errorf("condition status = %s, want %s", cond.Status, wantStatus)
			}
			var keys []string
			for k := range st.DisruptedPods {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if !equalStrings(keys, tc.want.disrupted) {
				t.Errorf("disruptedPods = %v, want %v", keys, tc.want.disrupted)
			}
			if !equalStrings(res.UnmanagedPods, tc.want.unmanaged) {
				t.Errorf("unmanaged = %v, want %v", res.UnmanagedPods, tc.want.unmanaged)
			}
			if tc.want.syncErr == "" {
				if res.SyncError != nil {
					t.Errorf("unexpected sync error %v", res.SyncError)
				}
				if st.ObservedGeneration != tc.pdb.Generation {
					t.Errorf("observedGeneration = %d, want %d", st.ObservedGeneration, tc.pdb.Generation)
				}
			} else {
				if res.SyncError == nil || !strings.Contains(res.SyncError.Error(), tc.want.syncErr) {
					t.Errorf("sync error = %v, want containing %q", res.SyncError, tc.want.syncErr)
				}
				if cond != nil && cond.Message != res.SyncError.Error() {
					t.Errorf("failSafe condition message = %q, want %q", cond.Message, res.SyncError.Error())
				}
			}
			if !apiequality.Semantic.DeepEqual(before, tc.pdb) {
				t.Errorf("input PDB was mutated")
			}
		})
	}
}

func TestSyncGenerationAndTransitions(t *testing.T) {
	old := t0.Add(-time.Hour)
	cases := []struct {
		name        string
		pdb         *policyv1.PodDisruptionBudget
		nReady      int
		wantChanged bool
		wantLTT     time.Time
		wantStatus  metav1.ConditionStatus
		wantObsGen  int64
	}{
		{
			name: "observedGeneration follows generation 5",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)), generation(5, 4), status(1, 2, 1, 2),
				condition(metav1.ConditionTrue, policyv1.SufficientPodsReason, old)),
			nReady: 2, wantChanged: true, wantLTT: old, wantStatus: metav1.ConditionTrue, wantObsGen: 5,
		},
		{
			name: "nothing changed: no write, old LastTransitionTime kept",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)), status(1, 2, 1, 2),
				condition(metav1.ConditionTrue, policyv1.SufficientPodsReason, old)),
			nReady: 2, wantChanged: false, wantLTT: old, wantStatus: metav1.ConditionTrue, wantObsGen: 1,
		},
		{
			name: "numbers change but condition status stays True: LastTransitionTime kept",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)), status(1, 2, 1, 2),
				condition(metav1.ConditionTrue, policyv1.SufficientPodsReason, old)),
			nReady: 3, wantChanged: true, wantLTT: old, wantStatus: metav1.ConditionTrue, wantObsGen: 1,
		},
		{
			name: "allowed drops to 0: condition flips to False with LastTransitionTime now",
			pdb: newPDB("p", minAvailable(intstr.FromInt32(1)), status(1, 2, 1, 2),
				condition(metav1.ConditionTrue, policyv1.SufficientPodsReason, old)),
			nReady: 1, wantChanged: true, wantLTT: t0, wantStatus: metav1.ConditionFalse, wantObsGen: 1,
		},
		{
			name:   "first sync: condition created with LastTransitionTime now",
			pdb:    newPDB("p", minAvailable(intstr.FromInt32(1)), generation(1, 0)),
			nReady: 2, wantChanged: true, wantLTT: t0, wantStatus: metav1.ConditionTrue, wantObsGen: 1,
		},
		{
			name: "failSafe from True: flips to False SyncFailed at now, observedGeneration not advanced",
			pdb: newPDB("p", maxUnavailable(intstr.FromInt32(1)), generation(3, 2), status(1, 2, 1, 2),
				condition(metav1.ConditionTrue, policyv1.SufficientPodsReason, old)),
			nReady: -2, wantChanged: true, wantLTT: t0, wantStatus: metav1.ConditionFalse, wantObsGen: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ps []*corev1.Pod
			if tc.nReady >= 0 {
				ps = pods(tc.nReady, "web", rsPod("web-rs"))
			} else {
				ps = pods(-tc.nReady, "web", rsPod("gone-rs")) // no scale -> failSafe
			}
			// now has sub-second precision: stored times are whole seconds.
			res := Sync(tc.pdb, ps, scaleFrom(nil), t0.Add(300*time.Millisecond))
			if res.Changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", res.Changed, tc.wantChanged)
			}
			if res.Status.ObservedGeneration != tc.wantObsGen {
				t.Errorf("observedGeneration = %d, want %d", res.Status.ObservedGeneration, tc.wantObsGen)
			}
			cond := apimeta.FindStatusCondition(res.Status.Conditions, policyv1.DisruptionAllowedCondition)
			if cond == nil {
				t.Fatal("no DisruptionAllowed condition")
			}
			if cond.Status != tc.wantStatus || !cond.LastTransitionTime.Time.Equal(tc.wantLTT) {
				t.Errorf("condition = %s at %v, want %s at %v", cond.Status, cond.LastTransitionTime.Time, tc.wantStatus, tc.wantLTT)
			}
			if cond.ObservedGeneration != res.Status.ObservedGeneration {
				t.Errorf("condition observedGeneration = %d, want %d", cond.ObservedGeneration, res.Status.ObservedGeneration)
			}
		})
	}
}

func TestSyncRecheckAt(t *testing.T) {
	pdb := newPDB("p", minAvailable(intstr.FromInt32(1)), disrupted(map[string]time.Time{
		"web-a": t0.Add(-90 * time.Second), // expires at t0+30s
		"web-b": t0.Add(-30 * time.Second), // expires at t0+90s
		"web-c": t0.Add(-5 * time.Minute),  // already expired
	}))
	res := Sync(pdb, pods(3, "web", rsPod("web-rs")), nil, t0)
	if res.RecheckAt == nil || !res.RecheckAt.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("recheckAt = %v, want %v", res.RecheckAt, t0.Add(30*time.Second))
	}
	if res.Status.CurrentHealthy != 1 || res.Status.DisruptionsAllowed != 0 {
		t.Fatalf("current/allowed = %d/%d, want 1/0", res.Status.CurrentHealthy, res.Status.DisruptionsAllowed)
	}
	// 30 s later web-a's entry expires: healthy again, allowed 1.
	pdb.Status = res.Status
	res = Sync(pdb, pods(3, "web", rsPod("web-rs")), nil, t0.Add(31*time.Second))
	if res.Status.CurrentHealthy != 2 || res.Status.DisruptionsAllowed != 1 {
		t.Fatalf("after expiry current/allowed = %d/%d, want 2/1", res.Status.CurrentHealthy, res.Status.DisruptionsAllowed)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// semantics.md §D.2: the floor a PDB keeps, as expectedPodCount computes it.
func TestDesiredHealthy(t *testing.T) {
	cases := []struct {
		name            string
		pdb             *policyv1.PodDisruptionBudget
		selected, scale int32
		want            int32
	}{
		{"minAvailable int is the floor whatever the scale", newPDB("p", minAvailable(intstr.FromInt32(2))), 5, 10, 2},
		{"minAvailable 50% of 3 rounds up", newPDB("p", minAvailable(intstr.FromString("50%"))), 3, 3, 2},
		{"minAvailable % scales the controllers' replicas, not the pods selected", newPDB("p", minAvailable(intstr.FromString("50%"))), 1, 4, 2},
		{"maxUnavailable 1 of 3", newPDB("p", maxUnavailable(intstr.FromInt32(1))), 3, 3, 2},
		{"maxUnavailable 25% of 10 rounds maxUnavailable up", newPDB("p", maxUnavailable(intstr.FromString("25%"))), 10, 10, 7},
		{"maxUnavailable above the scale floors at 0", newPDB("p", maxUnavailable(intstr.FromInt32(5))), 2, 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DesiredHealthy(tc.pdb, tc.selected, tc.scale)
			if err != nil || got != tc.want {
				t.Fatalf("DesiredHealthy = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}
