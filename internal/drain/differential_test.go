package drain

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	kdrain "k8s.io/kubectl/pkg/drain"
)

// allOptions is every combination of the three flags, with and without
// --skip-wait-for-delete-timeout=30.
func allOptions() []Options {
	var out []Options
	for _, skip := range []int{0, 30} {
		for mask := 0; mask < 8; mask++ {
			out = append(out, Options{
				Force:                           mask&1 != 0,
				IgnoreAllDaemonSets:             mask&2 != 0,
				DeleteEmptyDirData:              mask&4 != 0,
				SkipWaitForDeleteTimeoutSeconds: skip,
			})
		}
	}
	return out
}

func optName(o Options) string {
	return fmt.Sprintf("force=%v,ignore-daemonsets=%v,delete-emptydir-data=%v,skip-wait=%d",
		o.Force, o.IgnoreAllDaemonSets, o.DeleteEmptyDirData, o.SkipWaitForDeleteTimeoutSeconds)
}

// TestDifferentialAgainstKubectl runs upstream
// (&drain.Helper{Client: fake}).GetPodsForDeletion and PodsForDeletion on the
// same node and requires identical per-pod statuses, Pods(), Warnings() and
// errors (semantics.md §D.3).
func TestDifferentialAgainstKubectl(t *testing.T) {
	now := time.Now()
	fixture := nodePods(now)
	dss := existingDaemonSets()

	// The fixture must exercise every filter outcome at least once over all
	// option sets, or the comparison proves little.
	seen := map[string]bool{}

	for _, opts := range allOptions() {
		t.Run(optName(opts), func(t *testing.T) {
			objs := []runtime.Object{}
			for i := range fixture {
				objs = append(objs, fixture[i].DeepCopy())
			}
			for _, ds := range dss {
				objs = append(objs, ds.DeepCopy())
			}
			helper := &kdrain.Helper{
				Ctx:                             context.Background(),
				Client:                          fake.NewSimpleClientset(objs...),
				Force:                           opts.Force,
				IgnoreAllDaemonSets:             opts.IgnoreAllDaemonSets,
				DeleteEmptyDirData:              opts.DeleteEmptyDirData,
				SkipWaitForDeleteTimeoutSeconds: opts.SkipWaitForDeleteTimeoutSeconds,
				Out:                             io.Discard,
				ErrOut:                          io.Discard,
			}
			wantList, wantErrs := helper.GetPodsForDeletion(nodeName)
			if wantList == nil {
				t.Fatalf("upstream returned no list: %v", wantErrs)
			}

			input := make([]corev1.Pod, len(fixture))
			for i := range fixture {
				input[i] = *fixture[i].DeepCopy()
			}
			gotList, gotErrs := PodsForDeletion(input, opts, dsLookup(dss), now)

			// Every pod gets a status, in list order.
			if len(gotList.Items) != len(fixture) {
				t.Fatalf("items: port %d, fixture %d", len(gotList.Items), len(fixture))
			}
			for i, g := range gotList.Items {
				if podKey(g.Pod) != podKey(fixture[i]) {
					t.Fatalf("item %d: port %s, fixture %s", i, podKey(g.Pod), podKey(fixture[i]))
				}
				seen[fmt.Sprintf("%s/%v", g.Status.Reason, g.Status.Delete)] = true
			}

			// Pods(): same pods, same order, same content (Kind/APIVersion set).
			wp, gp := normalize(wantList.Pods()), normalize(gotList.Pods())
			if !reflect.DeepEqual(wp, gp) {
				t.Errorf("Pods():\nupstream %v\nport     %v", keys(wp), keys(gp))
			}
			for _, p := range gp {
				if p.Kind != "Pod" || p.APIVersion != "v1" {
					t.Errorf("%s: TypeMeta %q %q", podKey(p), p.Kind, p.APIVersion)
				}
			}

			// Warnings(): upstream orders messages by map iteration; compare
			// the parts. StableWarnings must have the same parts.
			if a, b := warningParts(wantList.Warnings()), warningParts(gotList.Warnings()); !reflect.DeepEqual(a, b) {
				t.Errorf("Warnings():\nupstream %q\nport     %q", a, b)
			}
			if a, b := warningParts(wantList.Warnings()), warningParts(StableWarnings(gotList.Items)); !reflect.DeepEqual(a, b) {
				t.Errorf("StableWarnings:\nupstream %q\nport     %q", a, b)
			}

			// Errors: same strings (upstream order is random), nil when none.
			if (wantErrs == nil) != (gotErrs == nil) {
				t.Errorf("errs nil: upstream %v, port %v", wantErrs == nil, gotErrs == nil)
			}
			if a, b := errStrings(wantErrs), errStrings(gotErrs); !reflect.DeepEqual(a, b) {
				t.Errorf("errors:\nupstream %q\nport     %q", a, b)
			}
		})
	}

	for _, outcome := range []string{"Okay/true", "Skip/false", "Warning/true", "Warning/false", "Error/false"} {
		if !seen[outcome] {
			t.Errorf("fixture never produced outcome %s", outcome)
		}
	}
}

func podKey(p corev1.Pod) string { return p.Namespace + "/" + p.Name }

// normalize drops what the fake object tracker adds on its own.
func normalize(ps []corev1.Pod) []corev1.Pod {
	out := make([]corev1.Pod, len(ps))
	for i := range ps {
		p := *ps[i].DeepCopy()
		p.ResourceVersion = ""
		p.ManagedFields = nil
		out[i] = p
	}
	return out
}

func keys(ps []corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, podKey(p))
	}
	return out
}

func warningParts(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, "; ")
	sort.Strings(parts)
	return parts
}

func errStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}
