package manifest

import (
	"fmt"
	"strings"
	"testing"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

const stream = `# leading comment
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: checkout
spec:
  replicas: 10
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      containers:
        - name: checkout
          image: checkout:1
---
apiVersion: v1
kind: Service
metadata:
  name: checkout
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: checkout
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: checkout}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
  disruption:
    consolidateAfter: 30s
    budgets:
      - nodes: "1"
        reasons: [Drifted]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole
  amiFamily: AL2023
  amiSelectorTerms:
    - id: ami-0f676a166352f02ab
  subnetSelectorTerms: [{tags: {k: v}}]
  securityGroupSelectorTerms: [{tags: {k: v}}]
`

func TestDecodeStream(t *testing.T) {
	objs, err := Decode("apps.yaml", []byte(stream))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := []struct {
		name    string
		line    int
		ignored bool
	}{
		{"Deployment checkout/checkout", 3, false},
		{"Service", 20, true},
		{"PodDisruptionBudget default/checkout", 25, false},
		{"NodePool default", 34, false},
		{"EC2NodeClass default", 49, false},
	}
	if len(objs) != len(want) {
		t.Fatalf("got %d objects, want %d", len(objs), len(want))
	}
	for i, w := range want {
		if objs[i].Name() != w.name || objs[i].Source.Line != w.line || objs[i].Ignored != w.ignored {
			t.Errorf("object %d = %s at line %d ignored=%v, want %s at %d ignored=%v",
				i, objs[i].Name(), objs[i].Source.Line, objs[i].Ignored, w.name, w.line, w.ignored)
		}
	}
	d := objs[0].Object.(*appsv1.Deployment)
	if *d.Spec.Replicas != 10 {
		t.Errorf("replicas = %d, want 10", *d.Spec.Replicas)
	}
	if pdb := objs[2].Object.(*policyv1.PodDisruptionBudget); pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("maxUnavailable = %v, want 1", pdb.Spec.MaxUnavailable)
	}
	np := objs[3].Object.(*karpv1.NodePool)
	if got := np.Spec.Disruption.Budgets[0].Reasons[0]; got != karpv1.DisruptionReasonDrifted {
		t.Errorf("budget reason = %s", got)
	}
	if np.Spec.Disruption.ConsolidateAfter.Duration == nil || np.Spec.Disruption.ConsolidateAfter.Duration.Seconds() != 30 {
		t.Errorf("consolidateAfter = %v", np.Spec.Disruption.ConsolidateAfter)
	}
	nc := objs[4].Object.(*awsv1.EC2NodeClass)
	if nc.Spec.AMISelectorTerms[0].ID != "ami-0f676a166352f02ab" {
		t.Errorf("ami id = %q", nc.Spec.AMISelectorTerms[0].ID)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []string // substrings of the error, in order
	}{
		{
			name: "unknown field names its line and path",
			doc: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  replicass: 3
`,
			want: []string{"x.yaml:7: Deployment default/web: spec.replicass: unknown field"},
		},
		{
			name: "unknown field deep in a list",
			doc: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
        - name: a
          resourcez: {}
`,
			want: []string{"x.yaml:9:", "spec.template.spec.containers[0].resourcez: unknown field"},
		},
		{
			name: "wrong type",
			doc: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: "two"
`,
			want: []string{"x.yaml:5:", "spec.replicas: expected an integer, got string"},
		},
		{
			name: "duplicate field",
			doc: `apiVersion: v1
kind: Namespace
metadata:
  name: a
  name: b
`,
			want: []string{"x.yaml", "malformed YAML", "already set"},
		},
		{
			name: "malformed yaml",
			doc: `apiVersion: v1
kind: Namespace
metadata:
  name: [a
`,
			want: []string{"x.yaml:", "malformed YAML"},
		},
		{
			name: "unknown kind",
			doc:  "apiVersion: apps/v2\nkind: Deployment\nmetadata: {name: a}\n",
			want: []string{"x.yaml:1: Deployment: apiVersion: unknown kind \"Deployment\" in \"apps/v2\"", "read as apiVersion apps/v1"},
		},
		{
			name: "missing kind",
			doc:  "apiVersion: v1\nmetadata: {name: a}\n",
			want: []string{"x.yaml:1: missing apiVersion or kind"},
		},
		{
			name: "missing name",
			doc:  "apiVersion: v1\nkind: Namespace\nmetadata: {}\n",
			want: []string{"x.yaml:3: Namespace: metadata.name: missing"},
		},
		{
			name: "namespace on a cluster-scoped kind",
			doc:  "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: a\n  namespace: b\nspec: {template: {spec: {requirements: [], nodeClassRef: {name: x, kind: EC2NodeClass, group: karpenter.k8s.aws}}}}\n",
			want: []string{"x.yaml:5: NodePool b/a: metadata.namespace: NodePool is cluster-scoped"},
		},
		{
			name: "bad duration in a NodePool",
			doc:  "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec:\n  disruption:\n    consolidateAfter: 5x\n",
			want: []string{"x.yaml:", "NodePool a", "5x"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("x.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatal("want an error, got none")
			}
			msg := err.Error()
			if strings.Count(msg, "\n") != 0 {
				t.Errorf("error is not one line: %q", msg)
			}
			rest := msg
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error %q does not contain %q (in order)", msg, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestDecodeKeepsGoodDocumentsAroundABadOne(t *testing.T) {
	doc := "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\nspec: {finalizerz: []}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n"
	objs, err := Decode("ns.yaml", []byte(doc))
	if err == nil || !strings.Contains(err.Error(), "ns.yaml:8: Namespace b: spec.finalizerz: unknown field") {
		t.Fatalf("err = %v", err)
	}
	if len(objs) != 2 || objs[0].Object.GetName() != "a" || objs[1].Object.GetName() != "c" {
		t.Fatalf("good documents lost: %v", objs)
	}
}

func TestDecodeList(t *testing.T) {
	doc := `apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Namespace
    metadata: {name: a}
  - apiVersion: v1
    kind: Namespace
    metadata: {name: b}
`
	objs, err := Decode("list.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[1].Object.GetName() != "b" || objs[1].Source.Line != 7 {
		t.Fatalf("got %+v", objs)
	}
}

func TestDecodeJSON(t *testing.T) {
	objs, err := Decode("ns.json", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}`))
	if err != nil || len(objs) != 1 || objs[0].Object.GetName() != "a" {
		t.Fatalf("objs=%v err=%v", objs, err)
	}
}

func TestDecodeKeepsExplicitNever(t *testing.T) {
	doc := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      expireAfter: Never\n      requirements: []\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: x}\n  disruption:\n    consolidateAfter: 30s\n"
	objs, err := Decode("np.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	np := objs[0].Object.(*karpv1.NodePool)
	if ea := np.Spec.Template.Spec.ExpireAfter; ea.Duration != nil || string(ea.Raw) != `"Never"` {
		t.Fatalf("expireAfter = %+v, want an explicit Never", ea)
	}
	if ca := np.Spec.Disruption.ConsolidateAfter; ca.Duration == nil || ca.Duration.Seconds() != 30 {
		t.Fatalf("consolidateAfter = %+v", ca)
	}
}

// TestValidateSpec: the API server's own checks of a PodDisruptionBudget
// (policy validation), each naming its field and line.
func TestValidateSpec(t *testing.T) {
	const pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: app}\nspec:\n%s"
	cases := []struct {
		name, doc, want string // want: "" valid, else the error
	}{
		{"valid PDB percentage", fmt.Sprintf(pdb, "  maxUnavailable: \"100%\"\n"), ""},
		{"PDB with both", fmt.Sprintf(pdb, "  minAvailable: 1\n  maxUnavailable: 1\n"),
			"f.yaml:4: PodDisruptionBudget app/web: spec: minAvailable and maxUnavailable cannot be both set (keep one of the two)"},
		{"negative PDB maxUnavailable", fmt.Sprintf(pdb, "  maxUnavailable: -1\n"),
			"f.yaml:5: PodDisruptionBudget app/web: spec.maxUnavailable: -1: must be greater than or equal to 0 (use a non-negative integer or a percentage from 0% to 100%)"},
		{"PDB minAvailable over 100%", fmt.Sprintf(pdb, "  minAvailable: \"150%\"\n"),
			"f.yaml:5: PodDisruptionBudget app/web: spec.minAvailable: 150%: must not be greater than 100% (use a non-negative integer or a percentage from 0% to 100%)"},
		{"PDB percentage that is not one", fmt.Sprintf(pdb, "  minAvailable: \"half\"\n"),
			"f.yaml:5: PodDisruptionBudget app/web: spec.minAvailable: half: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%') (use a non-negative integer or a percentage from 0% to 100%)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Decode("f.yaml", []byte(tc.doc))
			if err != nil || len(objs) != 1 {
				t.Fatalf("decode: %v", err)
			}
			err = ValidateSpec(objs[0])
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestDecodeNamesTheFieldOfABadValue: a duration or a quantity a type's own
// decoder refuses names its field and line, and what the field takes.
func TestDecodeNamesTheFieldOfABadValue(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"a budget duration in days",
			"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  disruption:\n    budgets:\n      - nodes: \"0\"\n        schedule: \"@daily\"\n        duration: 1d\n",
			`f.yaml:9: NodePool default: spec.disruption.budgets[0].duration: "1d" is not a duration (use a number with a unit of h or m (the NodePool CRD's pattern), e.g. 24h for a day or 1h30m; Go durations have no d)`},
		{"a bad CPU quantity",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      resources:\n        requests: {cpu: 250zz}\n",
			`f.yaml:8: Pod p: spec.containers[0].resources.requests.cpu: "250zz" is not a quantity (use a number with an optional suffix, e.g. 250m or 1 CPU, 512Mi or 1Gi of memory)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("f.yaml", []byte(tc.doc))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
