package insights

import (
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
		{"quantity in a List", list, `test.yaml:4: Deployment shop/web: spec.template.spec.containers[0].resources.requests.cpu: "1x" is not a quantity`},
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
