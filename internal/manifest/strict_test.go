package manifest_test

import (
	"encoding/json"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/manifest/stricttest"
)

// TestDecodeStrictMatchesUpstream holds DecodeStrict to UnmarshalStrict for
// every kind the twin models: on each document of the built-in scenarios
// and on edge cases (wrong types, overflow, nulls, unknown, duplicate and
// mis-cased fields, invalid UTF-8, lone surrogates, trailing bytes) it
// returns the same object, the same strict errors, and an error exactly
// when UnmarshalStrict errs.
func TestDecodeStrictMatchesUpstream(t *testing.T) {
	type doc struct {
		name string
		js   []byte
		gvk  schema.GroupVersionKind
	}
	var docs []doc
	for _, f := range stricttest.BuiltinManifests(t) {
		for _, body := range manifest.SplitBodies(f.Data) {
			js, err := yaml.YAMLToJSON(body)
			if err != nil {
				continue
			}
			var h struct{ APIVersion, Kind string }
			if json.Unmarshal(js, &h) != nil {
				continue
			}
			gvk := schema.FromAPIVersionAndKind(h.APIVersion, h.Kind)
			if _, ok := manifest.Modelled[gvk]; ok {
				docs = append(docs, doc{f.Name, js, gvk})
			}
		}
	}
	edges := []string{
		`{"spec":{"replicas":1.0}}`, `{"spec":{"replicas":3000000000}}`, `{"spec":null}`, `{"metadata":null}`,
		`{"metadata":{"labels":{"a":null},"creationTimestamp":null}}`, `{"metadata":{"creationTimestamp":"2024-01-01T00:00:00Z"}}`,
		`{"spec":{"template":{"spec":{"containers":[{"resources":{"requests":{"cpu":0.5,"memory":"1Gi"}}}]}}}}`,
		`{"spec":{"containers":[{"image":123}]}}`, `{"spec":{"capacity":{"storage":"10Gi"},"accessModes":["ReadWriteOnce"]}}`,
		`{"spec":{"minAvailable":"50%","maxUnavailable":0}}`, `{"Spec":{}}`, `{"kind":"a","kind":"b"}`,
		`{"spec":{"unknown":1}}`, "{\"metadata\":{\"name\":\"a\xffb\"}}", `{"metadata":{"name":"\ud800"}}`, `[]`, `{}`, `{}x`,
		`{"spec":{"template":{"spec":{"expireAfter":"720h"}},"disruption":{"budgets":[{"nodes":"10%"}]}}}`,
		`{"spec":{"expireAfter":"Never"}}`, `{"spec":{"kubelet":{"evictionSoftGracePeriod":{"memory.available":"1m30s"}}}}`,
	}
	for gvk := range manifest.Modelled {
		for _, e := range edges {
			docs = append(docs, doc{"edge " + e, []byte(e), gvk})
		}
	}
	accepted := 0
	for _, d := range docs {
		if stricttest.Compare(t, d.name+" ("+d.gvk.Kind+")", d.js, manifest.Modelled[d.gvk]) {
			accepted++
		}
	}
	if accepted < 50 || accepted == len(docs) {
		t.Fatalf("%d of %d documents accepted: the cases should cover both paths", accepted, len(docs))
	}
}

// TestFieldPath names the field of a strict decoder's error and nothing for
// an error that names none.
func TestFieldPath(t *testing.T) {
	_, strictErrs, err := manifest.DecodeStrict([]byte(`{"spec":{"replica":3}}`), func() *appsv1.Deployment { return &appsv1.Deployment{} })
	if err != nil || len(strictErrs) != 1 {
		t.Fatalf("DecodeStrict = %v, %v; want one strict error", strictErrs, err)
	}
	if got := manifest.FieldPath(strictErrs[0]); got != "spec.replica" {
		t.Errorf("FieldPath(%v) = %q, want spec.replica", strictErrs[0], got)
	}
	if got := manifest.FieldPath(errors.New("boom")); got != "" {
		t.Errorf("FieldPath of a plain error = %q, want empty", got)
	}
}
