package scenario

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// The mixed synthetic cluster of `ladder scenario generate --mix`: every
// node-group type a scenario can hold, as the workshop scenario
// (builtin/workshop) has them, at any size, upgraded by the playbook.

// MixMinNodes is the fewest nodes --mix accepts: enough for every EC2 kind
// to get at least one node in its proportion.
const MixMinNodes = 10

// mixMaxGroupNodes is the most nodes one generated managed node group gets:
// the EKS quota "Nodes per managed node group" (450). Larger shares are
// split over several groups of equal size.
const mixMaxGroupNodes = 450

// mixMaxFargatePods caps the Fargate profile's pods (each one a micro-VM
// and a node of its own).
const mixMaxFargatePods = 200

// Mix node-group names, namespaces and the EC2NodeClass/NodePool.
const (
	mixKarpenterGroup   = "karpenter"
	mixManagedPrefix    = "managed-"
	mixCustomPrefix     = "custom-ami-"
	mixSelfManagedGroup = "self-managed"
	mixFargateGroup     = "fargate"
	mixFargateNamespace = "serverless"
	mixNodePool         = "default"
)

// The aws-ebs-csi-driver versions of the mix: AWS publishes no
// per-Kubernetes-version table for it (internal/catalog/addons.csv has none),
// so it runs the workshop scenario's v1.35.0-eksbuild.1 and is pinned to the
// next add-on minor for the target, as EKS updates add-ons one minor at a
// time (internal/twin/eks CheckAddonUpdate).
const (
	mixEBSVersion = "v1.35.0-eksbuild.1"
	mixEBSTarget  = "v1.36.0-eksbuild.1"
)

// mixDaemons are the requests of the kube-system DaemonSets on every EC2
// node (generate_kube_system.yaml): aws-node 25m, kube-proxy 100m,
// ebs-csi-node 3 × 10m/40Mi.
const mixDaemonsCPU, mixDaemonsMemMi = 155, 120

// mixFargateCPU and mixFargateMemMi size a Fargate pod: the smallest
// Fargate configuration, 0.25 vCPU and 0.5 GB.
const mixFargateCPU, mixFargateMemMi = 250, 512

//go:embed generate_kube_system.yaml
var mixKubeSystem string

// MixSplit is how --mix shares the EC2 nodes among the node-group types.
type MixSplit struct {
	Karpenter, Managed, Custom, SelfManaged int
}

// SplitMix shares nodes among the EC2 kinds: 30% to managed groups updated
// in place, 10% to custom-AMI managed groups, 15% to the self-managed ASG
// (each rounded down, at least one) and the rest, about 45%, to Karpenter.
func SplitMix(nodes int) MixSplit {
	s := MixSplit{Managed: max(1, nodes*30/100), Custom: max(1, nodes*10/100), SelfManaged: max(1, nodes*15/100)}
	s.Karpenter = nodes - s.Managed - s.Custom - s.SelfManaged
	return s
}

// MixFargatePods is how many Fargate pods --mix adds: 5% of the EC2 nodes'
// pods, at least 1 and at most 200.
func MixFargatePods(nodes, podsPerNode int) int {
	return min(max(nodes*podsPerNode*5/100, 1), mixMaxFargatePods)
}

// checkMix refuses options that make no sense with Mix.
func checkMix(o GenerateOptions) error {
	if o.NoDrift {
		return fmt.Errorf("--no-drift cannot be combined with --mix: a mixed cluster has no drift action to leave out; the playbook (spec.upgrade) upgrades it, and `ladder rehearse --to` or editing spec.upgrade.to changes the target")
	}
	if o.Nodes < MixMinNodes {
		return fmt.Errorf("--nodes %d: --mix needs %d or more, to share them among Karpenter (45%%), managed (30%%), custom-AMI managed (10%%) and self-managed (15%%) groups", o.Nodes, MixMinNodes)
	}
	return nil
}

// groupSizes splits n nodes into groups of at most mixMaxGroupNodes, as
// even as they can be.
func groupSizes(n int) []int {
	k := (n + mixMaxGroupNodes - 1) / mixMaxGroupNodes
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
		if i < n%k {
			out[i]++
		}
	}
	return out
}

// mixAddon is an add-on of the mix: the version it runs and where it came
// from.
type mixAddon struct {
	name, version, source string
	pin                   string // for the target minor, if any
}

// mixAddonVersion is the embedded table's latest version of an add-on for
// minor, or, when the table has none for it, for the nearest older minor
// that has one.
func mixAddonVersion(name string, minor kubeversion.Minor) (version, source string, err error) {
	for m := minor; m.Minor > 0 && minor.Minor-m.Minor <= 10; m.Minor-- {
		if row, ok := catalog.LatestAddon(name, m.String()); ok {
			if m == minor {
				return row.Version, fmt.Sprintf("the embedded table's latest for %s", m), nil
			}
			return row.Version, fmt.Sprintf("the embedded table has none for %s; its latest for %s", minor, m), nil
		}
	}
	return "", "", fmt.Errorf("--mix: the embedded add-on table has no %s version for Kubernetes %s or the minors before it", name, minor)
}

// generateMix writes the mixed cluster: the control plane at from, Nodes
// EC2 nodes of one instance type shared among the node-group types
// (SplitMix), a Fargate profile for one namespace, the four EKS add-ons
// with their kube-system workloads, Deployments of 20 replicas (each with a
// maxUnavailable: 25% PDB) pinned to each group by nodeSelector so each
// group carries PodsPerNode pods per node, and spec.upgrade.to: target, so
// that `ladder rehearse` runs the whole-cluster playbook.
func generateMix(o GenerateOptions, from, target kubeversion.Minor, it catalog.InstanceType) ([]byte, error) {
	arch, amiType := catalog.ArchX8664, "AL2023_x86_64_STANDARD"
	if it.Arch == "arm64" {
		arch, amiType = catalog.ArchARM64, "AL2023_ARM_64_STANDARD"
	}
	oldAMI, err := catalog.ResolveAlias("al2023@latest", from.String(), arch, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("no AL2023 %s AMI for %s: %v", arch, from, err)
	}
	if _, err := catalog.ResolveAlias("al2023@latest", target.String(), arch, time.Time{}); err != nil {
		return nil, fmt.Errorf("no AL2023 %s AMI for %s: %v", arch, target, err)
	}
	var addons []mixAddon
	for _, name := range []string{"vpc-cni", "coredns", "kube-proxy"} {
		v, src, err := mixAddonVersion(name, from)
		if err != nil {
			return nil, err
		}
		addons = append(addons, mixAddon{name: name, version: v, source: src})
	}
	addons = append(addons, mixAddon{name: "aws-ebs-csi-driver", version: mixEBSVersion, pin: mixEBSTarget,
		source: "AWS publishes no version table for it: the workshop scenario's version, pinned one add-on minor up for the target"})
	rng := rand.New(rand.NewPCG(o.Seed, 0x6c6164646572))

	// Size pods so PodsPerNode of them fill ~80% of a node after daemons.
	alloc := it.Allocatable()
	podCPU := (alloc.Cpu().MilliValue() - mixDaemonsCPU) * 80 / 100 / int64(o.PodsPerNode)
	podMem := (alloc.Memory().Value()>>20 - mixDaemonsMemMi) * 80 / 100 / int64(o.PodsPerNode)
	if podCPU < 10 || podMem < 16 {
		return nil, fmt.Errorf("--pods-per-node %d is too many for %s", o.PodsPerNode, it.Name)
	}
	split := SplitMix(o.Nodes)
	fargatePods := MixFargatePods(o.Nodes, o.PodsPerNode)
	totalPods := o.Nodes*o.PodsPerNode + fargatePods

	// The EC2 groups, in the order the playbook upgrades them, with the
	// nodeSelector that pins workloads to each.
	type group struct {
		kind       string // Managed (in place), "custom" (custom-AMI managed), Karpenter or SelfManaged
		name       string
		nodes      int
		key, value string
	}
	var groups []group
	for i, n := range groupSizes(split.Managed) {
		name := fmt.Sprintf("%s%d", mixManagedPrefix, i+1)
		groups = append(groups, group{Managed, name, n, "eks.amazonaws.com/nodegroup", name})
	}
	nManaged := len(groups)
	for i, n := range groupSizes(split.Custom) {
		name := fmt.Sprintf("%s%d", mixCustomPrefix, i+1)
		groups = append(groups, group{"custom", name, n, "eks.amazonaws.com/nodegroup", name})
	}
	groups = append(groups,
		group{Karpenter, mixKarpenterGroup, split.Karpenter, "karpenter.sh/nodepool", mixNodePool},
		group{SelfManaged, mixSelfManagedGroup, split.SelfManaged, "alpha.eksctl.io/nodegroup-name", mixSelfManagedGroup})

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Generated by: ladder scenario generate --nodes %d --pods-per-node %d --seed %d --mix\n", o.Nodes, o.PodsPerNode, o.Seed)
	w("# %d EC2 nodes of %s: %d Karpenter, %d managed in %d group(s), %d custom-AMI managed in %d group(s),\n",
		o.Nodes, it.Name, split.Karpenter, split.Managed, nManaged, split.Custom, len(groups)-nManaged-2)
	w("# %d self-managed; %d pods per EC2 node and %d pods on Fargate (one node each).\n", split.SelfManaged, o.PodsPerNode, fargatePods)
	w("# `ladder rehearse` runs the playbook to %s: pre-checks, control plane, add-ons, then the node groups in spec.upgrade.order.\n", target)
	w("apiVersion: %s\nkind: %s\nmetadata:\n  name: synthetic-mix-%dn-%dp\n", APIVersion, Kind, o.Nodes, totalPods)
	w("  description: %d EC2 nodes of every kind and %d Fargate pods, %d pods, upgraded from %s to %s by the playbook\n", o.Nodes, fargatePods, totalPods, from, target)
	w("spec:\n  start: \"2026-03-30T10:00:00Z\"\n  seed: %d\n  timeLimit: 24h\n", o.Seed)
	w("  cluster:\n    name: synthetic\n    version: %q\n    region: us-west-2\n    zones: [us-west-2a, us-west-2b, us-west-2c]\n", from.String())
	w("  nodeGroups:\n")
	for i, g := range groups {
		age := 24 + rng.IntN(48)
		first := i == 0 || groups[i-1].kind != g.kind // comment the first group of a kind
		switch g.kind {
		case Managed:
			if first {
				w("    # EKS picks the AMI: UpdateNodegroupVersion rolls each group in place, 10%% of its nodes at a time.\n")
			}
			w("    - name: %s\n      type: managed\n      managed:\n        instanceTypes: [%s]\n", g.name, it.Name)
			w("        desired: %d\n        min: %d\n        max: %d\n", g.nodes, max(1, g.nodes/2), max(g.nodes, min(2*g.nodes, mixMaxGroupNodes)))
			w("        amiType: %s\n        version: %q\n        updateConfig: {maxUnavailablePercentage: 10}\n        age: %dh\n", amiType, from.String(), age)
			w("      upgrade:\n        strategy: in-place\n")
		case "custom":
			if first {
				w("    # A custom AMI (an image id in the launch template, so no version): the upgrade writes\n")
				w("    # the %s AMI into a new launch template version and rolls the group to it.\n", target)
			}
			w("    - name: %s\n      type: managed\n      managed:\n        instanceTypes: [%s]\n", g.name, it.Name)
			w("        desired: %d\n        min: %d\n        max: %d\n", g.nodes, max(1, g.nodes/2), max(g.nodes, min(2*g.nodes, mixMaxGroupNodes)))
			w("        amiType: CUSTOM\n        launchTemplate:\n          name: %s\n          version: \"1\"\n          # %s\n          imageId: %s\n", g.name, oldAMI.Name, oldAMI.ID)
			w("        updateConfig: {maxUnavailablePercentage: 10}\n        age: %dh\n", age)
			w("      upgrade:\n        strategy: in-place\n")
		case Karpenter:
			w("    # The EC2NodeClass selects al2023@latest, which follows the control plane: once it is at\n")
			w("    # %s every node drifts, and Karpenter replaces them under the NodePool's Drifted budget.\n", target)
			w("    - name: %s\n      type: karpenter\n      karpenter:\n        nodePool: %s\n        nodes:\n", g.name, mixNodePool)
			writeKarpenterNodes(w, rng, it.Name, g.nodes)
			w("      upgrade:\n        strategy: drift\n        ami: latest\n")
		case SelfManaged:
			w("    # An ASG outside EKS: the upgrade writes the %s AMI into its launch template and starts an\n", target)
			w("    # instance refresh; the termination lifecycle hook drains each node (Node Termination Handler style).\n")
			w("    - name: %s\n      type: self-managed\n      selfManaged:\n        instanceType: %s\n", g.name, it.Name)
			w("        desired: %d\n        min: %d\n        max: %d\n", g.nodes, max(1, g.nodes/2), 2*g.nodes)
			w("        launchTemplate:\n          name: %s\n          version: \"1\"\n          # %s\n          imageId: %s\n", g.name, oldAMI.Name, oldAMI.ID)
			w("        terminationHook: true\n        age: %dh\n", age)
			w("      upgrade:\n        strategy: instance-refresh\n        refresh:\n          minHealthyPercentage: 90\n          maxHealthyPercentage: 110\n          instanceWarmup: 60s\n")
		}
	}
	w("    # Each pod of namespace %s runs on a Fargate micro-VM of its own; a rollout restart moves them to %s.\n", mixFargateNamespace, target)
	w("    - name: %s\n      type: fargate\n      fargate:\n        selectors:\n          - namespace: %s\n      upgrade:\n        strategy: restart\n", mixFargateGroup, mixFargateNamespace)

	w("  addons:\n")
	for _, a := range addons {
		w("    # %s\n    - name: %s\n      version: %s\n", a.source, a.name, a.version)
		if a.pin != "" {
			w("      versions:\n        %q: %s\n", target.String(), a.pin)
		}
	}

	w("  manifests:\n")
	in := func(format string, args ...any) { writeInline(&b, format, args...) }
	// kube-system: the add-ons' workloads.
	version := map[string]string{}
	for _, a := range addons {
		version[a.name] = a.version
	}
	release := func(v string) string { r, _, _ := strings.Cut(v, "-eksbuild."); return r }
	kubeSystem := mixKubeSystem[strings.Index(mixKubeSystem, "apiVersion:"):]
	kubeSystem = strings.NewReplacer(
		"{{vpc-cni}}", version["vpc-cni"],
		"{{vpc-cni-release}}", release(version["vpc-cni"]),
		"{{kube-proxy}}", version["kube-proxy"],
		"{{kube-proxy-image}}", strings.Replace(version["kube-proxy"], "-eksbuild.", "-minimal-eksbuild.", 1),
		"{{coredns}}", version["coredns"],
		"{{aws-ebs-csi-driver}}", version["aws-ebs-csi-driver"],
		"{{aws-ebs-csi-driver-release}}", release(version["aws-ebs-csi-driver"]),
	).Replace(kubeSystem)
	w("    # The EKS add-ons' workloads in kube-system (spec.addons); the DaemonSets stay off Fargate.\n")
	w("    - inline: |\n")
	in("%s", strings.TrimSuffix(kubeSystem, "\n"))

	// Karpenter: the NodePool and its EC2NodeClass.
	w("    - inline: |\n")
	in("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: %s\nspec:\n  role: KarpenterNodeRole-synthetic\n  amiSelectorTerms:\n    - alias: al2023@latest\n  subnetSelectorTerms:\n    - tags: {karpenter.sh/discovery: synthetic}\n  securityGroupSelectorTerms:\n    - tags: {karpenter.sh/discovery: synthetic}\n---", mixNodePool)
	karpArch := "amd64"
	if it.Arch == "arm64" {
		karpArch = "arm64"
	}
	in("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: %s\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: %s}\n      requirements:\n        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n        - {key: kubernetes.io/arch, operator: In, values: [%s]}\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [%s]}\n  disruption:\n    consolidationPolicy: WhenEmpty\n    consolidateAfter: 5m\n    budgets:\n      - nodes: %q\n        reasons: [Drifted]\n---", mixNodePool, mixNodePool, karpArch, it.Name, o.Budget)

	// The applications: K pods per node of each EC2 group, then Fargate's.
	workloads := 0
	for _, g := range groups {
		workloads += (g.nodes*o.PodsPerNode + podsPerWorkload - 1) / podsPerWorkload
	}
	namespaces := o.Namespaces
	if namespaces <= 0 {
		namespaces = (workloads + 49) / 50
	}
	w("    - inline: |\n")
	for ns := 0; ns < namespaces; ns++ {
		in("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-%03d}\n---", ns)
	}
	in("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---", mixFargateNamespace)
	deployment := func(name, ns string, replicas int, cpu, mem int64, selector string) {
		in("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: %s}\nspec:\n  replicas: %d\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n%s      containers: [{name: app, image: app:1, resources: {requests: {cpu: %dm, memory: %dMi}}}]\n---", name, ns, replicas, name, name, selector, cpu, mem)
		in("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: %s, namespace: %s}\nspec:\n  maxUnavailable: 25%%\n  selector: {matchLabels: {app: %s}}\n---", name, ns, name)
	}
	i := 0
	for _, g := range groups {
		left := g.nodes * o.PodsPerNode
		for j := 0; left > 0; j++ {
			replicas := min(podsPerWorkload, left)
			left -= replicas
			deployment(fmt.Sprintf("%s-%05d", g.name, j), fmt.Sprintf("team-%03d", i%namespaces), replicas, podCPU, podMem,
				fmt.Sprintf("      nodeSelector: {%s: %s}\n", g.key, g.value))
			i++
		}
	}
	left := fargatePods
	for j := 0; left > 0; j++ {
		replicas := min(podsPerWorkload, left)
		left -= replicas
		deployment(fmt.Sprintf("%s-%05d", mixFargateGroup, j), mixFargateNamespace, replicas, mixFargateCPU, mixFargateMemMi, "")
	}

	w("  upgrade:\n    to: %q\n    order:\n", target.String())
	for _, g := range groups {
		w("      - %s\n", g.name)
	}
	w("      - %s\n", mixFargateGroup)
	return []byte(b.String()), nil
}
