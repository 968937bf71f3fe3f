package insights

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/manifest"
)

func TestDecodeAnyKind(t *testing.T) {
	data := `# the shop
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
# a custom resource whose CRD has no schema Ladder knows
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: web
  namespace: shop
spec:
  endpoints: [{port: http}]
---
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: a, namespace: shop}
  - apiVersion: acme.io/v1alpha1
    kind: Widget
    metadata: {name: b}
`
	objs, problems := Decode("shop.yaml", []byte(data))
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	type row struct {
		apiVersion, kind, ns, name, source string
		typed                              bool
	}
	want := []row{
		{"v1", "Namespace", "", "shop", "shop.yaml:2", false},
		{"apps/v1", "Deployment", "shop", "web", "shop.yaml:7", true},
		{"monitoring.coreos.com/v1", "ServiceMonitor", "shop", "web", "shop.yaml:22", false},
		{"v1", "ConfigMap", "shop", "a", "shop.yaml:34", false},
		{"acme.io/v1alpha1", "Widget", "", "b", "shop.yaml:37", false},
	}
	if len(objs) != len(want) {
		t.Fatalf("got %d objects, want %d", len(objs), len(want))
	}
	for i, w := range want {
		o := objs[i]
		got := row{o.APIVersion, o.Kind, o.Namespace, o.Name, o.Source.String(), o.Typed != nil}
		if got != w {
			t.Errorf("object %d: got %+v, want %+v", i, got, w)
		}
	}
	if d, ok := objs[1].Typed.(*workloadSummary); !ok || d.replicas != 2 {
		t.Errorf("Deployment not decoded: %#v", objs[1].Typed)
	}
	if objs[1].Labels["app"] != "web" {
		t.Errorf("labels: %v", objs[1].Labels)
	}
}

func TestDecodeJSON(t *testing.T) {
	data := `{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "shop"}, "spec": {"minAvailable": 1}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}, "spec": {"replicas": 3}}
  ]
}`
	objs, problems := Decode("list.json", []byte(data))
	if len(problems) != 0 || len(objs) != 2 {
		t.Fatalf("objs %d problems %v", len(objs), problems)
	}
	if objs[0].Kind != "PodDisruptionBudget" || objs[0].Source.String() != "list.json:5" || objs[1].Source.String() != "list.json:6" {
		t.Errorf("got %s at %s, %s at %s", objs[0].Kind, objs[0].Source, objs[1].Kind, objs[1].Source)
	}
}

// TestDecodeBadDocuments: one bad document never hides the others, and
// each problem names file:line.
func TestDecodeBadDocuments(t *testing.T) {
	data := `apiVersion: v1
kind: ConfigMap
metadata: {name: good-1}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: broken
  labels: [not, a, map
---
kind: Service
metadata: {name: no-api-version}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: typo, namespace: shop}
spec:
  replica: 3
  selector: {matchLabels: {app: typo}}
  template:
    metadata: {labels: {app: typo}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: wrong-type, namespace: shop}
spec:
  replicas: three
---
- just
- a list
---
apiVersion: v1
kind: ConfigMap
metadata: {name: good-2}
`
	objs, problems := Decode("bad.yaml", []byte(data))
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
	}
	if got := strings.Join(names, ","); got != "good-1,typo,wrong-type,good-2" {
		t.Errorf("objects: %s", got)
	}
	want := []struct {
		sev  Severity
		text string
	}{
		{Error, "bad.yaml:9: Deployment broken: malformed YAML: did not find expected ',' or ']'; the document was not checked (fix the YAML syntax)"},
		{Error, "bad.yaml:11: Service no-api-version: missing apiVersion or kind; the document was not checked"},
		{Warning, "bad.yaml:18: Deployment shop/typo: spec.replica: unknown field (remove it or correct its spelling"},
		{Error, "bad.yaml:28: Deployment shop/wrong-type: spec.replicas: expected an integer, got string; only its apiVersion was checked (fix the value's type)"},
		{Error, "bad.yaml:30: not a Kubernetes object: the document is an array; the document was not checked"},
	}
	if len(problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(problems), len(want), problems)
	}
	for i, w := range want {
		if problems[i].Severity != w.sev || !strings.HasPrefix(problems[i].Error(), w.text) {
			t.Errorf("problem %d: got %s %q, want %s %q", i, problems[i].Severity, problems[i].Error(), w.sev, w.text)
		}
	}
	// The typo'd Deployment is still checked (decoded leniently).
	if objs[1].Typed == nil {
		t.Error("typo: not decoded")
	}
	if objs[2].Typed != nil {
		t.Error("wrong-type: decoded")
	}
}

func TestInvalidManifestCheck(t *testing.T) {
	in := input(t, "", "1.31", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: [x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	got := runCheck(t, "invalid-manifest", in)
	if len(got) != 1 || got[0].Severity != Error || got[0].Object.Source != "test.yaml:4" || !strings.Contains(got[0].Message, "malformed YAML") {
		t.Fatalf("got %s", dump(got))
	}
	expectFindings(t, runCheck(t, "invalid-manifest", input(t, "", "1.31", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")), nil)
}

func TestReadPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b/deploy.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	write("a.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	write("c.json", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`)
	write("README.md", "not a manifest")
	write(".git/config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n")
	stdin := strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n")

	m, err := ReadPaths([]string{dir, "-"}, stdin)
	if err != nil || len(m.Problems) != 0 {
		t.Fatalf("err %v problems %v", err, m.Problems)
	}
	var got []string
	for _, o := range m.Objects {
		rel, _ := filepath.Rel(dir, o.Source.File)
		if o.Source.File == StdinName {
			rel = StdinName
		}
		got = append(got, o.Name+"@"+rel)
	}
	if s := strings.Join(got, " "); s != "a@a.yml b@b/deploy.yaml c@c.json s@<stdin>" {
		t.Errorf("got %s", s)
	}

	for _, tc := range []struct {
		paths []string
		err   string
	}{
		{[]string{filepath.Join(dir, "missing.yaml")}, "missing.yaml: no such file or directory"},
		{[]string{t.TempDir()}, "the directory holds no .yaml, .yml, .json files"},
		{[]string{"-", "-"}, "standard input can be read only once"},
	} {
		if _, err := ReadPaths(tc.paths, strings.NewReader("")); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: got %v, want %q", tc.paths, err, tc.err)
		}
	}
}

// TestDecodeJSONListShortcut holds the JSON List shortcut (items validated
// and decoded in parallel) to the general path: the same objects and
// problems when it applies, and no result — so the general path (YAML,
// which accepts more) decides — whenever any part is not valid JSON.
func TestDecodeJSONListShortcut(t *testing.T) {
	item := func(body string) string {
		return `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}, "spec": ` + body + `}`
	}
	list := func(items ...string) string {
		return "\n  {\"apiVersion\": \"v1\", \"kind\": \"List\", \"metadata\": {\"resourceVersion\": \"7\"},\n \"items\": [\n" + strings.Join(items, ",\n") + "\n]}\n"
	}
	applies := map[string]string{
		"typed and untyped items": list(item(`{"replicas": 3}`), `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}`),
		"unknown field":           list(item(`{"replicas": 3, "replica": 2}`)),
		"wrong type in typed":     list(item(`{"replicas": "three"}`)),
		"item without kind":       list(`{"apiVersion": "v1", "metadata": {"name": "x"}}`),
		"item not an object":      list(`1`, `"x"`, `null`, item(`{}`)),
		"nested List":             list(list(item(`{"replicas": 1}`))),
		"empty items":             list(),
	}
	for name, data := range applies {
		t.Run(name, func(t *testing.T) {
			src := Source{File: "list.json", Line: 1}
			got, gotProblems, ok := decodeJSONList(src, []byte(data))
			if !ok {
				t.Fatal("shortcut did not apply")
			}
			want, wantProblems := decodeGeneral(src, []byte(data), nil)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("objects differ:\n got %v\nwant %v", got, want)
			}
			if fmt.Sprint(gotProblems) != fmt.Sprint(wantProblems) {
				t.Errorf("problems differ:\n got %v\nwant %v", gotProblems, wantProblems)
			}
		})
	}
	declines := map[string]string{
		"trailing comma in an item":   list(item(`{"replicas": 3,}`)),
		"bad literal in an untyped":   list(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": tru}`),
		"bad literal in a typed item": list(item(`{"replicas": 3, "paused": tru}`)),
		"bad value outside the items": strings.Replace(list(item(`{}`)), `"7"`, `7x`, 1),
		"two items keys":              strings.Replace(list(item(`{}`)), `"items"`, `"items": [], "items"`, 1),
		"more after the object":       list(item(`{}`)) + "{}",
		"not a List":                  item(`{}`),
		"YAML":                        "kind: List\nitems: []\n",
	}
	for name, data := range declines {
		t.Run(name, func(t *testing.T) {
			src := Source{File: "list.json", Line: 1}
			if _, _, ok := decodeJSONList(src, []byte(data)); ok {
				t.Error("shortcut applied")
			}
			got, gotProblems := Decode("list.json", []byte(data))
			want, wantProblems := decodeGeneral(src, []byte(data), nil)
			if !reflect.DeepEqual(got, want) || fmt.Sprint(gotProblems) != fmt.Sprint(wantProblems) {
				t.Errorf("Decode differs from the general path:\n got %v %v\nwant %v %v", got, gotProblems, want, wantProblems)
			}
		})
	}
}

// TestWorkloadSummary: a workload decoded from a manifest keeps only what
// the checks read of it — a repository of Deployments would otherwise hold
// kilobytes each in memory for no check — and that is what the checks
// read of the same object decoded into its upstream type (a scenario's, a
// live cluster's).
func TestWorkloadSummary(t *testing.T) {
	web := strings.Replace(deployment("shop", "web", 3, ""), "          ports: [{containerPort: 8080}]\n",
		"          ports: [{containerPort: 8080}]\n          env: [{name: A, value: b}]\n          resources: {requests: {cpu: 100m}}\n          livenessProbe: {tcpSocket: {port: 8080}}\n", 1)
	for _, tc := range []struct {
		name, doc string
		upstream  any
		want      *workloadSummary
	}{
		{"deployment", web, &appsv1.Deployment{}, &workloadSummary{replicas: 3, selector: LabelSet{{"app", "web"}},
			pod: PodTemplate{Labels: LabelSet{{"app", "web"}, {"tier", "web"}}, Spread: true, Containers: []ContainerSummary{{Name: "web", ReadinessProbe: true}}}}},
		{"replicas omitted, anti-affinity, two containers", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 1
              podAffinityTerm: {topologyKey: kubernetes.io/hostname}
      containers: [{name: db, image: postgres}, {name: exporter, image: exporter, readinessProbe: {tcpSocket: {port: 9187}}}]
`, &appsv1.StatefulSet{}, &workloadSummary{replicas: 1, selector: LabelSet{{"app", "db"}},
			pod: PodTemplate{Labels: LabelSet{{"app", "db"}}, Spread: true, Containers: []ContainerSummary{{Name: "db"}, {Name: "exporter", ReadinessProbe: true}}}}},
		{"do-not-disrupt on chosen pools", `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata:
      labels: {app: agent}
      annotations: {karpenter.sh/do-not-disrupt: "true"}
    spec:
      nodeSelector: {karpenter.sh/nodepool: system}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: karpenter.sh/nodepool, operator: In, values: [batch, gpu]}
                  - {key: karpenter.sh/nodepool, operator: NotIn, values: [spot]}
      containers: [{name: agent, image: agent}]
`, &appsv1.DaemonSet{}, &workloadSummary{selector: LabelSet{{"app", "agent"}},
			pod: PodTemplate{Labels: LabelSet{{"app", "agent"}}, DoNotDisrupt: true, Containers: []ContainerSummary{{Name: "agent"}},
				NodePools: []string{"system", "batch", "gpu"}, PoolsChosen: true}}},
		{"a Deployment's strategy and paused", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 4
  paused: true
  strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0, maxSurge: "50%"}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`, &appsv1.Deployment{}, &workloadSummary{replicas: 4, selector: LabelSet{{"app", "web"}},
			pod: PodTemplate{Labels: LabelSet{{"app", "web"}}, Containers: []ContainerSummary{{Name: "web"}}},
			rollout: &rolloutSpec{paused: true, strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromString("50%"))}}}}},
		{"a StatefulSet's updateStrategy", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 3
  updateStrategy: {rollingUpdate: {partition: 1, maxUnavailable: 2}}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres}]
`, &appsv1.StatefulSet{}, &workloadSummary{replicas: 3, selector: LabelSet{{"app", "db"}},
			pod: PodTemplate{Labels: LabelSet{{"app", "db"}}, Containers: []ContainerSummary{{Name: "db"}}},
			rollout: &rolloutSpec{updateStrategy: appsv1.StatefulSetUpdateStrategy{
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1), MaxUnavailable: ptr.To(intstr.FromInt32(2))}}}}},
		{"owned pod", `apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: shop
  labels: {app: web}
  annotations: {karpenter.sh/do-not-disrupt: "false"}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u}]
spec:
  containers: [{name: web, image: nginx}]
`, &corev1.Pod{}, &workloadSummary{replicas: 1, owned: true,
			pod: PodTemplate{Labels: LabelSet{{"app", "web"}}, Containers: []ContainerSummary{{Name: "web"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, problems := Decode("w.yaml", []byte(tc.doc))
			if len(objs) != 1 || len(problems) != 0 {
				t.Fatalf("%d objects, problems %v", len(objs), problems)
			}
			if got := objs[0].Typed; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decoded:\n got %+v\nwant %+v", got, tc.want)
			}
			if err := yaml.Unmarshal([]byte(tc.doc), tc.upstream); err != nil {
				t.Fatal(err)
			}
			if got := summarizeWorkload(tc.upstream); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("upstream:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestPDBSummary: a PodDisruptionBudget decoded from a manifest keeps its
// spec as policy/v1 — a policy/v1beta1 one converted as kube-apiserver
// converts it, its empty selector selecting no pod — the same spec its
// upstream object gives.
func TestPDBSummary(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      func(t *testing.T) policyv1.PodDisruptionBudgetSpec
	}{
		{"policy/v1", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop, labels: {app: web}}\nspec:\n  minAvailable: 50%\n  selector: {matchLabels: {app: web}}\n",
			func(t *testing.T) policyv1.PodDisruptionBudgetSpec {
				var p policyv1.PodDisruptionBudget
				if err := yaml.Unmarshal([]byte("spec:\n  minAvailable: 50%\n  selector: {matchLabels: {app: web}}\n"), &p); err != nil {
					t.Fatal(err)
				}
				return p.Spec
			}},
		{"policy/v1beta1 empty selector", "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: all, namespace: shop}\nspec:\n  maxUnavailable: 1\n  selector: {}\n",
			func(t *testing.T) policyv1.PodDisruptionBudgetSpec {
				var p policyv1beta1.PodDisruptionBudget
				if err := yaml.Unmarshal([]byte("spec:\n  maxUnavailable: 1\n  selector: {}\n"), &p); err != nil {
					t.Fatal(err)
				}
				return manifest.PDBFromV1beta1(&p).Spec
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, problems := Decode("pdb.yaml", []byte(tc.doc))
			if len(objs) != 1 || len(problems) != 0 {
				t.Fatalf("%d objects, problems %v", len(objs), problems)
			}
			sum, ok := objs[0].Typed.(*pdbSummary)
			if !ok {
				t.Fatalf("Typed is %T, want the summary", objs[0].Typed)
			}
			if want := tc.want(t); !reflect.DeepEqual(sum.spec, want) {
				t.Errorf("spec:\n got %+v\nwant %+v", sum.spec, want)
			}
		})
	}
	if !manifest.SelectsNoPodAsV1beta1(mustSummaryPDB(t, "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: all}\nspec: {selector: {}}\n").spec.Selector) {
		t.Error("an empty policy/v1beta1 selector selects pods once summarised")
	}
}

func mustSummaryPDB(t *testing.T, doc string) *pdbSummary {
	t.Helper()
	objs, _ := Decode("pdb.yaml", []byte(doc))
	if len(objs) != 1 {
		t.Fatalf("%d objects", len(objs))
	}
	return objs[0].Typed.(*pdbSummary)
}
