package insights

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// deployment renders a Deployment like the workshop's, with a readiness
// probe and a zone spread unless extra says otherwise.
func deployment(ns, name string, replicas int, extra string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  replicas: %[3]d
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s, tier: web}
%[4]s    spec:
      containers:
        - name: %[2]s
          image: public.ecr.aws/nginx/nginx:1.27
          ports: [{containerPort: 8080}]
          readinessProbe:
            httpGet: {path: /health, port: 8080}
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels: {app: %[2]s}
`, ns, name, replicas, extra)
}

func pdb(ns, name, selector, budget string) string {
	return fmt.Sprintf(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: %s
  namespace: %s
spec:
  %s
  selector:
    matchLabels: %s
`, name, ns, budget, selector)
}

const hpaWeb = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - type: Resource
      resource:
        name: cpu
        target: {type: Utilization, averageUtilization: 70}
`

func join(docs ...string) string {
	s := ""
	for i, d := range docs {
		if i > 0 {
			s += "---\n"
		}
		s += d
	}
	return s
}

func TestPDBMissing(t *testing.T) {
	runCases(t, "pdb-missing", []checkCase{
		{name: "3 replicas without PDB", manifests: deployment("shop", "web", 3, ""),
			want: []want{{Warning, "Deployment shop/web", "", []string{"runs 3 replicas and no PodDisruptionBudget", "selector.matchLabels {app: web} and maxUnavailable: 1"}}}},
		{name: "PDB in another namespace does not count", manifests: join(deployment("shop", "web", 2, ""), pdb("other", "web", "{app: web}", "maxUnavailable: 1")),
			want: []want{{Warning, "Deployment shop/web", "", []string{"runs 2 replicas"}}}},
		{name: "HPA minimum of 2 counts", manifests: join(deployment("shop", "web", 1, ""), hpaWeb),
			want: []want{{Warning, "Deployment shop/web", "", []string{"2 replicas (minReplicas of HorizontalPodAutoscaler web)"}}}},
		{name: "covered by a PDB", manifests: join(deployment("shop", "web", 3, ""), pdb("shop", "web", "{app: web}", "maxUnavailable: 1"))},
		{name: "empty selector covers the namespace", manifests: join(deployment("shop", "web", 3, ""), `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: all, namespace: shop}
spec:
  maxUnavailable: 1
  selector: {}
`)},
		{name: "single replica is single-replica's business", manifests: deployment("shop", "web", 1, "")},
	})
}

func TestPDBBlocksDrain(t *testing.T) {
	runCases(t, "pdb-blocks-drain", []checkCase{
		{name: "maxUnavailable 0", manifests: join(deployment("shop", "web", 3, ""), pdb("shop", "web", "{app: web}", "maxUnavailable: 0")),
			want: []want{{Error, "PodDisruptionBudget shop/web", "spec.maxUnavailable", []string{"maxUnavailable 0: no pod it selects (app=web) can ever be evicted"}}}},
		{name: "maxUnavailable 0%", manifests: join(deployment("shop", "web", 3, ""), pdb("shop", "web", "{app: web}", `maxUnavailable: "0%"`)),
			want: []want{{Error, "PodDisruptionBudget shop/web", "spec.maxUnavailable", []string{"maxUnavailable 0%"}}}},
		{name: "minAvailable 100%", manifests: pdb("shop", "web", "{app: web}", `minAvailable: "100%"`),
			want: []want{{Error, "PodDisruptionBudget shop/web", "spec.minAvailable", []string{"minAvailable 100%"}}}},
		{name: "replicas 1 and minAvailable 1", manifests: join(deployment("shop", "web", 1, ""), pdb("shop", "web", "{app: web}", "minAvailable: 1")),
			want: []want{{Error, "PodDisruptionBudget shop/web", "spec.minAvailable", []string{"minAvailable 1 and selects 1 pod (Deployment shop/web with 1 replica)", "Run at least 2 replicas"}}}},
		{name: "minAvailable 3 of 3", manifests: join(deployment("shop", "web", 3, ""), pdb("shop", "web", "{app: web}", "minAvailable: 3")),
			want: []want{{Error, "PodDisruptionBudget shop/web", "spec.minAvailable", []string{"minAvailable 3 and selects 3 pods", "set minAvailable to 2 or less"}}}},
		{name: "minAvailable 90% of 3 rounds up to 3", manifests: join(deployment("shop", "web", 3, ""), pdb("shop", "web", "{app: web}", `minAvailable: "90%"`)),
			want: []want{{Error, "PodDisruptionBudget shop/web", "spec.minAvailable", []string{"minAvailable 90% and selects 3 pods"}}}},
		{name: "HPA can scale above: warning", manifests: join(deployment("shop", "web", 2, ""), hpaWeb, pdb("shop", "web", "{app: web}", "minAvailable: 2")),
			want: []want{{Warning, "PodDisruptionBudget shop/web", "spec.minAvailable", []string{"at their minimum scale"}}}},
		{name: "minAvailable 2 of 3 allows one", manifests: join(deployment("shop", "web", 3, ""), pdb("shop", "web", "{app: web}", "minAvailable: 2"))},
		{name: "maxUnavailable 1", manifests: join(deployment("shop", "web", 1, ""), pdb("shop", "web", "{app: web}", "maxUnavailable: 1"))},
		{name: "minAvailable 50% of 3 is 2", manifests: join(deployment("shop", "web", 3, ""), pdb("shop", "web", "{app: web}", `minAvailable: "50%"`))},
		{name: "pods from elsewhere: unknown count", manifests: pdb("shop", "web", "{app: web}", "minAvailable: 5")},
	})
}

// agentDS renders a DaemonSet whose pods carry app: name and tier: web.
func agentDS(ns, name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s, tier: web}}
    spec:
      containers: [{name: %[2]s, image: public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.4}]
`, ns, name)
}

// TestPDBBlocksDrainDaemonSet: a budget that needs the scale of its pods'
// controllers (maxUnavailable, a percentage minAvailable) over a
// DaemonSet's pods never allows an eviction — the disruption controller's
// sync fails with "daemonsets.apps does not implement the scale
// subresource" and leaves disruptionsAllowed 0 — while an integer
// minAvailable counts the pods and works.
func TestPDBBlocksDrainDaemonSet(t *testing.T) {
	scaleErr := `"daemonsets.apps does not implement the scale subresource"`
	fix := "Use an integer minAvailable"
	runCases(t, "pdb-blocks-drain", []checkCase{
		{name: "maxUnavailable 1", manifests: join(agentDS("logging", "fluent-bit"), pdb("logging", "fluent-bit", "{app: fluent-bit}", "maxUnavailable: 1")),
			want: []want{{Error, "PodDisruptionBudget logging/fluent-bit", "spec.maxUnavailable", []string{
				"has maxUnavailable 1 and selects the pods of DaemonSet logging/fluent-bit: for maxUnavailable the disruption controller reads the scale",
				scaleErr, "reason SyncFailed", "gets 429", fix}}}},
		{name: "minAvailable 50%", manifests: join(agentDS("logging", "fluent-bit"), pdb("logging", "fluent-bit", "{app: fluent-bit}", `minAvailable: "50%"`)),
			want: []want{{Error, "PodDisruptionBudget logging/fluent-bit", "spec.minAvailable", []string{
				"has minAvailable 50% and selects the pods of DaemonSet logging/fluent-bit: for a percentage minAvailable", scaleErr}}}},
		{name: "minAvailable 1 needs no scale", manifests: join(agentDS("logging", "fluent-bit"), pdb("logging", "fluent-bit", "{app: fluent-bit}", "minAvailable: 1"))},
		{name: "a Deployment's pods and a DaemonSet's", manifests: join(deployment("shop", "web", 3, ""), agentDS("shop", "agent"),
			pdb("shop", "front", "{tier: web}", "maxUnavailable: 1")),
			want: []want{{Error, "PodDisruptionBudget shop/front", "spec.maxUnavailable", []string{
				"selects the pods of DaemonSet shop/agent and of Deployment shop/web", scaleErr}}}},
		{name: "two DaemonSets", manifests: join(agentDS("shop", "agent"), agentDS("shop", "probe"), pdb("shop", "front", "{tier: web}", `maxUnavailable: "10%"`)),
			want: []want{{Error, "PodDisruptionBudget shop/front", "spec.maxUnavailable", []string{"selects the pods of DaemonSets shop/agent, shop/probe:", scaleErr}}}},
		{name: "maxUnavailable 0 over a DaemonSet: one finding", manifests: join(agentDS("shop", "agent"), pdb("shop", "agent", "{app: agent}", "maxUnavailable: 0")),
			want: []want{{Error, "PodDisruptionBudget shop/agent", "spec.maxUnavailable", []string{scaleErr, fix}}}},
		{name: "a DaemonSet in another namespace", manifests: join(deployment("shop", "web", 3, ""), agentDS("logging", "agent"),
			pdb("shop", "front", "{tier: web}", "maxUnavailable: 1"))},
	})
}

func TestPDBMultiple(t *testing.T) {
	runCases(t, "pdb-multiple", []checkCase{
		{name: "two PDBs select the same pods", manifests: join(deployment("shop", "web", 3, ""),
			pdb("shop", "web", "{app: web}", "maxUnavailable: 1"), pdb("shop", "frontends", "{tier: web}", "maxUnavailable: 1")),
			want: []want{{Error, "Deployment shop/web", "spec.template.metadata.labels", []string{"selected by 2 PodDisruptionBudgets (web, frontends)", "fails with 500"}}}},
		{name: "one PDB each", manifests: join(deployment("shop", "web", 3, ""), deployment("shop", "api", 3, ""),
			pdb("shop", "web", "{app: web}", "maxUnavailable: 1"), pdb("shop", "api", "{app: api}", "maxUnavailable: 1"))},
		{name: "same labels in another namespace", manifests: join(deployment("shop", "web", 3, ""),
			pdb("shop", "web", "{app: web}", "maxUnavailable: 1"), pdb("other", "web", "{app: web}", "maxUnavailable: 1"))},
	})
}

// pdbV1beta1Of renders a policy/v1beta1 PodDisruptionBudget; selector is
// the YAML of spec.selector.
func pdbV1beta1Of(ns, name, selector, budget string) string {
	return fmt.Sprintf(`apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: %s
  namespace: %s
spec:
  %s
  selector: %s
`, name, ns, budget, selector)
}

// TestPDBV1beta1 checks that every PDB check reads a policy/v1beta1 budget
// as kube-apiserver enforces it, an empty selector selecting no pod.
func TestPDBV1beta1(t *testing.T) {
	web := deployment("shop", "web", 3, "")
	t.Run("pdb-missing", func(t *testing.T) {
		runCases(t, "pdb-missing", []checkCase{
			{name: "a v1beta1 budget covers the pods", target: "1.24", manifests: join(web, pdbV1beta1Of("shop", "web", "{matchLabels: {app: web}}", "maxUnavailable: 1"))},
			{name: "a v1beta1 empty selector selects no pod", target: "1.24", manifests: join(web, pdbV1beta1Of("shop", "all", "{}", "maxUnavailable: 1")),
				want: []want{{Warning, "Deployment shop/web", "", []string{"runs 3 replicas and no PodDisruptionBudget"}}}},
			{name: "the v1beta1 match-all selector selects every pod", target: "1.24", manifests: join(web, pdbV1beta1Of("shop", "all",
				"{matchExpressions: [{key: pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match, operator: DoesNotExist}]}", "maxUnavailable: 1"))},
		})
	})
	t.Run("pdb-blocks-drain", func(t *testing.T) {
		runCases(t, "pdb-blocks-drain", []checkCase{
			{name: "v1beta1 maxUnavailable 0", target: "1.24", manifests: join(web, pdbV1beta1Of("shop", "web", "{matchLabels: {app: web}}", "maxUnavailable: 0")),
				want: []want{{Error, "PodDisruptionBudget shop/web", "spec.maxUnavailable", []string{"maxUnavailable 0: no pod it selects (app=web)"}}}},
			{name: "v1beta1 minAvailable 3 of 3", target: "1.24", manifests: join(web, pdbV1beta1Of("shop", "web", "{matchLabels: {app: web}}", "minAvailable: 3")),
				want: []want{{Error, "PodDisruptionBudget shop/web", "spec.minAvailable", []string{"selects 3 pods (Deployment shop/web with 3 replicas)"}}}},
			{name: "v1beta1 empty selector guards nothing", target: "1.24", manifests: join(web, pdbV1beta1Of("shop", "all", "{}", "maxUnavailable: 0"))},
		})
	})
	t.Run("pdb-multiple", func(t *testing.T) {
		runCases(t, "pdb-multiple", []checkCase{
			{name: "a v1 and a v1beta1 budget", target: "1.24", manifests: join(web, pdb("shop", "web", "{app: web}", "maxUnavailable: 1"),
				pdbV1beta1Of("shop", "frontends", "{matchLabels: {tier: web}}", "maxUnavailable: 1")),
				want: []want{{Error, "Deployment shop/web", "spec.template.metadata.labels", []string{"selected by 2 PodDisruptionBudgets (web, frontends)"}}}},
			{name: "a v1 budget and a v1beta1 empty selector", target: "1.24", manifests: join(web, pdb("shop", "web", "{app: web}", "maxUnavailable: 1"),
				pdbV1beta1Of("shop", "all", "{}", "maxUnavailable: 1"))},
		})
	})
}

// canary is a Deployment whose pods also carry app: web, covered by a
// budget of its own.
const canary = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web-canary, namespace: shop}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web, track: canary}
  template:
    metadata:
      labels: {app: web, track: canary}
    spec:
      containers: [{name: web, image: public.ecr.aws/nginx/nginx:1.27}]
`

// TestPDBMissingNeverOverlaps checks that the budget pdb-missing recommends
// never selects pods another budget (of either version) already selects.
func TestPDBMissingNeverOverlaps(t *testing.T) {
	canaryBudget := pdbV1beta1Of("shop", "canary", "{matchLabels: {track: canary}}", "maxUnavailable: 1")
	runCases(t, "pdb-missing", []checkCase{
		{name: "narrowed to the template's labels", target: "1.24", manifests: join(deployment("shop", "web", 3, ""), canary, canaryBudget),
			want: []want{{Warning, "Deployment shop/web", "", []string{"selector.matchLabels {app: web, tier: web} and maxUnavailable: 1"}}}},
		{name: "no label of its own", target: "1.24", manifests: join(strings.Replace(deployment("shop", "web", 3, ""), "labels: {app: web, tier: web}", "labels: {app: web}", 1), canary, canaryBudget),
			want: []want{{Warning, "Deployment shop/web", "", []string{"Give the pod template of Deployment shop/web a label of its own",
				"also select the pods of Deployment shop/web-canary, which PodDisruptionBudget canary already selects"}}}},
		{name: "a budget elsewhere does not narrow", target: "1.24", manifests: join(deployment("shop", "web", 3, ""), canary, pdbV1beta1Of("other", "canary", "{matchLabels: {track: canary}}", "maxUnavailable: 1")),
			want: []want{{Warning, "Deployment shop/web", "", []string{"selector.matchLabels {app: web} and maxUnavailable: 1"}}}},
	})
}

// TestEmptyV1beta1BudgetMigration: the API checks never tell the user to
// migrate an empty-selector v1beta1 budget as it is — in policy/v1 it would
// select every pod in the namespace, next to the budgets already there.
func TestEmptyV1beta1BudgetMigration(t *testing.T) {
	empty := pdbV1beta1Of("shop", "legacy", "{}", "maxUnavailable: 1")
	runCases(t, "removed-api", []checkCase{
		{name: "next to another budget", target: "1.25", manifests: join(deployment("shop", "web", 3, ""), pdb("shop", "web", "{app: web}", "maxUnavailable: 1"), empty),
			want: []want{{Error, "PodDisruptionBudget shop/legacy", "apiVersion", []string{"Delete PodDisruptionBudget shop/legacy rather than migrate it",
				"every pod in namespace shop", "with PodDisruptionBudget web put two budgets on one pod"}}}},
		{name: "alone", target: "1.25", manifests: empty,
			want: []want{{Error, "PodDisruptionBudget shop/legacy", "apiVersion", []string{"Delete PodDisruptionBudget shop/legacy rather than migrate it", "would block their evictions; to keep"}}}},
		{name: "a selector of its own migrates", target: "1.25", manifests: pdbV1beta1,
			want: []want{{Error, "PodDisruptionBudget shop/web", "apiVersion", []string{"Migrate to policy/v1 PodDisruptionBudget"}}}},
	})
	runCases(t, "deprecated-api", []checkCase{
		{name: "deprecated at 1.24", target: "1.24", manifests: empty,
			want: []want{{Warning, "PodDisruptionBudget shop/legacy", "apiVersion", []string{"Delete PodDisruptionBudget shop/legacy rather than migrate it"}}}},
	})
}

// TestEmptyV1beta1BudgetFromScenario: scenario objects arrive converted
// (manifest.Decode); the advice still applies.
func TestEmptyV1beta1BudgetFromScenario(t *testing.T) {
	objs, err := manifest.Decode("shop.yaml", []byte(pdbV1beta1Of("shop", "legacy", "{}", "maxUnavailable: 1")))
	if err != nil {
		t.Fatal(err)
	}
	in := &Input{Target: mustMinor("1.25"), Now: testNow, Objects: FromManifests(objs)}
	expectFindings(t, runCheck(t, "removed-api", in), []want{{Error, "PodDisruptionBudget shop/legacy", "apiVersion", []string{"Delete PodDisruptionBudget shop/legacy rather than migrate it"}}})
}
