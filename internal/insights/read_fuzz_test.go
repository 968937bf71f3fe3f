package insights

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadManifests fuzzes the input path of ladder check: bytes on
// standard input through ReadPaths (split, YAML→JSON, head scan, typed
// decode, skipping) to objects and problems. Whatever the input, it must
// not panic or hang, every problem must be one bounded line, the result
// must be the same on a second read, and ReadPaths must agree with Decode
// on the files it does not skip. The seed corpus is the repository's own
// manifests (the built-in scenarios, internal/insights/testdata) and the
// hostile shapes the reader handles: templates, duplicate keys, Lists,
// aliases, non-manifests.
func FuzzReadManifests(f *testing.F) {
	for _, root := range []string{"../scenario/builtin", "testdata"} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && isManifestFile(d.Name()) {
				if data, err := os.ReadFile(p); err == nil {
					f.Add(data)
				}
			}
			return nil
		})
	}
	for _, s := range []string{
		configMapA + "---\n" + configMapA,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n",
		"{{- if .Values.enabled }}\napiVersion: v1\nkind: ConfigMap\n{{- end }}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: x\n  a: y\n",
		`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]}`,
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n  spec: {replicas: x}\n",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
		"apiVersion: v2\nname: chart\nversion: 1.0.0\n",
		"[1, 2]\n", "just text\n", "---\n---\n", "\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadPaths([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("standard input under the limit: %v", err)
		}
		for _, o := range m.Objects {
			if o.APIVersion == "" || o.Kind == "" {
				t.Errorf("object without apiVersion or kind: %+v", o)
			}
		}
		for _, p := range m.Problems {
			line := p.Error()
			if strings.ContainsAny(line, "\n\r") || len(line) > 2*maxMessage+4*maxNameInMessage+200 {
				t.Errorf("problem is not one short line (%d bytes): %.300q", len(line), line)
			}
		}
		again, err := ReadPaths([]string{"-"}, bytes.NewReader(data))
		if err != nil || !reflect.DeepEqual(again.Objects, m.Objects) || fmt.Sprint(again.Problems) != fmt.Sprint(m.Problems) || again.Skipped != m.Skipped {
			t.Errorf("a second read differs")
		}
		if m.Skipped.Total() == 0 {
			objs, problems := Decode(StdinName, data)
			if fmt.Sprint(objs) != fmt.Sprint(m.Objects) || fmt.Sprint(problems) != fmt.Sprint(m.Problems) {
				t.Errorf("ReadPaths and Decode differ:\n%v %v\n%v %v", m.Objects, m.Problems, objs, problems)
			}
		}
	})
}
