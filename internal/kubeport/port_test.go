package kubeport

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func s(v string) *string { return &v }

func TestNodePatchApplyTo(t *testing.T) {
	noSched := corev1.Taint{Key: "k", Value: "a", Effect: corev1.TaintEffectNoSchedule}
	noExec := corev1.Taint{Key: "k", Value: "b", Effect: corev1.TaintEffectNoExecute}
	other := corev1.Taint{Key: "other", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name       string
		labels     map[string]string
		taints     []corev1.Taint
		patch      NodePatch
		wantLabels map[string]string
		wantTaints []corev1.Taint
	}{
		{
			name:       "set and remove labels; nil map gets created",
			labels:     nil,
			patch:      NodePatch{Labels: map[string]*string{"a": s("1"), "gone": nil}},
			wantLabels: map[string]string{"a": "1"},
		},
		{
			name:       "remove a label that exists, overwrite another",
			labels:     map[string]string{"a": "1", "b": "2"},
			patch:      NodePatch{Labels: map[string]*string{"a": nil, "b": s("3")}},
			wantLabels: map[string]string{"b": "3"},
		},
		{
			name:       "add a taint; same key and effect replaces, another effect adds",
			taints:     []corev1.Taint{noSched},
			patch:      NodePatch{AddTaints: []corev1.Taint{{Key: "k", Value: "new", Effect: corev1.TaintEffectNoSchedule}, noExec}},
			wantTaints: []corev1.Taint{{Key: "k", Value: "new", Effect: corev1.TaintEffectNoSchedule}, noExec},
		},
		{
			name:       "remove a key removes every effect of it",
			taints:     []corev1.Taint{noSched, other, noExec},
			patch:      NodePatch{RemoveTaints: []string{"k"}},
			wantTaints: []corev1.Taint{other},
		},
		{
			name:       "removals run before additions",
			taints:     []corev1.Taint{noSched},
			patch:      NodePatch{RemoveTaints: []string{"k"}, AddTaints: []corev1.Taint{noExec}},
			wantTaints: []corev1.Taint{noExec},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}, Spec: corev1.NodeSpec{Taints: tc.taints}}
			tc.patch.ApplyTo(n)
			if !reflect.DeepEqual(n.Labels, tc.wantLabels) {
				t.Errorf("labels = %v, want %v", n.Labels, tc.wantLabels)
			}
			if len(n.Spec.Taints) != len(tc.wantTaints) || (len(tc.wantTaints) > 0 && !reflect.DeepEqual(n.Spec.Taints, tc.wantTaints)) {
				t.Errorf("taints = %v, want %v", n.Spec.Taints, tc.wantTaints)
			}
		})
	}
}

func TestValidateNodePatchResult(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		taints []corev1.Taint
		want   []string // substrings of the errors, in order
	}{
		{name: "valid", labels: map[string]string{"example.com/role": "batch"}, taints: []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoExecute}}},
		{name: "bad label key", labels: map[string]string{"bad key!": "x"}, want: []string{`metadata.labels: Invalid value: "bad key!"`}},
		{name: "bad label value", labels: map[string]string{"k": "not ok!"}, want: []string{`metadata.labels: Invalid value: "not ok!"`}},
		{name: "unknown effect", taints: []corev1.Taint{{Key: "a", Effect: "Sometimes"}}, want: []string{`spec.taints[0].effect: Unsupported value: "Sometimes"`}},
		{name: "missing effect", taints: []corev1.Taint{{Key: "a"}}, want: []string{"spec.taints[0].effect: Required value"}},
		{name: "bad taint key", taints: []corev1.Taint{{Key: "-a", Effect: corev1.TaintEffectNoSchedule}}, want: []string{`spec.taints[0].key: Invalid value: "-a"`}},
		{
			name:   "duplicate key and effect",
			taints: []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Value: "x", Effect: corev1.TaintEffectNoSchedule}},
			want:   []string{"spec.taints[1]: Duplicate value", "taints must be unique by key and effect pair"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateNodePatchResult(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}, Spec: corev1.NodeSpec{Taints: tc.taints}})
			got := errs.ToAggregate()
			if len(tc.want) == 0 {
				if got != nil {
					t.Fatalf("errors = %v, want none", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("no error, want %v", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("errors = %q, want it to contain %q", got.Error(), w)
				}
			}
		})
	}
}

func TestSortObjectsByNamespaceThenName(t *testing.T) {
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a-b", Name: "x"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "y"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "b"}},
	}
	SortObjects(pods)
	var got []string
	for _, p := range pods {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	want := []string{"a/b", "a/y", "a-b/x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v (storage-key order would put a-b/x before a/y)", got, want)
	}
}
