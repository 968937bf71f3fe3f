package drain

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kdrain "k8s.io/kubectl/pkg/drain"
)

var now = time.Date(2026, 8, 27, 12, 0, 0, 0, time.UTC)

// Concrete expectations (independent of the upstream run) for two option
// sets over the node fixture (semantics.md §D.3).
func TestPodsForDeletionExpected(t *testing.T) {
	cases := []struct {
		name         string
		opts         Options
		wantPods     []string
		wantWarnings string // StableWarnings
		wantErrs     []string
	}{
		{
			name: "no flags: DaemonSet, local storage, unmanaged and missing-DaemonSet pods refuse the drain",
			opts: Options{},
			wantPods: []string{
				"default/emptydir-failed-unmanaged", "default/failed-unmanaged", "default/hostpath-rs",
				"default/rs-pod", "default/statefulset-pod", "default/succeeded-unmanaged",
				"default/terminating-100s", "default/terminating-10s",
				"kube-system/ds-extensions-apiversion", "kube-system/ds-failed-present", "kube-system/ds-succeeded",
			},
			wantErrs: []string{
				"cannot delete Pods that declare no controller (use --force to override): default/ds-non-controller-owner, default/pending-unmanaged, default/terminating-100s-unmanaged, default/unmanaged-pod",
				`cannot delete daemonsets.apps "ds-present" not found: default/ds-present-other-namespace, default/terminating-100s-ds-present`,
				"cannot delete Pods with local storage (use --delete-emptydir-data to override): default/emptydir-rs, default/emptydir-unmanaged",
				`cannot delete daemonsets.apps "ds-missing" not found: kube-system/ds-missing-emptydir, kube-system/ds-missing-pod`,
				"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/ds-present-pod",
			},
		},
		{
			// Warnings of earlier filters are overwritten by later Okay
			// statuses: the missing-DaemonSet and local-storage warnings vanish.
			name: "--force --ignore-daemonsets --delete-emptydir-data --skip-wait-for-delete-timeout=30",
			opts: Options{Force: true, IgnoreAllDaemonSets: true, DeleteEmptyDirData: true, SkipWaitForDeleteTimeoutSeconds: 30},
			wantPods: []string{
				"default/ds-non-controller-owner", "default/ds-present-other-namespace",
				"default/emptydir-failed-unmanaged", "default/emptydir-rs", "default/emptydir-unmanaged",
				"default/failed-unmanaged", "default/hostpath-rs", "default/pending-unmanaged",
				"default/rs-pod", "default/statefulset-pod", "default/succeeded-unmanaged",
				"default/terminating-10s", "default/unmanaged-pod",
				"kube-system/ds-extensions-apiversion", "kube-system/ds-failed-present",
				"kube-system/ds-missing-emptydir", "kube-system/ds-missing-pod", "kube-system/ds-succeeded",
			},
			wantWarnings: "deleting Pods that declare no controller: default/ds-non-controller-owner, default/emptydir-unmanaged, default/pending-unmanaged, default/unmanaged-pod; " +
				"ignoring DaemonSet-managed Pods: kube-system/ds-present-pod",
		},
		{
			name: "--force only: missing DaemonSet warned and deleted, existing DaemonSet still refused",
			opts: Options{Force: true},
			wantPods: []string{
				"default/ds-non-controller-owner", "default/ds-present-other-namespace",
				"default/emptydir-failed-unmanaged", "default/failed-unmanaged", "default/hostpath-rs",
				"default/pending-unmanaged", "default/rs-pod", "default/statefulset-pod", "default/succeeded-unmanaged",
				"default/terminating-100s", "default/terminating-100s-ds-present", "default/terminating-100s-unmanaged",
				"default/terminating-10s", "default/unmanaged-pod",
				"kube-system/ds-extensions-apiversion", "kube-system/ds-failed-present",
				"kube-system/ds-missing-pod", "kube-system/ds-succeeded",
			},
			wantWarnings: "deleting Pods that declare no controller: default/ds-non-controller-owner, default/pending-unmanaged, default/terminating-100s-unmanaged, default/unmanaged-pod",
			wantErrs: []string{
				"cannot delete Pods with local storage (use --delete-emptydir-data to override): default/emptydir-rs, default/emptydir-unmanaged, kube-system/ds-missing-emptydir",
				"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/ds-present-pod",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			list, errs := PodsForDeletion(nodePods(now), tc.opts, dsLookup(existingDaemonSets()), now)
			if got := keys(list.Pods()); !reflect.DeepEqual(got, tc.wantPods) {
				t.Errorf("Pods() = %q\nwant %q", got, tc.wantPods)
			}
			if got := StableWarnings(list.Items); got != tc.wantWarnings {
				t.Errorf("StableWarnings = %q\nwant %q", got, tc.wantWarnings)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tc.wantErrs) {
				t.Errorf("errors = %q\nwant %q", got, tc.wantErrs)
			}
			if tc.wantErrs == nil && errs != nil {
				t.Errorf("errs must be nil when no pod errors")
			}
		})
	}
}

// --skip-wait-for-delete-timeout compares whole elapsed seconds, strictly.
func TestSkipWaitForDeleteTimeoutBoundary(t *testing.T) {
	cases := []struct {
		name     string
		age      time.Duration
		timeout  int
		wantSkip bool
	}{
		{"30.9s old, timeout 30: int(30.9)=30 is not > 30, kept", 30900 * time.Millisecond, 30, false},
		{"31s old, timeout 30: skipped", 31 * time.Second, 30, true},
		{"100s old, timeout 0 (off): kept", 100 * time.Second, 0, false},
		{"deletionTimestamp in the future: kept", -5 * time.Second, 30, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mkPod("default", "p", replicaSet("rs"), deletingSince(now, tc.age))
			list, errs := PodsForDeletion([]corev1.Pod{p}, Options{SkipWaitForDeleteTimeoutSeconds: tc.timeout}, nil, now)
			if errs != nil {
				t.Fatalf("errs %v", errs)
			}
			st := list.Items[0].Status
			if skipped := st == kdrain.MakePodDeleteStatusSkip(); skipped != tc.wantSkip {
				t.Fatalf("status %+v, want skipped=%v", st, tc.wantSkip)
			}
		})
	}
}

func TestNilDaemonSetLookupMeansNotFound(t *testing.T) {
	p := mkPod("kube-system", "agent", daemonSet("agent"))
	_, errs := PodsForDeletion([]corev1.Pod{p}, Options{IgnoreAllDaemonSets: true}, nil, now)
	if len(errs) != 1 || errs[0].Error() != `cannot delete daemonsets.apps "agent" not found: kube-system/agent` {
		t.Fatalf("errs = %v", errs)
	}
}

func TestInputNotModified(t *testing.T) {
	in := nodePods(now)
	before := make([]corev1.Pod, len(in))
	for i := range in {
		before[i] = *in[i].DeepCopy()
	}
	PodsForDeletion(in, Options{Force: true}, nil, now)
	if !reflect.DeepEqual(in, before) {
		t.Fatal("input pods were modified")
	}
}

// List's methods read as upstream PodDeleteList's do.
func TestListMethods(t *testing.T) {
	l := &List{Items: []kdrain.PodDelete{
		{Pod: mkPod("a", "one"), Status: kdrain.MakePodDeleteStatusOkay()},
		{Pod: mkPod("a", "two"), Status: kdrain.MakePodDeleteStatusWithWarning(true, "w")},
		{Pod: mkPod("a", "three"), Status: kdrain.MakePodDeleteStatusSkip()},
	}}
	if got := keys(l.Pods()); !reflect.DeepEqual(got, []string{"a/one", "a/two"}) {
		t.Fatalf("Pods() = %v", got)
	}
	if got := l.Warnings(); got != "w: a/two" {
		t.Fatalf("Warnings() = %q", got)
	}
	var none *List
	if len(none.Pods()) != 0 || none.Warnings() != "" {
		t.Fatal("nil list not empty")
	}
}
