package insights

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeNamesTheFieldOfABadValue: a quantity or a duration a type's own
// decoder refuses (which says neither field nor line) names its field, its
// line and what the field takes — as scenario validate words it, through
// the same function — in a document and in a List's item.
func TestDecodeNamesTheFieldOfABadValue(t *testing.T) {
	const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  selector:\n    matchLabels: {app: web}\n" +
		"  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        resources:\n          requests: {cpu: 1x}\n"
	const nodePool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n" +
		"  disruption:\n    budgets:\n    - {nodes: \"1\", schedule: \"0 22 * * *\", duration: 1d}\n"
	list := "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(deployment, "\n"), "\n", "\n  ") + "\n"
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"quantity", deployment, `test.yaml:14: Deployment shop/web: spec.template.spec.containers[0].resources.requests.cpu: "1x" is not a quantity; only its apiVersion was checked (use a number with an optional suffix`},
		{"quantity in a List", list, `test.yaml:4: Deployment shop/web: items[0].spec.template.spec.containers[0].resources.requests.cpu: "1x" is not a quantity`},
		// Helm's `app.kubernetes.io/version: {{ .Chart.AppVersion }}` with
		// appVersion "3.9" renders a number where a label value belongs.
		{"unquoted label value", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: alpine\n  labels:\n    app.kubernetes.io/version: 3.9\n", `test.yaml:5: Pod alpine: metadata.labels: expected a string, got number (quote the value`},
		{"budget duration", nodePool, `test.yaml:11: NodePool default: spec.disruption.budgets[0].duration: "1d" is not a duration; only its apiVersion was checked (use a number with a unit of h or m (the NodePool CRD's pattern)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := Decode("test.yaml", []byte(tc.doc))
			if len(problems) != 1 || !strings.HasPrefix(problems[0].Error(), tc.want) {
				t.Fatalf("got %v\nwant %s…", problems, tc.want)
			}
		})
	}
}

// TestListItemsCheckedOneByOne: a List whose items include junk — a
// string, a map without apiVersion and kind — is a manifest all the same:
// its good items are checked (the removed Ingress is found), and each bad
// item is one ERROR naming its index, not the whole file skipped as "not a
// manifest".
func TestListItemsCheckedOneByOne(t *testing.T) {
	const list = "apiVersion: v1\nkind: List\nitems:\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: ok, namespace: shop}\n" +
		"- just a string\n" +
		"- {metadata: {name: x}}\n" +
		"- apiVersion: extensions/v1beta1\n  kind: Ingress\n  metadata: {name: old, namespace: shop}\n"
	dir := t.TempDir()
	for name, data := range map[string]string{"list.yaml": list, "list.json": `{"apiVersion":"v1","kind":"List","items":[` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok","namespace":"shop"}},` + "\n" + `"just a string",` + "\n" + `{"metadata":{"name":"x"}},` + "\n" +
		`{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"old","namespace":"shop"}}]}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ file, string, missing string }{
		{"list.yaml", "list.yaml:7: items[1]: not a Kubernetes object: the item is a string", "list.yaml:8: x: items[2]: missing apiVersion or kind"},
		{"list.json", "list.json:2: items[1]: not a Kubernetes object: the item is a string", "list.json:3: x: items[2]: missing apiVersion or kind"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m, err := ReadPaths([]string{filepath.Join(dir, tc.file)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if m.Skipped.Total() != 0 || len(m.Objects) != 2 || len(m.Problems) != 2 {
				t.Fatalf("skipped %+v, %d objects, problems %v; want the 2 good items and 2 problems", m.Skipped, len(m.Objects), m.Problems)
			}
			for i, want := range []string{tc.string, tc.missing} {
				if got := m.Problems[i].Error(); !strings.HasPrefix(got, filepath.Join(dir, want)) {
					t.Errorf("problem %d: %s\nwant %s", i, got, want)
				}
			}
		})
	}
}

// TestObjectRefString: the OBJECT column reads like kubectl's kind/name,
// and a List item known only by its name has no stray leading space.
func TestObjectRefString(t *testing.T) {
	for _, tc := range []struct {
		ref  ObjectRef
		want string
	}{
		{ObjectRef{}, ""},
		{ObjectRef{Kind: "Pod"}, "Pod"},
		{ObjectRef{Kind: "Pod", Name: "web"}, "Pod web"},
		{ObjectRef{Kind: "Pod", Namespace: "shop", Name: "web"}, "Pod shop/web"},
		{ObjectRef{Name: "x"}, "x"},
		{ObjectRef{Namespace: "shop", Name: "x"}, "shop/x"},
	} {
		if got := tc.ref.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.ref, got, tc.want)
		}
	}
}
