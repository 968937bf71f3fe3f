package insights

import (
	"fmt"
	"strings"
	"testing"
)

// withStrategy writes a Deployment's spec.strategy (or any spec field)
// into a manifest from deployment(): yaml goes before spec.selector,
// indented as a spec field.
func withStrategy(doc, yaml string) string {
	return strings.Replace(doc, "\n  selector:\n", "\n"+yaml+"  selector:\n", 1)
}

// statefulSet renders a StatefulSet whose pods carry app: name and tier:
// web; updateStrategy is its spec.updateStrategy as YAML ("" for none).
func statefulSet(ns, name string, replicas int, updateStrategy string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: %[3]d
  serviceName: %[2]s
%[4]s  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s, tier: web}}
    spec:
      containers: [{name: %[2]s, image: public.ecr.aws/docker/library/postgres:16, readinessProbe: {tcpSocket: {port: 5432}}}]
`, ns, name, replicas, updateStrategy)
}

// TestRolloutBelowPDBFloor: a Deployment's or StatefulSet's own rolling
// update, which no PodDisruptionBudget guards, taking the pods a budget
// selects below its floor — with upstream's numbers: 25% of 8 rounds down
// to 2 while 25% of 4 is 1, a StatefulSet cannot surge, its
// maxUnavailable is honoured from 1.37.
func TestRolloutBelowPDBFloor(t *testing.T) {
	const guard = "PodDisruptionBudgets do not guard rollouts"
	deployFix := "Set spec.strategy.rollingUpdate.maxSurge to at least 1 and maxUnavailable to 0, so new pods are Ready before old ones go"
	runCases(t, "rollout-below-pdb-floor", []checkCase{
		{name: "8 replicas, 25% → 2, under maxUnavailable 1", manifests: join(deployment("shop", "web", 8, ""), pdb("shop", "web", "{app: web}", "maxUnavailable: 1")),
			want: []want{{Warning, "Deployment shop/web", "spec.strategy", []string{
				"kubectl rollout restart of Deployment shop/web (8 replicas, maxUnavailable 25% → 2) keeps 6 Ready, below PodDisruptionBudget shop/web's floor of 7 (maxUnavailable 1): " + guard,
				deployFix + " (or maxUnavailable 1 at most)."}}}},
		{name: "4 replicas, 25% → 1, under maxUnavailable 1", manifests: join(deployment("shop", "web", 4, ""), pdb("shop", "web", "{app: web}", "maxUnavailable: 1"))},
		{name: "minAvailable 80% of 8 rounds up to 7", manifests: join(deployment("shop", "web", 8, ""), pdb("shop", "web", "{app: web}", `minAvailable: "80%"`)),
			want: []want{{Warning, "Deployment shop/web", "spec.strategy", []string{"keeps 6 Ready, below PodDisruptionBudget shop/web's floor of 7 (minAvailable 80%)"}}}},
		{name: "maxUnavailable 2 of 3 under minAvailable 2", manifests: join(
			withStrategy(deployment("shop", "web", 3, ""), "  strategy: {rollingUpdate: {maxUnavailable: 2}}\n"), pdb("shop", "web", "{app: web}", "minAvailable: 2")),
			want: []want{{Warning, "Deployment shop/web", "spec.strategy", []string{"(3 replicas, maxUnavailable 2) keeps 1 Ready, below", deployFix + " (or maxUnavailable 1 at most)."}}}},
		{name: "maxSurge 0 and maxUnavailable 10% of 3: both 0, so 1", manifests: join(
			withStrategy(deployment("shop", "web", 3, ""), "  strategy: {rollingUpdate: {maxUnavailable: \"10%\", maxSurge: 0}}\n"), pdb("shop", "web", "{app: web}", "minAvailable: 3")),
			want: []want{{Warning, "Deployment shop/web", "spec.strategy", []string{"(3 replicas, maxUnavailable 10% and maxSurge 0 both → 0, so 1) keeps 2 Ready", deployFix + "."}}}},
		{name: "maxUnavailable 0, maxSurge 1 keeps every pod", manifests: join(
			withStrategy(deployment("shop", "web", 3, ""), "  strategy: {rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}\n"), pdb("shop", "web", "{app: web}", "minAvailable: 3"))},
		{name: "Recreate", manifests: join(withStrategy(deployment("shop", "web", 3, ""), "  strategy: {type: Recreate}\n"), pdb("shop", "web", "{app: web}", "minAvailable: 1")),
			want: []want{{Warning, "Deployment shop/web", "spec.strategy", []string{"(3 replicas, strategy Recreate) keeps 0 Ready", "Use strategy type RollingUpdate", "(or maxUnavailable 2 at most)"}}}},
		{name: "paused: nothing rolls", manifests: join(
			withStrategy(deployment("shop", "web", 3, ""), "  paused: true\n  strategy: {type: Recreate}\n"), pdb("shop", "web", "{app: web}", "minAvailable: 1"))},
		{name: "1 replica surges under minAvailable 1", manifests: join(deployment("shop", "web", 1, ""), pdb("shop", "web", "{app: web}", "minAvailable: 1"))},
		{name: "HPA minimum", manifests: join(withStrategy(deployment("shop", "web", 1, ""), "  strategy: {rollingUpdate: {maxUnavailable: 1}}\n"), hpaWeb,
			pdb("shop", "web", "{app: web}", "minAvailable: 2")),
			want: []want{{Warning, "Deployment shop/web", "spec.strategy", []string{"(2 replicas (minReplicas of HorizontalPodAutoscaler web), maxUnavailable 1) keeps 1 Ready"}}}},
		{name: "single-replica StatefulSet under minAvailable 1 drops to 0", manifests: join(statefulSet("data", "db", 1, ""), pdb("data", "db", "{app: db}", "minAvailable: 1")),
			want: []want{{Warning, "StatefulSet data/db", "spec.updateStrategy", []string{
				"kubectl rollout restart of StatefulSet data/db (1 replica, maxUnavailable 1) keeps 0 Ready, below PodDisruptionBudget data/db's floor of 1 (minAvailable 1): " + guard,
				"Run at least 2 replicas: a StatefulSet cannot surge"}}}},
		{name: "StatefulSet 3 under minAvailable 2", manifests: join(statefulSet("data", "db", 3, ""), pdb("data", "db", "{app: db}", "minAvailable: 2"))},
		{name: "StatefulSet 3 under minAvailable 3", manifests: join(statefulSet("data", "db", 3, ""), pdb("data", "db", "{app: db}", "minAvailable: 3")),
			want: []want{{Warning, "StatefulSet data/db", "spec.updateStrategy", []string{"keeps 2 Ready", "Run at least 4 replicas, or lower PodDisruptionBudget data/db's floor to 2: a StatefulSet cannot surge"}}}},
		{name: "StatefulSet OnDelete does not roll", manifests: join(statefulSet("data", "db", 1, "  updateStrategy: {type: OnDelete}\n"), pdb("data", "db", "{app: db}", "minAvailable: 1"))},
		{name: "StatefulSet partition at the replicas does not roll", manifests: join(
			statefulSet("data", "db", 2, "  updateStrategy: {rollingUpdate: {partition: 2}}\n"), pdb("data", "db", "{app: db}", "minAvailable: 2"))},
		{name: "StatefulSet maxUnavailable 3 of 10 at 1.37", target: "1.37", manifests: join(
			statefulSet("data", "db", 10, "  updateStrategy: {rollingUpdate: {maxUnavailable: 3}}\n"), pdb("data", "db", "{app: db}", "maxUnavailable: 1")),
			want: []want{{Warning, "StatefulSet data/db", "spec.updateStrategy", []string{"(10 replicas, maxUnavailable 3) keeps 7 Ready, below PodDisruptionBudget data/db's floor of 9 (maxUnavailable 1)",
				"Set spec.updateStrategy.rollingUpdate.maxUnavailable to 1 at most, or lower PodDisruptionBudget data/db's floor to 7"}}}},
		{name: "StatefulSet maxUnavailable 3 ignored before 1.37", target: "1.36", manifests: join(
			statefulSet("data", "db", 10, "  updateStrategy: {rollingUpdate: {maxUnavailable: 3}}\n"), pdb("data", "db", "{app: db}", "maxUnavailable: 1"))},
		{name: "StatefulSet partition 8 of 10 takes 2 down", target: "1.37", manifests: join(
			statefulSet("data", "db", 10, "  updateStrategy: {rollingUpdate: {partition: 8, maxUnavailable: 5}}\n"), pdb("data", "db", "{app: db}", "minAvailable: 9")),
			want: []want{{Warning, "StatefulSet data/db", "spec.updateStrategy", []string{"(10 replicas, partition 8, maxUnavailable 5) keeps 8 Ready"}}}},
		{name: "a budget over two Deployments: the other stays at full count", manifests: join(
			withStrategy(deployment("shop", "web", 4, ""), "  strategy: {rollingUpdate: {maxUnavailable: 2}}\n"), deployment("shop", "api", 1, ""),
			pdb("shop", "front", "{tier: web}", "minAvailable: 4")),
			want: []want{{Warning, "Deployment shop/web", "spec.strategy", []string{
				"(4 replicas, maxUnavailable 2) keeps 2 Ready, so 3 of the pods PodDisruptionBudget shop/front selects with Deployment shop/api's 1, below its floor of 4 (minAvailable 4)",
				"(or maxUnavailable 1 at most)"}}}},
		{name: "a budget over a DaemonSet's pods: pdb-blocks-drain's", manifests: join(statefulSet("shop", "db", 1, ""), agentDS("shop", "agent"),
			pdb("shop", "front", "{tier: web}", "minAvailable: 1"))},
		{name: "a budget the pods never meet: pdb-blocks-drain's", manifests: join(deployment("shop", "web", 2, ""), pdb("shop", "web", "{app: web}", "minAvailable: 3"))},
	})
}
