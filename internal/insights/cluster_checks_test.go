package insights

import (
	"testing"
	"time"
)

// Cluster checks read Input.Cluster: these tests build it directly, as a
// live cluster or a scenario would fill it (scenario_test.go goes through
// the built-in scenarios).

// node is a node of a group, with its kubelet and kube-proxy builds.
func node(name, group, zone, kubelet, proxy string) Node {
	return Node{Name: name, Group: group, Zone: zone, KubeletVersion: kubelet, KubeProxyVersion: proxy}
}

// kubelet and proxy builds by minor, as EKS nodes report them.
func kubeletOf(minor string) string { return "v" + minor + ".9-eks-abc1234" }
func proxyOf(minor string) string   { return "v" + minor + ".9-minimal-eksbuild.3" }

// ec2Group is a group of n nodes at a minor, zones a and b.
func ec2Group(name string, typ GroupType, minor string, n int) (NodeGroup, []Node) {
	g := NodeGroup{Name: name, Type: typ, Zones: []string{"us-west-2a", "us-west-2b"}, AMIType: "AL2023_x86_64_STANDARD", AMIFamily: "al2023",
		KubeletVersions: []string{kubeletOf(minor)}}
	if typ.Managed() {
		g.Version = mustMinor(minor)
	}
	var nodes []Node
	for i := range n {
		zone := g.Zones[i%2]
		nn := node(name+"-"+string(rune('0'+i)), name, zone, kubeletOf(minor), proxyOf(minor))
		g.Nodes = append(g.Nodes, nn.Name)
		nodes = append(nodes, nn)
	}
	return g, nodes
}

// clusterCase is a table row for a cluster check: a cluster at current,
// an upgrade to target, and what the check finds.
type clusterCase struct {
	name            string
	current, target string
	now             time.Time // testNow when zero
	cluster         func() *Cluster
	want            []want
}

func clusterIn(current, target string, c *Cluster) *Input {
	c.Name, c.Region, c.Source = "prod", "us-west-2", "test cluster"
	c.Version = mustMinor(current)
	return &Input{Current: mustMinor(current), Target: mustMinor(target), Now: testNow, Cluster: c}
}

func runClusterCases(t *testing.T, id string, cases []clusterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target == "" {
				target = mustMinor(tc.current).Next().String()
			}
			in := clusterIn(tc.current, target, tc.cluster())
			if !tc.now.IsZero() {
				in.Now = tc.now
			}
			expectFindings(t, runCheck(t, id, in), tc.want)
		})
	}
}

// groups builds a cluster from groups and their nodes.
func groups(parts ...any) *Cluster {
	c := &Cluster{}
	for _, p := range parts {
		switch v := p.(type) {
		case NodeGroup:
			c.NodeGroups = append(c.NodeGroups, v)
		case []Node:
			c.Nodes = append(c.Nodes, v...)
		case Addon:
			c.Addons = append(c.Addons, v)
		case Volume:
			c.Volumes = append(c.Volumes, v)
		}
	}
	return c
}

func TestKubeletSkew(t *testing.T) {
	runClusterCases(t, "kubelet-skew", []clusterCase{
		{name: "nodes at the control plane's minor", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("initial", GroupManaged, "1.30", 3)
			return groups(g, n)
		}},
		{name: "three minors behind the target is allowed", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("old", GroupSelfManaged, "1.28", 2)
			return groups(g, n)
		}},
		{name: "the next hop leaves 1.27 kubelets four behind", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("old", GroupSelfManaged, "1.27", 2)
			return groups(g, n)
		}, want: []want{{Error, "NodeGroup old", "", []string{"self-managed node group old: 2 nodes run kubelet v1.27.9-eks-abc1234, 4 minors behind Kubernetes 1.31", "at most 3 minors", "Kubernetes 1.28 at least", "instance refresh"}}}},
		{name: "a later hop breaks it: WARNING at that hop", current: "1.30", target: "1.32", cluster: func() *Cluster {
			g, n := ec2Group("initial", GroupManaged, "1.28", 1)
			return groups(g, n)
		}, want: []want{{Warning, "NodeGroup initial", "", []string{"node initial-0 runs kubelet v1.28.9-eks-abc1234, 4 minors behind Kubernetes 1.32", "update-nodegroup-version --nodegroup-name initial --kubernetes-version 1.29"}}}},
		{name: "kubelets older than 1.25 may trail by two only", current: "1.25", cluster: func() *Cluster {
			g, n := ec2Group("legacy", GroupManaged, "1.24", 1)
			return groups(g, n)
		}},
		{name: "1.23 at 1.25 → 1.26 is three behind: beyond the two a 1.23 kubelet may trail", current: "1.25", cluster: func() *Cluster {
			g, n := ec2Group("legacy", GroupManaged, "1.23", 1)
			return groups(g, n)
		}, want: []want{{Error, "NodeGroup legacy", "", []string{"3 minors behind Kubernetes 1.26", "(at most 2 minors)", "Kubernetes 1.24 at least"}}}},
		{name: "a kubelet newer than the API server", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("new", GroupManaged, "1.31", 1)
			return groups(g, n)
		}, want: []want{{Error, "NodeGroup new", "", []string{"1 minor newer than the control plane's 1.30 already", "Replace these nodes"}}}},
		{name: "Karpenter and Fargate nodes too", current: "1.31", cluster: func() *Cluster {
			k, kn := ec2Group("default", GroupKarpenter, "1.28", 1)
			f := NodeGroup{Name: "fp", Type: GroupFargate}
			fn := []Node{node("fargate-ip-1", "fp", "us-west-2a", kubeletOf("1.28"), kubeletOf("1.28"))}
			return groups(k, kn, f, fn)
		}, want: []want{
			{Error, "FargateProfile fp", "", []string{"Fargate profile fp: node fargate-ip-1 runs kubelet", "rollout restart"}},
			{Error, "NodePool default", "", []string{"Karpenter NodePool default", "@latest"}},
		}},
	})
}

func TestKubeProxySkew(t *testing.T) {
	runClusterCases(t, "kube-proxy-skew", []clusterCase{
		{name: "kube-proxy with its kubelet", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("initial", GroupManaged, "1.30", 2)
			return groups(g, n, Addon{Name: "kube-proxy", Version: "v1.30.14-eksbuild.28"})
		}},
		{name: "kube-proxy three minors behind the next hop is allowed", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("initial", GroupManaged, "1.28", 2)
			return groups(g, n)
		}},
		{name: "a 1.27 kube-proxy four minors behind the next hop", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("old", GroupManaged, "1.28", 1)
			n[0].KubeProxyVersion = proxyOf("1.27")
			return groups(g, n)
		}, want: []want{{Error, "NodeGroup old", "", []string{"node old-0 runs kube-proxy v1.27.9-minimal-eksbuild.3 beside kubelet v1.28.9-eks-abc1234", "after the control plane goes to 1.31, kube-proxy 1.27 is 4 minors older than the API server 1.31", "v1.31.14-eksbuild.20"}}}},
		{name: "kube-proxy newer than the API server already", current: "1.30", cluster: func() *Cluster {
			g, n := ec2Group("initial", GroupManaged, "1.30", 1)
			n[0].KubeProxyVersion = proxyOf("1.31")
			return groups(g, n)
		}, want: []want{{Error, "NodeGroup initial", "", []string{"kube-proxy 1.31 is newer than the API server 1.30", "already at the control plane's 1.30"}}}},
		{name: "the add-on update of a later hop is four minors from a 1.29 kubelet", current: "1.31", target: "1.33", cluster: func() *Cluster {
			g, n := ec2Group("old", GroupSelfManaged, "1.29", 1)
			n[0].KubeProxyVersion = proxyOf("1.31")
			return groups(g, n, Addon{Name: "kube-proxy", Version: "v1.31.14-eksbuild.20"})
		}, want: []want{
			{Warning, "Addon kube-proxy", "", []string{"updated for 1.33 (v1.33.10-eksbuild.13) would be 4 minors newer than kubelet 1.29 on 1 node (old-0)", "Upgrade those nodes to 1.30"}},
		}},
	})
}

func TestControlPlaneHop(t *testing.T) {
	runClusterCases(t, "control-plane-hop", []clusterCase{
		{name: "every managed group at the control plane's minor", current: "1.30", cluster: func() *Cluster {
			a, an := ec2Group("initial", GroupManaged, "1.30", 2)
			b, bn := ec2Group("custom-Y", GroupCustomAMI, "1.30", 2)
			s, sn := ec2Group("selfmng", GroupSelfManaged, "1.29", 1) // not a managed group
			return groups(a, an, b, bn, s, sn)
		}},
		{name: "a managed group one minor behind refuses the update", current: "1.30", cluster: func() *Cluster {
			a, an := ec2Group("initial", GroupManaged, "1.29", 2)
			return groups(a, an)
		}, want: []want{{Error, "NodeGroup initial", "", []string{
			"managed node group initial is at Kubernetes 1.29, behind the control plane's 1.30: UpdateClusterVersion to 1.31 is refused",
			"all managed node groups must be at the cluster's version 1.30", "Upgrade initial to 1.30 first"}}}},
		{name: "several hops: groups catch up between them", current: "1.30", target: "1.32", cluster: func() *Cluster {
			a, an := ec2Group("initial", GroupManaged, "1.30", 2)
			b, bn := ec2Group("blue", GroupManaged, "1.30", 2)
			return groups(a, an, b, bn)
		}, want: []want{{Warning, "Cluster prod", "", []string{"before the update from 1.31 to 1.32, 2 managed node groups must be at 1.31 (initial, blue)"}}}},
		{name: "Fargate pods behind the control plane", current: "1.30", cluster: func() *Cluster {
			f := NodeGroup{Name: "fp", Type: GroupFargate}
			return groups(f, []Node{node("fargate-ip-1", "fp", "us-west-2a", kubeletOf("1.29"), "")})
		}, want: []want{{Warning, "FargateProfile fp", "", []string{"1 Fargate pod run on kubelet 1.29", "rollout restart"}}}},
	})
}

func TestAddonCompatibility(t *testing.T) {
	runClusterCases(t, "addon-compatibility", []clusterCase{
		{name: "the newest known builds for the target", current: "1.30", cluster: func() *Cluster {
			return groups(Addon{Name: "coredns", Version: "v1.11.4-eksbuild.40"}, Addon{Name: "vpc-cni", Version: "v1.20.1-eksbuild.3"},
				Addon{Name: "aws-ebs-csi-driver", Version: "v1.35.0-eksbuild.1"}) // no table rows: not judged
		}},
		{name: "kube-proxy follows the control plane", current: "1.30", cluster: func() *Cluster {
			return groups(Addon{Name: "kube-proxy", Version: "v1.30.14-eksbuild.28"})
		}, want: []want{{Warning, "Addon kube-proxy", "", []string{"at 1.31: v1.30.14-eksbuild.28 → v1.31.14-eksbuild.20", "update-addon --addon-name kube-proxy"}}}},
		{name: "an old coredns takes one update per minor", current: "1.32", target: "1.33", cluster: func() *Cluster {
			return groups(Addon{Name: "coredns", Version: "v1.9.3-eksbuild.21"})
		}, want: []want{{Warning, "Addon coredns", "", []string{"3 updates: one minor version at a time", "at 1.33: v1.9.3-eksbuild.21 → v1.10.x → v1.11.x → v1.12.4-eksbuild.18"}}}},
		{name: "kube-proxy several minors behind, through the table's builds", current: "1.30", cluster: func() *Cluster {
			return groups(Addon{Name: "kube-proxy", Version: "v1.29.15-eksbuild.16"})
		}, want: []want{{Warning, "Addon kube-proxy", "", []string{"v1.29.15-eksbuild.16 → v1.30.14-eksbuild.28 → v1.31.14-eksbuild.20"}}}},
		{name: "a kube-proxy add-on beyond the skew policy at the next hop", current: "1.30", cluster: func() *Cluster {
			return groups(Addon{Name: "kube-proxy", Version: "v1.27.16-eksbuild.41"})
		}, want: []want{{Error, "Addon kube-proxy", "", []string{"built for 1.27: after the control plane goes to 1.31, kube-proxy 1.27 is 4 minors older than the API server 1.31"}}}},
	})
}

func TestSupportWindow(t *testing.T) {
	none := func() *Cluster { return &Cluster{} }
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t.Add(10 * time.Hour) }
	runClusterCases(t, "support-window", []clusterCase{
		{name: "both in standard support, far from its end", current: "1.33", now: day("2025-11-01"), cluster: none},
		{name: "the current minor in extended support, and its cost", current: "1.30", now: day("2026-03-30"), cluster: none, want: []want{
			{Warning, "Cluster prod", "", []string{"Kubernetes 1.30, the control plane's version, has been in extended support since 2025-07-23 (250 days ago) and until 2026-07-23 (114 days from now)",
				"$0.60 per cluster-hour instead of $0.10", "about $365 a month", "until extended support ends", "1.33, the oldest minor in standard support, is until 2026-07-29"}},
			{Warning, "Cluster prod", "", []string{"Kubernetes 1.31, the target version, has been in extended support since 2025-11-26", "the upgrade to it does not end the surcharge"}},
		}},
		{name: "standard support ends within 90 days", current: "1.33", now: day("2026-06-01"), cluster: none, want: []want{
			{Warning, "Cluster prod", "", []string{"Kubernetes 1.33, the control plane's version, leaves standard support on 2026-07-29 (57 days from now)", "$365 a month more"}},
		}},
		{name: "past extended support: EKS upgrades the control plane itself", current: "1.30", target: "1.31", now: day("2026-12-03"), cluster: none, want: []want{
			{Error, "Cluster prod", "", []string{"Kubernetes 1.30, the control plane's version, is past extended support: it ended on 2026-07-23", "EKS may upgrade the control plane"}},
			{Error, "Cluster prod", "", []string{"Kubernetes 1.31, the target version, is past extended support", "EKS no longer offers it"}},
		}},
		{name: "a target EKS does not offer yet", current: "1.35", target: "1.36", now: day("2026-05-01"), cluster: none, want: []want{
			{Error, "Cluster prod", "", []string{"Kubernetes 1.36 (the target version) is not available on EKS on 2026-05-01: it was released on EKS on 2026-06-02"}},
		}},
		{name: "a target beyond the calendar", current: "1.36", target: "1.37", now: day("2026-09-01"), cluster: none, want: []want{
			{Warning, "Cluster prod", "", []string{"Kubernetes 1.37 (the target version) is not in Ladder's EKS calendar"}},
		}},
	})
}

// TestNodesWithoutGroups: a source that knows nodes but not their groups
// still has every kubelet checked.
func TestNodesWithoutGroups(t *testing.T) {
	runClusterCases(t, "kubelet-skew", []clusterCase{
		{name: "nodes of no known group", current: "1.30", cluster: func() *Cluster {
			return groups([]Node{node("ip-1", "", "us-west-2a", kubeletOf("1.27"), proxyOf("1.27")), node("ip-2", "workers", "us-west-2a", kubeletOf("1.27"), proxyOf("1.27"))})
		}, want: []want{
			{Error, "NodeGroup", "", []string{"nodes of no node group: node ip-1 runs kubelet v1.27.9-eks-abc1234, 4 minors behind Kubernetes 1.31"}},
			{Error, "NodeGroup workers", "", []string{"node group workers: node ip-2 runs kubelet"}},
		}},
	})
}
