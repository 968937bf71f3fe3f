package manifest

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// A scheduling.k8s.io/v1 PriorityClass decodes to the upstream type, as a
// cluster-scoped object the twin applies (not an ignored kind).
func TestDecodePriorityClass(t *testing.T) {
	cases := []struct {
		name, doc string
		value     int32
		policy    corev1.PreemptionPolicy
		err       string
	}{
		{name: "a class", doc: `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: batch
value: 1000
preemptionPolicy: Never
globalDefault: false
description: batch jobs
`, value: 1000, policy: corev1.PreemptNever},
		{name: "namespaced by mistake", doc: `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: batch
  namespace: jobs
value: 1000
`, err: `pc.yaml:5: PriorityClass jobs/batch: metadata.namespace: PriorityClass is cluster-scoped but has namespace "jobs" (remove metadata.namespace)`},
		{name: "value misspelt", doc: `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: batch
valeu: 1000
`, err: `pc.yaml:5: PriorityClass batch: valeu: unknown field (remove it or correct its spelling)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Decode("pc.yaml", []byte(tc.doc))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Decode error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(objs) != 1 || objs[0].Ignored {
				t.Fatalf("Decode = %+v, %v", objs, err)
			}
			pc, ok := objs[0].Object.(*schedulingv1.PriorityClass)
			if !ok || pc.Value != tc.value || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != tc.policy || pc.Namespace != "" {
				t.Fatalf("decoded %#v", objs[0].Object)
			}
		})
	}
}
