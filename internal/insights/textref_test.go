package insights

import (
	"reflect"
	"strings"
	"testing"
)

// TestStdinProblemsNameTheObject: a document from standard input that does
// not parse is named by the kind, namespace and name its text gives — the
// line of a stream is not something its reader can open.
func TestStdinProblemsNameTheObject(t *testing.T) {
	stdin := strings.NewReader(deploymentWeb + "---\n# a comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    name: not-this\n  name: \"settings\" # the name\n  namespace: shop\ndata:\n  colors: [red, green\n" +
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop}\ndata: {a: [b}\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n")
	m, err := ReadPaths([]string{"-"}, stdin)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range (invalidManifest{}).Run(&Input{Problems: m.Problems}) {
		got = append(got, f.Object.String()+" @ "+f.Object.Source)
	}
	want := []string{"ConfigMap shop/settings @ <stdin>:22", "Secret shop/creds @ <stdin>:26", "ConfigMap @ <stdin>:29"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings name\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTextRef(t *testing.T) {
	for doc, want := range map[string]ObjectRef{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec: [": {APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "shop"},
		"kind: Service\nmetadata:\n    annotations:\n      name: x\n    name: 'api'\n":              {Kind: "Service", Name: "api"},
		"kind: Pod\nmetadata: {namespace: a, name: p}\n":                                            {Kind: "Pod", Name: "p", Namespace: "a"},
		"kind: Pod\nmetadata:\n  name: {{ .Values.name }}\n":                                        {Kind: "Pod"},
		"spec:\n  kind: Pod\n  metadata:\n    name: x\n":                                            {},
		"kind: Pod\nmetadata:\n  name: a\nspec:\n  name: b\n":                                       {Kind: "Pod", Name: "a"},
		"kind: Pod\nmetadata:\n  name: *anchor\n":                                                   {Kind: "Pod"},
		"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\n":                        {APIVersion: "v1", Kind: "ConfigMap", Name: "crlf"},
	} {
		if got := textRef([]byte(doc)); got != want {
			t.Errorf("textRef(%q) = %+v, want %+v", doc, got, want)
		}
	}
}
