//go:build lab

package labserve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
	"github.com/ladder-eks/ladder/internal/materialize"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// waitUpdate polls DescribeUpdate until the update leaves InProgress.
func waitUpdate(ctx context.Context, t *testing.T, c *eks.Client, in *eks.DescribeUpdateInput) *ekstypes.Update {
	t.Helper()
	var u *ekstypes.Update
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 100*time.Second, true, func(ctx context.Context) (bool, error) {
		out, err := c.DescribeUpdate(ctx, in)
		if err != nil {
			return false, err
		}
		u = out.Update
		return u.Status != ekstypes.UpdateStatusInProgress, nil
	})
	if err != nil {
		t.Fatalf("DescribeUpdate %s: %v (last: %+v)", aws.ToString(in.UpdateId), err, u)
	}
	return u
}

// workshopLab is the workshop materialized into the test binary's lab,
// its AWS endpoints served over the lab's API server, and an SDK client of
// them: the tests below act on its control plane, add-ons and groups in
// turn.
type workshopLab struct {
	sc   *scenario.Scenario
	cs   kubernetes.Interface
	eks  *eks.Client
	name *string // the cluster's
	url  string

	mu       sync.Mutex
	upgraded []string // the lab control-plane upgrades asked for
}

var shared struct {
	once sync.Once
	w    *workshopLab
	err  error
}

// workshop returns the shared workshop lab, materializing and serving it
// on the first call; it is served until the test binary ends.
func workshop(t *testing.T) *workshopLab {
	t.Helper()
	cfg := labtest.Start(t)
	shared.once.Do(func() { shared.w, shared.err = serveWorkshop(t, cfg) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.w
}

func serveWorkshop(t *testing.T, cfg *rest.Config) (*workshopLab, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	began := time.Now()
	var out bytes.Buffer
	sc, err := scenario.LoadBuiltin("workshop")
	if err == nil {
		err = materialize.Apply(ctx, cfg, sc, &out)
	}
	if err != nil {
		return nil, fmt.Errorf("materialize the workshop: %v\n%s", err, out.String())
	}
	t.Logf("materialized in %s", time.Since(began).Round(time.Millisecond))
	w := &workshopLab{sc: sc, cs: kubernetes.NewForConfigOrDie(cfg), name: aws.String(sc.Spec.Cluster.Name)}
	l, err := New(sc, cfg, 60, Options{UpgradeControlPlane: func(_ context.Context, v string) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.upgraded = append(w.upgraded, v)
		return nil
	}})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() { _ = l.Serve(context.Background(), ln, io.Discard) }()
	w.url = "http://" + ln.Addr().String()
	w.eks = eks.NewFromConfig(w.awsConfig(), func(o *eks.Options) { o.BaseEndpoint = aws.String(w.url) })
	return w, nil
}

// awsConfig is an SDK configuration with the lab's dummy credentials.
func (w *workshopLab) awsConfig() aws.Config {
	return aws.Config{Region: w.sc.Spec.Cluster.Region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: twinserve.AccessKeyID, SecretAccessKey: twinserve.SecretAccessKey}, nil
		})}
}

// controlPlane131 updates the control plane 1.30 → 1.31 through the SDK,
// unless an earlier test did: DescribeUpdate InProgress → Successful,
// DescribeCluster 1.31, the lab's control plane asked to move once.
func (w *workshopLab) controlPlane131(ctx context.Context, t *testing.T) {
	t.Helper()
	desc, err := w.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: w.name})
	if err != nil {
		t.Fatalf("DescribeCluster: %v", err)
	}
	if aws.ToString(desc.Cluster.Version) == "1.31" {
		return
	}
	began := time.Now()
	up, err := w.eks.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: w.name, Version: aws.String("1.31")})
	if err != nil {
		t.Fatalf("UpdateClusterVersion: %v", err)
	}
	if up.Update.Status != ekstypes.UpdateStatusInProgress {
		t.Fatalf("UpdateClusterVersion: status %s, want InProgress", up.Update.Status)
	}
	if u := waitUpdate(ctx, t, w.eks, &eks.DescribeUpdateInput{Name: w.name, UpdateId: up.Update.Id}); u.Status != ekstypes.UpdateStatusSuccessful {
		t.Fatalf("control-plane update ended %s: %+v", u.Status, u.Errors)
	}
	desc, err = w.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: w.name})
	if err != nil || aws.ToString(desc.Cluster.Version) != "1.31" {
		t.Fatalf("DescribeCluster after the update: version %v, %v", desc, err)
	}
	w.mu.Lock()
	if strings.Join(w.upgraded, ",") != "1.31" {
		t.Errorf("UpgradeControlPlane was called with %v, want [1.31]", w.upgraded)
	}
	w.mu.Unlock()
	t.Logf("control plane 1.30 → 1.31 in %s", time.Since(began).Round(time.Millisecond))
}

// The workshop's EKS endpoints over the lab and an SDK client upgrading
// it: the control plane 1.30 → 1.31, then managed node group initial in
// place — new KWOK nodes with a 1.31 kubelet and EKS's labels, the old
// ones cordoned and deleted, their pods evicted through the real Eviction
// API and Running again.
func TestWorkshopUpgradeOnTheLab(t *testing.T) {
	w := workshop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w.controlPlane131(ctx, t)
	c, name := w.eks, w.name

	// Managed node group initial, in place.
	old := w.nodes(ctx, t, mng.LabelNodegroup+"=initial")
	if len(old) == 0 {
		t.Fatal("the lab has no nodes of initial")
	}
	evicted := w.drainedPods(ctx, t, old)
	began := time.Now()
	ng, err := c.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: name, NodegroupName: aws.String("initial")})
	if err != nil {
		t.Fatalf("UpdateNodegroupVersion: %v", err)
	}
	if u := waitUpdate(ctx, t, c, &eks.DescribeUpdateInput{Name: name, NodegroupName: aws.String("initial"), UpdateId: ng.Update.Id}); u.Status != ekstypes.UpdateStatusSuccessful {
		t.Fatalf("node group update ended %s: %+v", u.Status, u.Errors)
	}
	t.Logf("node group initial updated in %s (%d nodes, %d pods drained)", time.Since(began).Round(time.Millisecond), len(old), len(evicted.pods))

	after := w.nodes(ctx, t, mng.LabelNodegroup+"=initial")
	if len(after) != len(old) {
		t.Errorf("initial has %d nodes after the update, %d before", len(after), len(old))
	}
	for _, n := range after {
		if old[n.Name] != nil {
			t.Errorf("old node %s is still there", n.Name)
		}
		checkNewNode(t, n, "v1.31.")
	}
	w.waitReplaced(ctx, t, evicted)
}

// Blue/green on the lab (workshop §6.2): CreateNodegroup green-mng with
// blue-mng's labels, taint and subnets creates real KWOK nodes at the
// control plane's 1.31, ACTIVE once they are Ready; DeleteNodegroup
// blue-mng drains its nodes through the real Eviction API and deletes
// them, and orders with its database runs again on green.
func TestBlueGreenOnTheLab(t *testing.T) {
	w := workshop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w.controlPlane131(ctx, t)
	blue, err := w.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: w.name, NodegroupName: aws.String("blue-mng")})
	if err != nil {
		t.Fatalf("DescribeNodegroup blue-mng: %v", err)
	}
	b := blue.Nodegroup
	old := w.nodes(ctx, t, mng.LabelNodegroup+"=blue-mng")
	if len(old) != 2 {
		t.Fatalf("the lab has %d nodes of blue-mng, want the workshop's 2", len(old))
	}
	evicted := w.drainedPods(ctx, t, old)

	began := time.Now()
	created, err := w.eks.CreateNodegroup(ctx, &eks.CreateNodegroupInput{ClusterName: w.name, NodegroupName: aws.String("green-mng"),
		Subnets: b.Subnets, InstanceTypes: b.InstanceTypes, AmiType: b.AmiType, CapacityType: b.CapacityType, NodeRole: b.NodeRole,
		Labels: b.Labels, Taints: b.Taints, ScalingConfig: b.ScalingConfig, UpdateConfig: b.UpdateConfig})
	if err != nil {
		t.Fatalf("CreateNodegroup green-mng: %v", err)
	}
	if created.Nodegroup.Status != ekstypes.NodegroupStatusCreating {
		t.Errorf("CreateNodegroup: status %s, want CREATING", created.Nodegroup.Status)
	}
	green := waitNodegroup(ctx, t, w.eks, w.name, "green-mng", func(ng *ekstypes.Nodegroup, _ error) bool { return ng.Status != ekstypes.NodegroupStatusCreating })
	if green.Status != ekstypes.NodegroupStatusActive || aws.ToString(green.Version) != "1.31" {
		t.Fatalf("green-mng: %s at %s, want ACTIVE at 1.31 (%+v)", green.Status, aws.ToString(green.Version), green.Health)
	}
	// ACTIVE means its nodes are on the API server and Ready.
	greens := w.nodes(ctx, t, mng.LabelNodegroup+"=green-mng")
	if len(greens) != 2 {
		t.Errorf("green-mng ACTIVE with %d nodes on the API server, want 2", len(greens))
	}
	for _, n := range greens {
		checkNewNode(t, n, "v1.31.")
		if n.Labels["type"] != "OrdersMng" || !slices.ContainsFunc(n.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == "dedicated" && tn.Value == "OrdersApp" }) {
			t.Errorf("green node %s: labels %v, taints %v; want blue-mng's type=OrdersMng and dedicated=OrdersApp", n.Name, n.Labels, n.Spec.Taints)
		}
		if !kube.IsNodeReady(n) {
			t.Errorf("green node %s not Ready while green-mng is ACTIVE", n.Name)
		}
	}
	t.Logf("green-mng ACTIVE in %s", time.Since(began).Round(time.Millisecond))

	began = time.Now()
	if _, err := w.eks.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: w.name, NodegroupName: aws.String("blue-mng")}); err != nil {
		t.Fatalf("DeleteNodegroup blue-mng: %v", err)
	}
	waitNodegroup(ctx, t, w.eks, w.name, "blue-mng", func(_ *ekstypes.Nodegroup, err error) bool {
		var nf *ekstypes.ResourceNotFoundException
		return errors.As(err, &nf)
	})
	t.Logf("blue-mng deleted in %s (%d nodes, %d pods drained)", time.Since(began).Round(time.Millisecond), len(old), len(evicted.pods))
	if left := w.nodes(ctx, t, mng.LabelNodegroup+"=blue-mng"); len(left) > 0 {
		t.Errorf("blue-mng's nodes still on the API server: %v", slices.Collect(maps.Keys(left)))
	}
	w.waitReplaced(ctx, t, evicted)
	// The drained pods of orders came back on green.
	pods, err := w.cs.CoreV1().Pods("orders").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("orders' pods: %d, %v", len(pods.Items), err)
	}
	for _, p := range pods.Items {
		if greens[p.Spec.NodeName] == nil {
			t.Errorf("pod orders/%s runs on %s, not on green-mng", p.Name, p.Spec.NodeName)
		}
	}
}

// waitNodegroup polls DescribeNodegroup until done says so.
func waitNodegroup(ctx context.Context, t *testing.T, c *eks.Client, cluster *string, name string, done func(*ekstypes.Nodegroup, error) bool) *ekstypes.Nodegroup {
	t.Helper()
	var ng *ekstypes.Nodegroup
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 100*time.Second, true, func(ctx context.Context) (bool, error) {
		out, err := c.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: cluster, NodegroupName: aws.String(name)})
		ng, last = nil, err
		if err == nil {
			ng = out.Nodegroup
		}
		return done(ng, err), nil
	})
	if err != nil {
		t.Fatalf("DescribeNodegroup %s: %v (last: %+v, %v)", name, err, ng, last)
	}
	return ng
}

// nodes returns the lab's nodes that match a label selector, by name.
func (w *workshopLab) nodes(ctx context.Context, t *testing.T, selector string) map[string]*corev1.Node {
	t.Helper()
	list, err := w.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Node{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// drained are the pods a drain of some nodes is to evict — all but the
// DaemonSets' — and, from a watch of the lab's pods, the reason of each
// pod's DisruptionTarget condition: the eviction subresource sets
// EvictionByEvictionAPI, the pod garbage collector of a deleted node's
// pods DeletionByPodGC.
type drained struct {
	pods    map[string]string // namespace/name by UID
	mu      sync.Mutex
	reasons map[string]string // by UID
}

// drainedPods starts watching the pods of nodes a drain is to evict,
// until ctx ends.
func (w *workshopLab) drainedPods(ctx context.Context, t *testing.T, nodes map[string]*corev1.Node) *drained {
	t.Helper()
	d := &drained{pods: map[string]string{}, reasons: map[string]string{}}
	list, err := w.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if nodes[p.Spec.NodeName] != nil && !isDaemon(&p) {
			d.pods[string(p.UID)] = p.Namespace + "/" + p.Name
		}
	}
	watch, err := w.cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range watch.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
					d.mu.Lock()
					d.reasons[string(p.UID)] = c.Reason
					d.mu.Unlock()
				}
			}
		}
	}()
	return d
}

// waitReplaced waits until every drained pod went (a StatefulSet's comes
// back under its name, with a new UID) and every pod runs again, then
// checks each went through the Eviction API and no budget was overdrawn.
func (w *workshopLab) waitReplaced(ctx context.Context, t *testing.T, d *drained) {
	t.Helper()
	var waiting []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := w.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		waiting = nil
		for _, p := range pods.Items {
			if d.pods[string(p.UID)] != "" || (p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodSucceeded) {
				waiting = append(waiting, p.Namespace+"/"+p.Name+" "+string(p.Status.Phase)+" on "+p.Spec.NodeName)
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		t.Errorf("pods after the drain: %v: %v", err, waiting)
	}
	d.mu.Lock()
	for uid, name := range d.pods {
		if r := d.reasons[uid]; r != "EvictionByEvictionAPI" {
			t.Errorf("pod %s left with DisruptionTarget %q, want EvictionByEvictionAPI (a drain through the Eviction API)", name, r)
		}
	}
	d.mu.Unlock()
	pdbs, err := w.cs.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range pdbs.Items {
		if b.Status.DisruptionsAllowed < 0 {
			t.Errorf("PDB %s/%s: disruptionsAllowed %d", b.Namespace, b.Name, b.Status.DisruptionsAllowed)
		}
	}
}

// checkNewNode checks a node a group launched: the kubelet's minor and
// the labels EKS puts on a managed node.
func checkNewNode(t *testing.T, n *corev1.Node, kubelet string) {
	t.Helper()
	if v := n.Status.NodeInfo.KubeletVersion; !strings.HasPrefix(v, kubelet) {
		t.Errorf("new node %s: kubelet %s, want %sx", n.Name, v, kubelet)
	}
	for _, k := range []string{"eks.amazonaws.com/nodegroup-image", "eks.amazonaws.com/capacityType", "topology.kubernetes.io/zone"} {
		if n.Labels[k] == "" {
			t.Errorf("new node %s has no label %s", n.Name, k)
		}
	}
}

func isDaemon(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// UpdateAddon through the SDK rolls the add-on's workload out on the lab:
// coredns's Deployment and kube-proxy's DaemonSet get the version's image
// tag at once, the real controllers replace their pods (KWOK runs them),
// and DescribeUpdate turns Successful only once every pod runs the new
// image and is Ready; DescribeAddon then reports the new version.
func TestAddonUpdateOnTheLab(t *testing.T) {
	w := workshop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// kube-proxy 1.31 may not be newer than the API server (§D.4).
	w.controlPlane131(ctx, t)
	for _, tc := range []struct {
		addon, version string // "" is the control plane's latest
		kind, workload string
		wantVersion    string
		wantImage      string
	}{
		{"coredns", "v1.12.4-eksbuild.18", "Deployment", "coredns", "v1.12.4-eksbuild.18",
			"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/coredns:v1.12.4-eksbuild.18"},
		{"kube-proxy", "", "DaemonSet", "kube-proxy", "v1.31.14-eksbuild.20",
			"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.31.14-minimal-eksbuild.20"},
	} {
		began := time.Now()
		in := &eks.UpdateAddonInput{ClusterName: w.name, AddonName: aws.String(tc.addon), ResolveConflicts: ekstypes.ResolveConflictsOverwrite}
		if tc.version != "" {
			in.AddonVersion = aws.String(tc.version)
		}
		up, err := w.eks.UpdateAddon(ctx, in)
		if err != nil {
			t.Fatalf("UpdateAddon %s: %v", tc.addon, err)
		}
		sel, images := podSelector(ctx, t, w.cs, tc.kind, tc.workload)
		if len(images) != 1 || images[0] != tc.wantImage {
			t.Errorf("%s %s: images %v right after UpdateAddon, want [%s]", tc.kind, tc.workload, images, tc.wantImage)
		}
		u := waitUpdate(ctx, t, w.eks, &eks.DescribeUpdateInput{Name: w.name, AddonName: aws.String(tc.addon), UpdateId: up.Update.Id})
		if u.Status != ekstypes.UpdateStatusSuccessful {
			t.Fatalf("add-on %s update ended %s: %+v", tc.addon, u.Status, u.Errors)
		}
		// Successful means rolled out: every pod of the workload is
		// already on the new image and Ready.
		pods, err := w.cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil || len(pods.Items) == 0 {
			t.Fatalf("%s's pods: %d, %v", tc.workload, len(pods.Items), err)
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				t.Errorf("pod %s still terminating after the update succeeded", p.Name)
				continue
			}
			if img := p.Spec.Containers[0].Image; img != tc.wantImage || !podutils.IsPodReady(&p) {
				t.Errorf("pod %s on %s: image %s, Ready %v; want %s and Ready", p.Name, p.Spec.NodeName, img, podutils.IsPodReady(&p), tc.wantImage)
			}
		}
		a, err := w.eks.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: w.name, AddonName: aws.String(tc.addon)})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(a.Addon.AddonVersion); got != tc.wantVersion || a.Addon.Status != ekstypes.AddonStatusActive {
			t.Errorf("DescribeAddon %s: %s %s, want %s ACTIVE", tc.addon, got, a.Addon.Status, tc.wantVersion)
		}
		t.Logf("add-on %s → %s rolled out on %d pods in %s", tc.addon, tc.wantVersion, len(pods.Items), time.Since(began).Round(time.Millisecond))
	}
}

// podSelector is a workload's pod selector and the images of its template.
func podSelector(ctx context.Context, t *testing.T, cs kubernetes.Interface, kind, name string) (string, []string) {
	t.Helper()
	var sel *metav1.LabelSelector
	var spec corev1.PodSpec
	switch kind {
	case "Deployment":
		d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sel, spec = d.Spec.Selector, d.Spec.Template.Spec
	case "DaemonSet":
		ds, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sel, spec = ds.Spec.Selector, ds.Spec.Template.Spec
	}
	var images []string
	for _, c := range spec.Containers {
		images = append(images, c.Image)
	}
	return metav1.FormatLabelSelector(sel), images
}

// The workshop's self-managed group refreshed on the lab (§6.4), as the
// AWS CLI does it: SSM's 1.31 AMI into a new launch template version, then
// StartInstanceRefresh with MinHealthyPercentage 90 and MaxHealthy 110 —
// a new node first, then the old one's termination lifecycle hook, during
// which the Node Termination Handler drains it with kubectl's drain
// through the real Eviction API, then its deletion. Every node is
// replaced by one with a 1.31 kubelet, and the refresh ends Successful.
func TestInstanceRefreshOnTheLab(t *testing.T) {
	w := workshop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w.controlPlane131(ctx, t)
	cfg := w.awsConfig()
	endpoint := aws.String(w.url)
	ssmc := ssm.NewFromConfig(cfg, func(o *ssm.Options) { o.BaseEndpoint = endpoint })
	ec2c := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = endpoint })
	asc := autoscaling.NewFromConfig(cfg, func(o *autoscaling.Options) { o.BaseEndpoint = endpoint })

	const group = "default-selfmng"
	sel := asg.LabelNodegroupName + "=" + group
	old := w.nodes(ctx, t, sel)
	if len(old) != 2 {
		t.Fatalf("the lab has %d nodes of %s, want the workshop's 2", len(old), group)
	}
	evicted := w.drainedPods(ctx, t, old)

	param, err := ssmc.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id")})
	if err != nil {
		t.Fatalf("GetParameter: %v", err)
	}
	ami := aws.ToString(param.Parameter.Value)
	if _, err := ec2c.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String(group), SourceVersion: aws.String("1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami)}}); err != nil {
		t.Fatalf("CreateLaunchTemplateVersion: %v", err)
	}
	began := time.Now()
	start, err := asc.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String(group),
		DesiredConfiguration: &astypes.DesiredConfiguration{LaunchTemplate: &astypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String(group), Version: aws.String("$Latest")}},
		Preferences:          &astypes.RefreshPreferences{MinHealthyPercentage: aws.Int32(90), MaxHealthyPercentage: aws.Int32(110), InstanceWarmup: aws.Int32(60)}})
	if err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	var r astypes.InstanceRefresh
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 150*time.Second, true, func(ctx context.Context) (bool, error) {
		out, err := asc.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String(group),
			InstanceRefreshIds: []string{aws.ToString(start.InstanceRefreshId)}})
		if err != nil || len(out.InstanceRefreshes) != 1 {
			return false, err
		}
		r = out.InstanceRefreshes[0]
		switch r.Status {
		case astypes.InstanceRefreshStatusPending, astypes.InstanceRefreshStatusInProgress:
			return false, nil
		}
		return true, nil
	})
	if err != nil || r.Status != astypes.InstanceRefreshStatusSuccessful {
		t.Fatalf("instance refresh: %v, status %s (%s), %d%% done", err, r.Status, aws.ToString(r.StatusReason), aws.ToInt32(r.PercentageComplete))
	}
	t.Logf("instance refresh of %s Successful in %s (%d nodes, %d pods drained)", group, time.Since(began).Round(time.Millisecond), len(old), len(evicted.pods))

	after := w.nodes(ctx, t, sel)
	if len(after) != len(old) {
		t.Errorf("%s has %d nodes after the refresh, %d before", group, len(after), len(old))
	}
	for _, n := range after {
		if old[n.Name] != nil {
			t.Errorf("old node %s is still there", n.Name)
		}
		if v := n.Status.NodeInfo.KubeletVersion; !strings.HasPrefix(v, "v1.31.") || n.Labels[asg.LabelLifecycle] != asg.LifecycleSelfManaged {
			t.Errorf("new node %s: kubelet %s, lifecycle %q; want v1.31.x, self-managed", n.Name, v, n.Labels[asg.LabelLifecycle])
		}
	}
	w.waitReplaced(ctx, t, evicted)
}
