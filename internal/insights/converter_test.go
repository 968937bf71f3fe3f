package insights

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/manifest"
)

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
