package insights

import (
	"github.com/ladder-eks/ladder/internal/manifest"

	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/manifest/stricttest"
)

// TestDecodeStrictMatchesUpstream holds manifest.DecodeStrict's fast path to
// sigs.k8s.io/json's UnmarshalStrict: on every typed document of the
// benchmark corpus, the built-in scenarios' manifests and a set of edge
// cases (wrong types, overflow, nulls, unknown, duplicate and mis-cased
// fields, invalid UTF-8 and surrogates, trailing bytes), it returns what
// UnmarshalStrict returns for the kinds checks read — the same object, the same strict
// errors, an error exactly when it errs.
func TestDecodeStrictMatchesUpstream(t *testing.T) {
	type doc struct {
		name string
		js   []byte
		kind typedKey
	}
	var docs []doc
	addYAML := func(name string, data []byte) {
		for i, d := range manifest.SplitDocuments(data) {
			js, err := yaml.YAMLToJSON(d.Body)
			if err != nil {
				continue
			}
			h, _, ok := manifest.ScanHead(js, func(string, string) bool { return true })
			if !ok {
				continue
			}
			k := typedKey{h.APIVersion, h.Kind}
			if _, typed := typedKinds[k]; typed {
				docs = append(docs, doc{name + "#" + string(rune('0'+i%10)), js, k})
			}
		}
	}
	addYAML("corpus", benchCorpus(3000))
	for _, f := range stricttest.BuiltinManifests(t) {
		addYAML(f.Name, f.Data)
	}
	edges := []string{
		`{"spec":{"replicas":1.0}}`, `{"spec":{"replicas":1e2}}`, `{"spec":{"replicas":-0}}`,
		`{"spec":{"replicas":3000000000}}`, `{"spec":{"replicas":null}}`, `{"spec":null}`, `{"metadata":null}`,
		`{"metadata":{"labels":{"a":null}}}`, `{"metadata":{"creationTimestamp":null}}`,
		`{"metadata":{"creationTimestamp":"2024-01-01T00:00:00Z"}}`,
		`{"spec":{"template":{"spec":{"containers":[{"resources":{"requests":{"cpu":0.5,"memory":"1Gi"}}}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"ports":[{"containerPort":"80"}]}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"image":123}]}}}}`,
		`{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}}}}`,
		`{"spec":{"minAvailable":"50%","maxUnavailable":0}}`,
		`{"Spec":{}}`, `{"kind":"a","kind":"b"}`, `{"spec":{"unknown":1}}`, `{"spec":{"paused":"true"}}`,
		"{\"metadata\":{\"name\":\"a\xffb\"}}", `{"metadata":{"name":"\ud800"}}`, `[]`, `{}`, `{}x`, `{"spec":{"replicas":1}`,
		`{"spec":{"template":{"spec":{"expireAfter":"720h","disruption":{"budgets":[{"nodes":"10%"}]}}}}}`,
		`{"spec":{"kubelet":{"evictionSoftGracePeriod":{"memory.available":"1m30s"}}}}`,
		`{"spec":{"kubelet":{"evictionSoftGracePeriod":{"memory.available":90}}}}`,
	}
	for k := range typedKinds {
		for i, e := range edges {
			docs = append(docs, doc{"edge#" + string(rune('a'+i)), []byte(e), k})
		}
	}
	accepted := 0
	for _, d := range docs {
		if stricttest.Compare(t, d.name+" ("+d.kind.kind+")", d.js, typedKinds[d.kind]) {
			accepted++
		}
	}
	if accepted < 1000 || accepted == len(docs) {
		t.Fatalf("%d of %d documents accepted: the cases should cover both paths", accepted, len(docs))
	}
}
