package render

import (
	"path/filepath"
	"strings"
	"testing"
)

// A values schema that names a schema outside itself is not loaded — not
// over the network, not from a file elsewhere on the disk — and the chart
// still renders, with a warning at the reference.
func TestHelmDoesNotLoadSchemasOutsideTheChart(t *testing.T) {
	dir := filepath.Join("testdata", "helm", "schema-ref")
	res, err := Helm(dir, HelmOptions{KubeVersion: "1.32"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Docs) != 1 {
		t.Fatalf("docs %d, want the ConfigMap", len(res.Docs))
	}
	if len(res.Problems) != 1 {
		t.Fatalf("problems %v, want one", res.Problems)
	}
	p := res.Problems[0]
	if !p.Warning || p.File != filepath.Join(dir, "values.schema.json") || p.Line != 5 ||
		!strings.Contains(p.Message, `"https://schemas.example.com/image.json" was not fetched`) {
		t.Errorf("problem %+v", p)
	}

	chart := copyChart(t, dir)
	write(t, filepath.Join(chart, "values.schema.json"), `{"properties": {"image": {"$ref": "file:///etc/passwd"}}}`)
	res, err = Helm(chart, HelmOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, `"file:///etc/passwd" was not fetched`) || len(res.Docs) != 1 {
		t.Errorf("file $ref: problems %v docs %d", res.Problems, len(res.Docs))
	}

	for _, local := range []string{`{"$ref": "#/$defs/x", "$defs": {"x": {"type": "object"}}}`, `{"$schema": "https://json-schema.org/draft/2020-12/schema#"}`} {
		write(t, filepath.Join(chart, "values.schema.json"), local)
		if res, err = Helm(chart, HelmOptions{}); err != nil || len(res.Problems) != 0 {
			t.Errorf("%s: problems %v (%v), want none: the schema is self-contained", local, res.Problems, err)
		}
	}
}
