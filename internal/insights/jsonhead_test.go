package insights

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// TestScanHead holds scanHead to encoding/json on the head fields.
func TestScanHead(t *testing.T) {
	never := func(string, string) bool { return false }
	docs := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"b","labels":{"x":"y","e\"sc":"v\\u00e9"},"annotations":null},"data":{"k":"v"}}`,
		`{"kind":"Service","spec":{"ports":[{"port":80}],"x":"}]"},"metadata":{"generateName":"g-"},"apiVersion":"v1"}`,
		` { "apiVersion" : "v1" , "kind" : "List" , "items" : [ ] } `,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"n":1}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":"oops"}`,
		`{"apiVersion":"v1"`,
	}
	for _, raw := range docs {
		h, items, ok := scanHead([]byte(raw), never)
		var want head
		err := json.Unmarshal([]byte(raw), &want)
		if !ok {
			if err == nil && !strings.Contains(raw, `"n":1`) {
				t.Errorf("%s: scanHead gave up on a valid document", raw)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: scanHead accepted what encoding/json rejects: %v", raw, err)
			continue
		}
		want.Items = nil
		if !reflect.DeepEqual(h, want) || items != strings.Contains(raw, `"items"`) {
			t.Errorf("%s:\n got %+v items %v\nwant %+v", raw, h, items, want)
		}
	}
	// The benchmark corpus, through the fast YAML path.
	for _, d := range manifest.SplitDocuments(benchCorpus(500)) {
		js, _, err := new(manifest.Converter).ToJSON(d.Body)
		if err != nil {
			t.Fatal(err)
		}
		h, _, ok := scanHead(js, never)
		var want head
		if err := json.Unmarshal(js, &want); err != nil || !ok {
			t.Fatalf("%s: ok %v err %v", js, ok, err)
		}
		if !reflect.DeepEqual(h, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", js, h, want)
		}
	}
}

// TestConverterBenchCorpus holds manifest.Converter to sigs.k8s.io/yaml
// over the benchmark corpus: the same JSON values for every document.
func TestConverterBenchCorpus(t *testing.T) {
	var c manifest.Converter
	for _, d := range manifest.SplitDocuments(benchCorpus(2000)) {
		got, _, err := c.ToJSON(d.Body)
		want, wantErr := yaml.YAMLToJSONStrict(d.Body)
		if err != nil || wantErr != nil {
			t.Fatalf("%v %v:\n%s", err, wantErr, d.Body)
		}
		var g, w any
		dg, dw := json.NewDecoder(bytes.NewReader(got)), json.NewDecoder(bytes.NewReader(want))
		dg.UseNumber()
		dw.UseNumber()
		if dg.Decode(&g) != nil || dw.Decode(&w) != nil || !reflect.DeepEqual(g, w) {
			t.Fatalf("values differ\n got %s\nwant %s", got, want)
		}
	}
}
