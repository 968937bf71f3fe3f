package manifest

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestScanHead holds ScanHead to encoding/json's decoding into Head: the
// same fields, or ok false, for hand-made documents and for every YAML
// document of the repository (converted to JSON as the readers convert
// it).
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
		h, items, ok := ScanHead([]byte(raw), never)
		var want Head
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
		if !reflect.DeepEqual(h, want) || items != strings.Contains(raw, `"items"`) {
			t.Errorf("%s:\n got %+v items %v\nwant %+v", raw, h, items, want)
		}
	}
	// The repository's documents, through the fast YAML path.
	read := 0
	_ = filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var c Converter
		for _, d := range SplitDocuments(data) {
			js, _, err := c.ToJSON(d.Body)
			if err != nil {
				continue
			}
			var want Head
			if err := json.Unmarshal(js, &want); err != nil {
				continue // not an object's head: the readers decode it slowly
			}
			h, _, ok := ScanHead(js, never)
			if !ok {
				t.Errorf("%s:%d: ScanHead gave up on a head encoding/json reads", p, d.Line)
				continue
			}
			if !reflect.DeepEqual(h, want) {
				t.Errorf("%s:%d:\n got %+v\nwant %+v", p, d.Line, h, want)
			}
			read++
		}
		return nil
	})
	t.Logf("%d documents of the repository", read)
	if read < 100 {
		t.Errorf("only %d documents in the repository", read)
	}
}
