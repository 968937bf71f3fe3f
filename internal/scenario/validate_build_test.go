package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// managedGroup and selfManagedGroup are node groups appended to the
// fixture's spec.nodeGroups (after its Karpenter group), to be edited by
// the cases.
const (
	fixtureGroupEnd = "capacityType: on-demand}\n"
	managedGroup    = fixtureGroupEnd +
		"    - name: mng\n      type: managed\n      managed:\n        instanceTypes: [m5.large]\n        desired: 2\n"
	selfManagedGroup = fixtureGroupEnd +
		"    - name: asg\n      type: self-managed\n      selfManaged:\n        instanceType: m5.large\n        desired: 2\n        launchTemplate: {imageId: ami-0f676a166352f02ab}\n"
	// fixtureManifestsEnd is the fixture's last manifest line; statefulSet
	// and daemonSet append a workload after it, to be edited by the cases.
	fixtureManifestsEnd = "  ports: [{port: 80}]\n"
	statefulSet         = fixtureManifestsEnd + "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: app}\nspec:\n  serviceName: db\n" +
		"  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: db, image: postgres, resources: {requests: {cpu: 100m}}}]}\n"
	daemonSet = fixtureManifestsEnd + "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: app}\nspec:\n  minReadySeconds: 0\n" +
		"  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec: {containers: [{name: agent, image: busybox, resources: {requests: {cpu: 10m}}}]}\n"
)

// TestValidateRefusesWhatBuildRefuses feeds scenarios whose starting nodes
// the twin cannot create to both scenario.Validate and twinbuild.Build:
// whatever Build refuses, Validate must refuse first, naming the field.
func TestValidateRefusesWhatBuildRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace []string
		field   string // in Validate's error
		file    string // the file Validate's error names, if not the scenario's
	}{
		// Karpenter's EC2NodeClass, resolved when the manifests are applied.
		{"nodeclass alias of no release", []string{"- id: ami-0f676a166352f02ab", "- alias: al2023@v20991231"}, "spec.amiSelectorTerms[0].alias", "/virtual/manifests/cluster.yaml:"},
		{"nodeclass name matching no AMI", []string{"- id: ami-0f676a166352f02ab", `- name: "no-such-image-*"`}, "spec.amiSelectorTerms[0].name", "/virtual/manifests/cluster.yaml:"},
		{"nodeclass id of the other arch than its node", []string{"- id: ami-0f676a166352f02ab", "- id: ami-24fd2cff8dae19a97"}, "spec.nodeGroups[0].karpenter.nodes[0].instanceType", ""},
		{"nodeclass name of the other arch than its node", []string{"- id: ami-0f676a166352f02ab", `- name: "amazon-eks-arm64-node-1.30-*"`}, "spec.nodeGroups[0].karpenter.nodes[0].instanceType", ""},
		// What only an action creates is not there for the starting manifests.
		{"nodepool of a class an action applies", []string{"name: default}\n      requirements", "name: late}\n      requirements",
			"    - wait: {settled: true}\n", "    - wait: {settled: true}\n    - apply: {inline: \"apiVersion: karpenter.k8s.aws/v1\\nkind: EC2NodeClass\\nmetadata: {name: late}\\nspec: {role: r, amiSelectorTerms: [{alias: al2023@latest}]}\\n\"}\n"},
			"spec.template.spec.nodeClassRef.name", "/virtual/manifests/cluster.yaml:"},
		{"workload in a namespace an action creates", []string{"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n---\n", "",
			"    - wait: {settled: true}\n", "    - wait: {settled: true}\n    - apply: {inline: \"apiVersion: v1\\nkind: Namespace\\nmetadata: {name: app}\\n\"}\n"},
			"metadata.namespace", "/virtual/manifests/cluster.yaml:"},
		// The NodePool CRD's rules on requirements.
		{"nodepool In without values", []string{"requirements: []", "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: []}]"}, "spec.template.spec.requirements[0].values", "/virtual/manifests/cluster.yaml:"},
		{"nodepool Gt of no integer", []string{"requirements: []", "requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [four]}]"}, "spec.template.spec.requirements[0].values", "/virtual/manifests/cluster.yaml:"},
		{"nodepool minValues above its values", []string{"requirements: []", "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5], minValues: 2}]"}, "spec.template.spec.requirements[0].minValues", "/virtual/manifests/cluster.yaml:"},
		// Managed node groups.
		{"managed mixed architectures", []string{fixtureGroupEnd, managedGroup, "instanceTypes: [m5.large]", "instanceTypes: [m5.large, m7g.large]"}, "spec.nodeGroups[1].managed.instanceTypes[1]", ""},
		{"managed version above the cluster's", []string{fixtureGroupEnd, managedGroup + "        version: \"1.31\"\n"}, "spec.nodeGroups[1].managed.version", ""},
		{"managed launch template without name", []string{fixtureGroupEnd, managedGroup + "        launchTemplate: {version: \"2\"}\n"}, "spec.nodeGroups[1].managed.launchTemplate.name", ""},
		{"managed custom AMI of the other arch", []string{fixtureGroupEnd, managedGroup + "        launchTemplate: {name: lt, imageId: ami-24fd2cff8dae19a97}\n"}, "spec.nodeGroups[1].managed.launchTemplate.imageId", ""},
		{"managed custom AMI unknown", []string{fixtureGroupEnd, managedGroup + "        launchTemplate: {name: lt, imageId: ami-00000000000000000}\n"}, "spec.nodeGroups[1].managed.launchTemplate.imageId", ""},
		{"managed custom AMI and a version", []string{fixtureGroupEnd, managedGroup + "        version: \"1.30\"\n        launchTemplate: {name: lt, imageId: ami-0f676a166352f02ab}\n"}, "spec.nodeGroups[1].managed.version", ""},
		{"managed amiType of the other arch", []string{fixtureGroupEnd, managedGroup + "        amiType: AL2023_ARM_64_STANDARD\n"}, "spec.nodeGroups[1].managed.amiType", ""},
		{"managed amiType with no AMI for the version", []string{fixtureGroupEnd, managedGroup + "        amiType: AL2_x86_64\n", `version: "1.30"`, `version: "1.33"`}, "spec.nodeGroups[1].managed.amiType", ""},
		{"managed amiType not modelled", []string{fixtureGroupEnd, managedGroup + "        amiType: WINDOWS_CORE_2022_x86_64\n"}, "spec.nodeGroups[1].managed.amiType", ""},
		{"managed amiType CUSTOM without an image", []string{fixtureGroupEnd, managedGroup + "        amiType: CUSTOM\n        launchTemplate: {name: lt, version: \"1\"}\n"}, "spec.nodeGroups[1].managed.amiType", ""},
		{"managed release the catalog lacks", []string{fixtureGroupEnd, managedGroup + "        releaseVersion: \"1.30.0-20200101\"\n"}, "spec.nodeGroups[1].managed.releaseVersion", ""},
		// Fargate: a micro-VM, and an address, per pod.
		{"fargate pods beyond the zones' addresses", []string{fixtureGroupEnd, fixtureGroupEnd + "    - name: fg\n      type: fargate\n      fargate:\n        selectors: [{namespace: app}]\n",
			"  replicas: 1\n", "  replicas: 9000\n"}, "spec.nodeGroups[1].fargate.selectors", ""},
		// Self-managed Auto Scaling groups.
		{"self-managed negative min", []string{fixtureGroupEnd, selfManagedGroup + "        min: -1\n"}, "spec.nodeGroups[1].selfManaged.min", ""},
		// Workloads: kube-apiserver's apps validation, which the twin applies.
		{"deployment Recreate with rollingUpdate", []string{"  replicas: 1\n", "  replicas: 1\n  strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}\n"}, "spec.strategy.rollingUpdate", "/virtual/manifests/cluster.yaml:"},
		{"deployment strategy of no type", []string{"  replicas: 1\n", "  replicas: 1\n  strategy: {type: BlueGreen}\n"}, "spec.strategy.type", "/virtual/manifests/cluster.yaml:"},
		{"deployment minReadySeconds past its deadline", []string{"  replicas: 1\n", "  replicas: 1\n  minReadySeconds: 600\n"}, "spec.progressDeadlineSeconds", "/virtual/manifests/cluster.yaml:"},
		{"deployment negative revisionHistoryLimit", []string{"  replicas: 1\n", "  replicas: 1\n  revisionHistoryLimit: -1\n"}, "spec.revisionHistoryLimit", "/virtual/manifests/cluster.yaml:"},
		{"deployment selector not matching its labels", []string{"labels: {app: web}", "labels: {app: www}"}, "spec.template.metadata.labels", "/virtual/manifests/cluster.yaml:"},
		{"deployment negative replicas", []string{"  replicas: 1\n", "  replicas: -3\n"}, "spec.replicas", "/virtual/manifests/cluster.yaml:"},
		{"deployment maxSurge and maxUnavailable 0", []string{"  replicas: 1\n", "  replicas: 1\n  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: \"0%\"}}\n"}, "spec.strategy.rollingUpdate.maxUnavailable", "/virtual/manifests/cluster.yaml:"},
		{"deployment maxUnavailable over 100%", []string{"  replicas: 1\n", "  replicas: 1\n  strategy: {rollingUpdate: {maxUnavailable: \"101%\"}}\n"}, "spec.strategy.rollingUpdate.maxUnavailable", "/virtual/manifests/cluster.yaml:"},
		{"statefulset negative replicas", []string{fixtureManifestsEnd, statefulSet, "  serviceName: db\n", "  serviceName: db\n  replicas: -1\n"}, "spec.replicas", "/virtual/manifests/cluster.yaml:"},
		{"deployment empty selector", []string{"matchLabels: {app: web}\n  template", "matchLabels: {}\n  template"}, "spec.selector", "/virtual/manifests/cluster.yaml:"},
		{"statefulset podManagementPolicy unknown", []string{fixtureManifestsEnd, statefulSet, "  serviceName: db\n", "  serviceName: db\n  podManagementPolicy: Sometimes\n"}, "spec.podManagementPolicy", "/virtual/manifests/cluster.yaml:"},
		{"statefulset OnDelete with rollingUpdate", []string{fixtureManifestsEnd, statefulSet, "  serviceName: db\n", "  serviceName: db\n  updateStrategy: {type: OnDelete, rollingUpdate: {partition: 1}}\n"}, "spec.updateStrategy.rollingUpdate", "/virtual/manifests/cluster.yaml:"},
		{"statefulset negative partition", []string{fixtureManifestsEnd, statefulSet, "  serviceName: db\n", "  serviceName: db\n  updateStrategy: {rollingUpdate: {partition: -1}}\n"}, "spec.updateStrategy.rollingUpdate.partition", "/virtual/manifests/cluster.yaml:"},
		{"statefulset maxUnavailable 0", []string{fixtureManifestsEnd, statefulSet, "  serviceName: db\n", "  serviceName: db\n  updateStrategy: {rollingUpdate: {maxUnavailable: 0}}\n"}, "spec.updateStrategy.rollingUpdate.maxUnavailable", "/virtual/manifests/cluster.yaml:"},
		{"statefulset negative minReadySeconds", []string{fixtureManifestsEnd, statefulSet, "  serviceName: db\n", "  serviceName: db\n  minReadySeconds: -1\n"}, "spec.minReadySeconds", "/virtual/manifests/cluster.yaml:"},
		{"daemonset maxSurge and maxUnavailable", []string{fixtureManifestsEnd, daemonSet, "  minReadySeconds: 0\n", "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}\n"}, "spec.updateStrategy.rollingUpdate.maxSurge", "/virtual/manifests/cluster.yaml:"},
		{"daemonset strategy of no type", []string{fixtureManifestsEnd, daemonSet, "  minReadySeconds: 0\n", "  updateStrategy: {type: Always}\n"}, "spec.updateStrategy.type", "/virtual/manifests/cluster.yaml:"},
		{"daemonset negative minReadySeconds", []string{fixtureManifestsEnd, daemonSet, "  minReadySeconds: 0\n", "  minReadySeconds: -5\n"}, "spec.minReadySeconds", "/virtual/manifests/cluster.yaml:"},
		{"daemonset selector not matching its labels", []string{fixtureManifestsEnd, daemonSet, "labels: {app: agent}", "labels: {app: agnt}"}, "spec.template.metadata.labels", "/virtual/manifests/cluster.yaml:"},
		{"self-managed AMI of the other arch", []string{fixtureGroupEnd, selfManagedGroup, "instanceType: m5.large\n        desired", "instanceType: m7g.large\n        desired"}, "spec.nodeGroups[1].selfManaged.launchTemplate.imageId", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.ParseFixture(t, tc.replace...)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if _, err := twinbuild.Build(sc, twinbuild.Options{}); err == nil {
				t.Fatalf("Build accepted the scenario; the case tests nothing")
			}
			_, err = sc.Validate()
			if err == nil {
				t.Fatalf("Validate accepted a scenario Build refuses")
			}
			file := tc.file
			if file == "" {
				file = "/virtual/scenario.yaml:"
			}
			if !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tc.field+":") {
				t.Fatalf("Validate's error does not name file:line and %s:\n%v", tc.field, err)
			}
		})
	}
}

// TestValidateRefusesANodePoolThatCanLaunchNothing: a NodePool whose
// EC2NodeClass selects AMIs of an architecture its requirements exclude
// builds, but the twin's Karpenter can launch no node for it and its pods
// stay Pending; Validate refuses it first, on the NodePool's requirements.
func TestValidateRefusesANodePoolThatCanLaunchNothing(t *testing.T) {
	noNodes := "      karpenter:\n        nodePool: default\n        nodes:\n          - {instanceType: m5.large, zone: us-west-2a, capacityType: on-demand}\n"
	amd64Only := "requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]"
	for _, tc := range []struct {
		name     string
		replace  []string
		launches bool
	}{
		{"arm64 AMI, amd64 pool", []string{"- id: ami-0f676a166352f02ab", "- id: ami-24fd2cff8dae19a97", "requirements: []", amd64Only}, false},
		{"arm64 AMI, pool of either arch", []string{"- id: ami-0f676a166352f02ab", "- id: ami-24fd2cff8dae19a97"}, true},
		{"amd64 AMI, amd64 pool", []string{"requirements: []", amd64Only}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.ParseFixture(t, append([]string{noNodes, "      karpenter:\n        nodePool: default\n"}, tc.replace...)...)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			tw, err := twinbuild.Build(sc, twinbuild.Options{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			tw.Engine.RunUntil(tw.Engine.Now().Add(10 * time.Minute))
			if launched := len(tw.Karpenter.NodeClaims()) > 0; launched != tc.launches {
				t.Fatalf("the twin launched a NodeClaim: %v, want %v", launched, tc.launches)
			}
			_, err = sc.Validate()
			if tc.launches {
				if err != nil {
					t.Fatalf("Validate refused a NodePool that launches: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate accepted a NodePool that can launch nothing")
			}
			if !strings.Contains(err.Error(), "/virtual/manifests/cluster.yaml:") || !strings.Contains(err.Error(), "spec.template.spec.requirements:") {
				t.Fatalf("Validate's error does not name file:line and the NodePool's requirements:\n%v", err)
			}
		})
	}
}
