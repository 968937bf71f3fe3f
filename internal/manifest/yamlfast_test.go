package manifest

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// sameAsSlowPath checks fastYAMLToJSON against sigs.k8s.io/yaml: when the
// fast path accepts a document, the slow path must accept it too and give
// the same JSON values.
func sameAsSlowPath(t *testing.T, name string, doc []byte) (fast bool) {
	t.Helper()
	got, ok := fastYAMLToJSON(doc)
	if !ok {
		return false
	}
	want, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		t.Errorf("%s: fast path accepted a document the slow path rejects (%v):\n%s", name, err, doc)
		return true
	}
	var g, w any
	dg := json.NewDecoder(bytes.NewReader(got))
	dg.UseNumber()
	dw := json.NewDecoder(bytes.NewReader(want))
	dw.UseNumber()
	if err := dg.Decode(&g); err != nil {
		t.Errorf("%s: fast path wrote invalid JSON %s: %v", name, got, err)
		return true
	}
	if err := dw.Decode(&w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: values differ\nfast %s\nslow %s\ndoc:\n%s", name, got, want, doc)
	}
	return true
}

func TestFastYAMLCases(t *testing.T) {
	tests := []struct {
		doc  string
		fast bool // the fast path handles it (else it falls back)
	}{
		{"a: 1\nb: two\nc: 1.10\nd: 0x1F\ne: 0755\nf: 1_000\ng: 1e3\nh: +5\ni: -3\nj: .5\nk: 08\nl: 12345678901234567890\n", true},
		{"a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: n\ng: true\nh: ~\ni: null\nj:\nk: Null\n", true},
		{"a: \"quoted: yes\"\nb: 'single ''quotes'''\nc: \"esc \\\"q\\\" \\\\ \\n \\t \\u00e9\"\nd: \"#not a comment\"\n", true},
		{"a: plain # comment\nb: a#b\nc: http://x:80/y\nd: 250m\ne: 1536Mi\nf: \"0 2 * * *\"\ng: 10%\n", true},
		{"a: [1, two, 'three', \"four\", {x: y}, [], {}]\nb: {cpu: 250m, memory: 1536Mi}\nc: [ ]\nd: {a: [1, 2], b: {c: d}}\ne: [a, b, ]\n", true},
		{"a:\n  b:\n    c: d\n  e: [f]\nlist:\n- a\n- b: c\n  d: e\n-   f: g\n- - nested\n", false},
		{"list:\n- a\n- b: c\n  d: e\n-   f: g\n-\n  h: i\n- [x]\nafter: 1\n", true},
		{"items:\n  - name: a\n    ports:\n      - {containerPort: 80}\n    env:\n    - name: X\n      value: \"1\"\n  - name: b\n", true},
		{"script: |\n  echo one\n    indented\n\n  echo two\n\nnext: 1\n", true},
		{"a: |-\n  x\n  y\nb: |+\n  x\n\n\nc: >\n  folded\n  text\nd: >-\n  f\n", true},
		{"a: |\nb: 1\n", true},
		{"a: >\n  one\n\n  two\n", false},
		{"a: |2\n   x\n", false},
		{"a: &anchor 1\nb: *anchor\n", false},
		{"a: !!str 1\n", false},
		{"a: multi\n  line plain\n", false},
		{"a: \"multi\n  line quoted\"\n", false},
		{"a: [1,\n  2]\n", false},
		{"a: 1\na: 2\n", false},
		{"yes: 1\n", false},
		{"1: a\n", false},
		{"<<: {a: 1}\n", false},
		{"a: 2024-01-01\n", false},
		{"a: .inf\nb: -.Inf\n", false},
		{"a: 0b101\nb: -0b1\n", true},
		{"? complex\n: key\n", false},
		{"a:\tb\n", false},
		{"- a\n- b\n", false},
		{"a: b: c\n", false},
		{"a: [unclosed\n", false},
		{"a:\n  - x\n  y: 1\n", false},
		{"'quoted key': 1\n\"other\": [a]\n", true},
		{"a: 'it''s'\nb: \"\"\nc: ''\n", true},
		{"a:   spaced   \nb: x  # c\n", true},
		{"top:\n  # comment\n  a: 1 # c\n   # odd comment\n  b:\n    # lead\n    - x\n", true},
		{"a: - b\n", false},
		{"a: {b}\n", false},
		{"a: [b: c]\n", false},
		{"key with spaces: v\nk2 : v2\n", true},
	}
	for i, tc := range tests {
		fast := sameAsSlowPath(t, tc.doc, []byte(tc.doc))
		if fast != tc.fast {
			t.Errorf("case %d: fast path %v, want %v:\n%s", i, fast, tc.fast, tc.doc)
		}
	}
}

// TestFastYAMLRepository runs both paths over every YAML document in the
// repository and the shared seeds (internal/insights runs the benchmark
// corpus through the Converter: TestConverterBenchCorpus).
func TestFastYAMLRepository(t *testing.T) {
	var files []string
	for _, root := range []string{"../..", "../../../shared"} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
				return fs.SkipDir
			}
			if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" {
				files = append(files, p)
			}
			return nil
		})
	}
	docs, fast := 0, 0
	check := func(name string, data []byte) {
		for _, d := range SplitDocuments(data) {
			docs++
			if sameAsSlowPath(t, name, d.Body) {
				fast++
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			check(f, data)
		}
	}
	t.Logf("%d files, %d documents, %d on the fast path", len(files), docs, fast)
	if fast*10 < docs*8 {
		t.Errorf("only %d of %d documents on the fast path", fast, docs)
	}
}

func FuzzFastYAML(f *testing.F) {
	for _, s := range []string{"a: 1\n", "a:\n- b\n- c: d\n", "a: [x, {y: z}]\n", "a: |\n  x\n", "a: 'b''c'\n", "a: \"\\u00e9\"\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		sameAsSlowPath(t, "fuzz", doc)
		var c Converter
		if js, dup, err := c.ToJSON(doc); err == nil && dup.Line > 0 {
			sameAsKubectl(t, "fuzz", doc, js)
		}
	})
}

// sameAsKubectl checks that js, the Converter's JSON for a document with
// duplicate keys, holds the values sigs.k8s.io/yaml's non-strict YAMLToJSON
// (kubectl's conversion: the last value wins) gives.
func sameAsKubectl(t *testing.T, name string, doc, js []byte) {
	t.Helper()
	want, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Errorf("%s: converted a document kubectl rejects (%v):\n%s", name, err, doc)
		return
	}
	var g, w any
	dg, dw := json.NewDecoder(bytes.NewReader(js)), json.NewDecoder(bytes.NewReader(want))
	dg.UseNumber()
	dw.UseNumber()
	if err := dg.Decode(&g); err != nil {
		t.Errorf("%s: invalid JSON %s: %v", name, js, err)
		return
	}
	if err := dw.Decode(&w); err != nil || !reflect.DeepEqual(g, w) {
		t.Errorf("%s: values differ\n got %s\nwant %s\ndoc:\n%s", name, js, want, doc)
	}
}

// TestConverterDuplicateKeys: a document with duplicate keys converts as
// kubectl converts it — the last value wins, at every depth — on the fast
// path when it is block-style, and the first duplicate is named.
func TestConverterDuplicateKeys(t *testing.T) {
	tests := []struct {
		doc  string
		key  string
		line int
	}{
		{"a: 1\na: 2\n", "a", 2},
		{"a: 1\nb: x\na: [1, 2]\nb: {c: d}\n", "a", 3},
		{"spec:\n  replicas: 1\n  template:\n    x: 1\n  replicas: 3\n", "replicas", 5},
		{"list:\n- a: 1\n  a: 2\n- b: 1\nlist: [x]\n", "a", 3},
		{"a: 1\n" + strings.Repeat("k: v\n", 40) + "k: \"<&>\"\n", "k", 3},
	}
	for _, tc := range tests {
		var c Converter
		js, dup, err := c.ToJSON([]byte(tc.doc))
		if err != nil || dup.Key != tc.key || dup.Line != tc.line {
			t.Errorf("%q: %v, duplicate %+v, want %q at line %d", tc.doc, err, dup, tc.key, tc.line)
			continue
		}
		want, _ := yaml.YAMLToJSON([]byte(tc.doc))
		if string(js) != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", tc.doc, js, want)
		}
		sameAsKubectl(t, tc.doc, []byte(tc.doc), js)
	}
}
