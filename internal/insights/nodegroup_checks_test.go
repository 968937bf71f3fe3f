package insights

import (
	"testing"
	"time"
)

func TestPVZone(t *testing.T) {
	orders := Volume{Namespace: "orders", Claim: "orders-mysql-data", StorageClass: "gp3", Zone: "us-west-2a",
		Pods: []string{"orders/orders-mysql-0"}, Nodes: []string{"blue-0"}, Workloads: []string{"Deployment orders/orders-mysql"}}
	blue := func(green []string) func() *Cluster {
		return func() *Cluster {
			g, n := ec2Group("blue", GroupManaged, "1.30", 2)
			if green != nil {
				g.Replacement = &Replacement{Name: "green", Zones: green}
			}
			return groups(g, n, orders)
		}
	}
	runClusterCases(t, "pv-zone", []clusterCase{
		{name: "in place: new nodes come up in the old zones", current: "1.30", cluster: blue(nil)},
		{name: "green has the volume's zone", current: "1.30", cluster: blue([]string{"us-west-2a", "us-west-2b"})},
		{name: "green lacks the volume's zone", current: "1.30", cluster: blue([]string{"us-west-2b", "us-west-2c"}), want: []want{
			{Error, "PersistentVolumeClaim orders/orders-mysql-data", "", []string{
				"EBS volume is in us-west-2a and used by Deployment orders/orders-mysql on managed node group blue, whose blue/green replacement green has zones us-west-2b, us-west-2c only",
				"volume node affinity conflict", "Create green with a subnet in us-west-2a"}},
		}},
		{name: "a NodePool limited to other zones", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("default", GroupKarpenter, "1.30", 1)
			g.Zones = []string{"us-west-2b"}
			v := orders
			v.Nodes = []string{"default-0"}
			return groups(g, n, v)
		}, want: []want{{Error, "PersistentVolumeClaim orders/orders-mysql-data", "", []string{"Karpenter NodePool default, which launches new nodes in us-west-2b only"}}}},
	})
}

func TestCustomAMINodegroup(t *testing.T) {
	runClusterCases(t, "custom-ami-nodegroup", []clusterCase{
		{name: "EKS picks the AMI", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("initial", GroupManaged, "1.30", 2)
			return groups(g, n)
		}},
		{name: "a launch template with an image id", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("custom-Y", GroupCustomAMI, "1.30", 2)
			g.CustomAMI, g.AMIType, g.LaunchTemplate = true, "CUSTOM", "custom-Y:1"
			g.AMIs = []string{"ami-0f676a166352f02ab"}
			return groups(g, n)
		}, want: []want{{Warning, "NodeGroup custom-Y", "", []string{
			"managed node group custom-Y (custom AMI) runs ami-0f676a166352f02ab (amazon-eks-node-al2023-x86_64-standard-1.30-v20260220) from launch template custom-Y:1",
			"the next control-plane update after 1.31 is refused", "--launch-template name=custom-Y,version=NEW", "amazon-eks-node-al2023-x86_64-standard-1.31-"}}}},
		{name: "a self-managed group's AMI is its own to bump", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("selfmng", GroupSelfManaged, "1.30", 2)
			g.CustomAMI, g.LaunchTemplate, g.AMIs = true, "selfmng:3", []string{"ami-0f676a166352f02ab"}
			return groups(g, n)
		}, want: []want{{Warning, "NodeGroup selfmng", "", []string{"self-managed node group selfmng runs", "instance refresh"}}}},
		{name: "a custom AMI beyond the skew policy at the next hop", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("custom-Y", GroupCustomAMI, "1.27", 1)
			g.CustomAMI, g.LaunchTemplate = true, "custom-Y:1"
			return groups(g, n)
		}, want: []want{{Error, "NodeGroup custom-Y", "", []string{"its AMI is built for 1.27, beyond the kubelet skew policy at 1.31"}}}},
	})
}

func TestAL2EndOfLife(t *testing.T) {
	al2 := func() *Cluster {
		g, n := ec2Group("legacy", GroupManaged, "1.32", 2)
		g.AMIType, g.AMIFamily = "AL2_x86_64", "al2"
		return groups(g, n)
	}
	runClusterCases(t, "al2-end-of-life", []clusterCase{
		{name: "AL2023 nodes", current: "1.32", cluster: func() *Cluster {
			g, n := ec2Group("initial", GroupManaged, "1.32", 2)
			return groups(g, n)
		}},
		{name: "AL2 nodes before AL2's end of support, staying at 1.32", current: "1.31", target: "1.32", now: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), cluster: al2},
		{name: "AL2 nodes and a hop to 1.33", current: "1.32", cluster: al2, want: []want{
			{Error, "NodeGroup legacy", "", []string{"managed node group legacy runs Amazon Linux 2 (amiType AL2_x86_64): there are no AL2 AMIs for Kubernetes 1.33 (the last are for 1.32)", "Move legacy to AL2023"}},
		}},
		{name: "AL2 nodes and 1.33 a later hop", current: "1.31", target: "1.33", cluster: al2, want: []want{
			{Warning, "NodeGroup legacy", "", []string{"no AL2 AMIs for Kubernetes 1.33"}},
		}},
		{name: "AL2 nodes past AL2's end of support", current: "1.30", target: "1.31", cluster: al2, want: []want{
			{Warning, "NodeGroup legacy", "", []string{"EKS-optimized AL2 AMIs reached end of support on 2025-11-26"}},
		}},
	})
}

// drainCluster is a cluster with one group and a predicted drain.
func drainCluster(typ GroupType, d NodeDrain, mutate func(*NodeGroup)) func() *Cluster {
	return func() *Cluster {
		g, n := ec2Group("blue", typ, "1.30", 2)
		if mutate != nil {
			mutate(&g)
		}
		d.Group, d.GroupType, d.Node, d.Zone = "blue", g.Type, "blue-0", "us-west-2a"
		c := groups(g, n)
		c.DrainsPredicted = true
		c.Drains = []NodeDrain{d}
		return c
	}
}

var (
	refused = DrainBlock{Pod: "orders/orders-5d8f", Workload: "Deployment orders/orders", PDB: "orders/orders-pdb", For: 15 * time.Minute, Outcome: "blocked",
		Message: "Cannot evict pod as it would violate the pod's disruption budget."}
	stuckDrain = NodeDrain{Limit: 15 * time.Minute, Duration: 15 * time.Minute, Error: "global timeout reached: 15m0s", Blocks: []DrainBlock{refused}}
	cleanDrain = NodeDrain{Limit: 15 * time.Minute, Duration: 5 * time.Second, Finished: true, Evicted: 2}
)

func TestDrainBlocked(t *testing.T) {
	delayed := cleanDrain
	delayed.Duration = 95 * time.Second
	delayed.Blocks = []DrainBlock{{Pod: "web/web-1", Workload: "Deployment web/web", PDB: "web/web", For: 90 * time.Second, Outcome: "evicted", Message: "needs 2 healthy pods and has 1 currently"}}
	pending := cleanDrain
	pending.Pending = []PendingPod{{Pod: "orders/orders-mysql-x", Workload: "Deployment orders/orders-mysql", Reason: "0/4 nodes are available: 1 node(s) had volume node affinity conflict.", VolumeZones: []string{"us-west-2a"}}}
	twoPDBs := NodeDrain{Limit: 15 * time.Minute, Duration: 15 * time.Minute, Error: "error when evicting", Blocks: []DrainBlock{{Pod: "web/web-1", PDB: "web/a,web/b", Outcome: "failed",
		Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}}}
	runClusterCases(t, "drain-blocked", []clusterCase{
		{name: "every pod leaves", current: "1.30", cluster: drainCluster(GroupManaged, cleanDrain, nil)},
		{name: "a budget refuses until EKS gives up", current: "1.30", cluster: drainCluster(GroupManaged, stuckDrain, nil), want: []want{
			{Error, "Node blue-0", "", []string{"draining node blue-0 (managed node group blue, us-west-2a): every eviction of pod orders/orders-5d8f of Deployment orders/orders is refused by PodDisruptionBudget orders/orders-pdb for the whole 15m", "PodEvictionFailure"}},
		}},
		{name: "a Karpenter node's drain never finishes", current: "1.30", cluster: drainCluster(GroupKarpenter, NodeDrain{Limit: time.Hour, Duration: time.Hour, Error: "timeout",
			Blocks: []DrainBlock{{Pod: "orders/orders-5d8f", PDB: "orders/orders-pdb", For: time.Hour, Outcome: "blocked"}}}, nil), want: []want{
			{Error, "Node blue-0", "", []string{"Karpenter NodePool blue", "for the whole 1h", "the drain never finishes"}},
		}},
		{name: "a budget only delays the drain", current: "1.30", cluster: drainCluster(GroupManaged, delayed, nil), want: []want{
			{Warning, "Node blue-0", "", []string{"pod web/web-1 of Deployment web/web is held by PodDisruptionBudget web/web for 1m30s before its eviction is allowed"}},
		}},
		{name: "two budgets: the eviction fails", current: "1.30", cluster: drainCluster(GroupSelfManaged, twoPDBs, nil), want: []want{
			{Error, "Node blue-0", "", []string{"the eviction of web/web-1 fails (This pod has more than one PodDisruptionBudget", "exactly one PodDisruptionBudget"}},
		}},
		{name: "a replacement fits nowhere", current: "1.30", cluster: drainCluster(GroupManaged, pending, nil), want: []want{
			{Warning, "Node blue-0", "", []string{"leaves Deployment orders/orders-mysql (orders/orders-mysql-x) Pending: 0/4 nodes are available: 1 node(s) had volume node affinity conflict; its volumes bind it to us-west-2a"}},
		}},
	})
}

func TestDrainTimeoutRisk(t *testing.T) {
	slow := cleanDrain
	slow.Duration = 12 * time.Minute
	long := cleanDrain
	long.Duration = 7 * time.Minute
	long.Blocks = []DrainBlock{{Pod: "orders/orders-5d8f", Workload: "Deployment orders/orders", PDB: "orders/orders-pdb", For: 7 * time.Minute, Outcome: "evicted"}}
	runClusterCases(t, "drain-timeout-risk", []clusterCase{
		{name: "drains well within 15 minutes", current: "1.30", cluster: drainCluster(GroupManaged, cleanDrain, nil)},
		{name: "not a managed group", current: "1.30", cluster: drainCluster(GroupSelfManaged, stuckDrain, nil)},
		{name: "PodEvictionFailure", current: "1.30", cluster: drainCluster(GroupManaged, stuckDrain, nil), want: []want{
			{Error, "NodeGroup blue", "", []string{"managed node group blue: pods on 1 node cannot be evicted within EKS's 15m — blue-0: Deployment orders/orders pod orders/orders-5d8f (orders/orders-pdb): the node group update fails with PodEvictionFailure",
				"Let orders/orders-pdb allow a disruption", "--force"}},
		}},
		{name: "forced: the pods are deleted", current: "1.30", cluster: drainCluster(GroupCustomAMI, stuckDrain, func(g *NodeGroup) { g.Force = true }), want: []want{
			{Warning, "NodeGroup blue", "", []string{"the update is forced, so EKS deletes them after 15m per node, without their budget"}},
		}},
		{name: "blue/green: the deletion's 5 minutes", current: "1.30", cluster: drainCluster(GroupManaged, long, func(g *NodeGroup) { g.Replacement = &Replacement{Name: "green", Zones: g.Zones} }), want: []want{
			{Warning, "NodeGroup blue", "", []string{"replaced blue/green by green: deleting it drains each node for 5m, then terminates it", "Deployment orders/orders pod orders/orders-5d8f on blue-0 (held 7m by orders/orders-pdb) would be killed"}},
		}},
		{name: "close to the limit", current: "1.30", cluster: drainCluster(GroupManaged, slow, nil), want: []want{
			{Warning, "NodeGroup blue", "", []string{"drains come close to EKS's 15m limit — blue-0 takes 12m"}},
		}},
	})
}
