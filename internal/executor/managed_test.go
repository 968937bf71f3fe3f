package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
)

const (
	ami130 = "ami-0f676a166352f02ab" // amazon-eks-node-al2023-x86_64-standard-1.30-v20260220
	ami131 = "ami-0c4dea04571b1b508" // amazon-eks-node-al2023-x86_64-standard-1.31-v20260320
)

var (
	mngZones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	v131     = kubeversion.MustParse("1.31")
)

// catalogAMIs are the embedded catalog's AMIs.
type catalogAMIs struct{}

func (catalogAMIs) LookupAMI(id string) (catalog.AMI, bool) { return catalog.LookupAMI(id) }

// nodes are a group's nodes.
func (tw *managedTwin) nodes(group string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range tw.port.Cluster().Nodes() {
		if n.Labels[mng.LabelNodegroup] == group {
			out = append(out, n)
		}
	}
	return out
}

// events are the executor's timeline lines.
func (tw *managedTwin) events() []string {
	var out []string
	for _, l := range tw.rec.lines {
		if _, e, ok := strings.Cut(l, "event "); ok {
			out = append(out, e)
		}
	}
	return out
}

// A custom-AMI group in place (semantics.md §B): its launch template gets
// a version with the newest AMI of its family for the hop, the group is
// updated to that version, and the step ends when the update has ended
// and every node runs the new image's kubelet.
func TestUpdateNodegroupCustomAMI(t *testing.T) {
	tw := newManagedTwin(t)
	if err := tw.ex.UpdateNodegroup(context.Background(), "custom", false, v131); err != nil {
		t.Fatal(err)
	}
	want := []string{"Normal LaunchTemplateUpdated: node group custom (custom AMI): launch template custom version 2 with image " + ami131 + " (amazon-eks-node-al2023-x86_64-standard-1.31-v20260320)"}
	if got := tw.events(); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	st, _ := tw.groups.Status("custom")
	if len(st.Updates) != 1 || st.Updates[0].Status != mng.UpdateSuccessful || st.Updates[0].ToLaunchTemplateVersion != "2" || st.LaunchTemplate.Version != "2" {
		t.Fatalf("custom: %d updates %+v, launch template %+v; want one Successful update to version 2", len(st.Updates), st.Updates, st.LaunchTemplate)
	}
	nodes := tw.nodes("custom")
	if len(nodes) != 2 {
		t.Fatalf("custom has %d nodes, want 2", len(nodes))
	}
	for _, n := range nodes {
		if n.Labels[mng.LabelNodegroupImage] != ami131 || !strings.HasPrefix(n.Status.NodeInfo.KubeletVersion, "v1.31.") {
			t.Errorf("node %s: image %s, kubelet %s; want %s at 1.31", n.Name, n.Labels[mng.LabelNodegroupImage], n.Status.NodeInfo.KubeletVersion, ami131)
		}
	}
}

// drainObserver is the recorder, and notes the green group's status when
// the executor says it deletes blue.
type drainObserver struct {
	*recorder
	groups       *mng.Service
	port         *twinport.Port
	green        string
	greenAtDrain string
	// podsOnBlue are the pods on blue's nodes when its deletion began.
	podsOnBlue []string
}

func (o *drainObserver) Event(eventType, reason, message string) {
	if reason == "BlueGreenDrain" {
		st, _ := o.groups.Status(o.green)
		o.greenAtDrain = st.Status
		pods, _ := o.port.ListPods(context.Background(), kubeport.PodQuery{})
		for _, p := range pods {
			if g, _ := o.groups.Nodegroup(p.Spec.NodeName); g == "blue" {
				o.podsOnBlue = append(o.podsOnBlue, p.Name)
			}
		}
	}
	o.recorder.Event(eventType, reason, message)
}

// Blue/green (workshop §6.2): green is created with blue's subnets,
// labels, taints and update config, and the strategy's size; blue is
// deleted only once green is ACTIVE; the step ends with blue gone, every
// green node at the hop's version, and orders' pods on green.
func TestUpgradeBlueGreen(t *testing.T) {
	tw := newManagedTwin(t)
	obs := &drainObserver{recorder: tw.rec, groups: tw.groups, port: tw.port, green: "green"}
	tw.ex.Observer = obs
	ctx := context.Background()
	blue := nodeNames(tw.nodes("blue"))
	if err := tw.ex.UpgradeBlueGreen(ctx, BlueGreen{Group: "orders", Blue: "blue", Green: Green{Name: "green", Desired: aws.Int32(3)}}, v131); err != nil {
		t.Fatal(err)
	}
	if obs.greenAtDrain != mng.StatusActive {
		t.Errorf("green was %q when blue's deletion began, want ACTIVE", obs.greenAtDrain)
	}
	if len(obs.podsOnBlue) != 0 {
		t.Errorf("pods %v on blue when its deletion began, want Ladder's drain to have moved them", obs.podsOnBlue)
	}
	// No PDB: both blue nodes drain in one wave.
	want := []string{"Normal BlueGreenStarted: node group blue: creating green group green at 1.31",
		"Normal DrainWave: node group blue: wave 1: " + strings.Join(blue, " "),
		"Normal BlueGreenDrain: node group orders: deleting blue group blue; its pods move to green"}
	if got := tw.events(); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if st, _ := tw.groups.Status("blue"); st.Status != mng.StatusDeleted || len(tw.nodes("blue")) != 0 {
		t.Fatalf("blue is %s with %d nodes when the step ends, want deleted", st.Status, len(tw.nodes("blue")))
	}
	green, _ := tw.groups.Status("green")
	if green.Status != mng.StatusActive || green.Version != v131 || green.Min != 1 || green.Desired != 3 || green.Max != 3 ||
		!slices.Equal(green.Zones, mngZones[:2]) || green.Labels["type"] != "orders" || len(green.Taints) != 1 || green.Taints[0].Key != "dedicated" {
		t.Fatalf("green: %+v; want ACTIVE at 1.31, 1/3/3, in blue's zones with its label and taint", green)
	}
	for _, n := range tw.nodes("green") {
		if z := n.Labels[corev1.LabelTopologyZone]; !slices.Contains(mngZones[:2], z) || !strings.HasPrefix(n.Status.NodeInfo.KubeletVersion, "v1.31.") {
			t.Errorf("green node %s in %s at %s, want blue's zones at 1.31", n.Name, z, n.Status.NodeInfo.KubeletVersion)
		}
	}
	if err := tw.ex.WaitFor(ctx, kubeport.PodsSettled{}); err != nil {
		t.Fatal(err)
	}
	pods, err := tw.port.ListPods(ctx, kubeport.PodQuery{Namespace: "default"})
	if err != nil || len(pods) != 2 {
		t.Fatalf("orders' pods: %d, %v", len(pods), err)
	}
	for _, p := range pods {
		if g, _ := tw.groups.Nodegroup(p.Spec.NodeName); g != "green" {
			t.Errorf("pod %s on %s (group %q), want green", p.Name, p.Spec.NodeName, g)
		}
	}
}

// newManagedTwinPDB is newManagedTwin with orders under a PDB of
// maxUnavailable n.
func newManagedTwinPDB(t *testing.T, n int) (*managedTwin, *kube.Cluster) {
	tw := newManagedTwin(t)
	c := tw.port.Cluster()
	if err := c.Apply(twintest.PDB("orders", "orders", nil, twintest.Int(n))); err != nil {
		t.Fatal(err)
	}
	return tw, c
}

// drainWaves are the executor's DrainWave lines of group, less their
// prefix: "wave N: nodes".
func (tw *managedTwin) drainWaves(group string) []string {
	var waves []string
	for _, e := range tw.events() {
		if w, ok := strings.CutPrefix(e, "Normal DrainWave: node group "+group+": "); ok {
			waves = append(waves, w)
		}
	}
	return waves
}

// nodeNames are the nodes' names, sorted.
func nodeNames(nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

// Blue's drain under a PDB of maxUnavailable 1 over orders' pods, one on
// each blue node: one node a wave, and no eviction past the budget.
func TestUpgradeBlueGreenDrainsInWaves(t *testing.T) {
	tw, c := newManagedTwinPDB(t, 1)
	ctx := context.Background()
	var pods []corev1.Pod
	if err := tw.ex.WaitFor(ctx, kubeport.AllOf{kubeport.Until{What: "orders' two pods", Holds: func(ctx context.Context) (bool, error) {
		var err error
		pods, err = tw.port.ListPods(ctx, kubeport.PodQuery{Namespace: "default"})
		return len(pods) == 2, err
	}}, kubeport.PodsSettled{}}); err != nil {
		t.Fatal(err)
	}
	if pods[0].Spec.NodeName == pods[1].Spec.NodeName {
		t.Fatalf("orders' pods both on %s, want one on each blue node", pods[0].Spec.NodeName)
	}
	j := &memJournal{}
	tw.ex.Journal = j
	if err := tw.ex.UpgradeBlueGreen(ctx, BlueGreen{Group: "orders", Blue: "blue", Green: Green{Name: "green", Desired: aws.Int32(3)}}, v131); err != nil {
		t.Fatal(err)
	}
	waves := tw.drainWaves("blue")
	var blue []string
	for _, p := range pods {
		blue = append(blue, p.Spec.NodeName)
	}
	if len(waves) != 2 || len(strings.Fields(waves[0])) != 3 || len(strings.Fields(waves[1])) != 3 {
		t.Fatalf("waves %q, want one node each", waves)
	}
	// The journal holds each node drained, in its wave.
	for _, n := range blue {
		en, ok := j.Get("/Drain/" + n)
		if !ok || en.State != Called || !slices.Contains(waves, en.ID) || !strings.HasSuffix(en.ID, n) {
			t.Errorf("journal for node %s: %+v, want called in its wave", n, en)
		}
	}
	if b := c.PDBBreaches(); len(b) != 0 {
		t.Errorf("PDB breaches %+v", b)
	}
}

// A run that starts again does not drain a node the journal holds as
// drained: only the other blue node forms a wave.
func TestUpgradeBlueGreenDrainResumed(t *testing.T) {
	tw := newManagedTwin(t)
	blue := nodeNames(tw.nodes("blue"))
	j := &memJournal{}
	if err := j.Put("/Drain/"+blue[0], Entry{State: Called, ID: "wave 1: " + blue[0]}); err != nil {
		t.Fatal(err)
	}
	tw.ex.Journal = j
	if err := tw.ex.UpgradeBlueGreen(context.Background(), BlueGreen{Group: "orders", Blue: "blue", Green: Green{Name: "green", Desired: aws.Int32(3)}}, v131); err != nil {
		t.Fatal(err)
	}
	waves := tw.drainWaves("blue")
	if want := []string{"wave 1: " + blue[1]}; !slices.Equal(waves, want) {
		t.Errorf("waves %q, want %q", waves, want)
	}
}

// A PDB that allows no disruption stops blue's drain before any pod is
// evicted past it: the step runs into its time limit naming the pod and
// the PDB, and blue is not deleted.
func TestUpgradeBlueGreenDrainBlocked(t *testing.T) {
	tw, c := newManagedTwinPDB(t, 0)
	ctx := context.Background()
	tw.ex.Deadline = tw.port.Now().Add(time.Hour)
	err := tw.ex.UpgradeBlueGreen(ctx, BlueGreen{Group: "orders", Blue: "blue", Green: Green{Name: "green", Desired: aws.Int32(3)}}, v131)
	if !IsTimeLimit(err) || !strings.Contains(err.Error(), "pod default/orders-") || !strings.Contains(err.Error(), "The disruption budget orders needs") {
		t.Fatalf("error %v, want the time limit naming an orders pod and the PDB orders", err)
	}
	var blocked *DrainBlocked
	if !errors.As(err, &blocked) || !strings.HasPrefix(blocked.Pod, "default/orders-") || !slices.Equal(blocked.PDBs, []string{"default/orders"}) || blocked.Node == "" {
		t.Errorf("error %#v, want a DrainBlocked naming the node, the pod and default/orders", err)
	}
	if st, _ := tw.groups.Status("blue"); st.Status != mng.StatusActive {
		t.Errorf("blue is %s, want ACTIVE: not deleted while its drain is blocked", st.Status)
	}
	if b := c.PDBBreaches(); len(b) != 0 {
		t.Errorf("PDB breaches %+v", b)
	}
}

// A custom-AMI group's green runs a new version of blue's launch template
// with the hop's AMI.
func TestUpgradeBlueGreenCustomAMI(t *testing.T) {
	tw := newManagedTwin(t)
	if err := tw.ex.UpgradeBlueGreen(context.Background(), BlueGreen{Group: "custom", Blue: "custom", Green: Green{Name: "custom-green"}}, v131); err != nil {
		t.Fatal(err)
	}
	green, _ := tw.groups.Status("custom-green")
	if lt := green.LaunchTemplate; lt == nil || lt.Name != "custom" || lt.Version != "2" || lt.ImageID != ami131 || green.Version != v131 {
		t.Fatalf("custom-green: launch template %+v at %s; want custom version 2 with %s at 1.31", green.LaunchTemplate, green.Version, ami131)
	}
	if n := len(tw.nodes("custom-green")); n != 2 {
		t.Fatalf("custom-green has %d nodes, want blue's 2", n)
	}
}

// A refused CreateNodegroup ends the step as the CLI words it, and blue
// is left alone.
func TestUpgradeBlueGreenRefused(t *testing.T) {
	tw := newManagedTwin(t)
	err := tw.ex.UpgradeBlueGreen(context.Background(), BlueGreen{Group: "orders", Blue: "blue", Green: Green{Name: "green", Subnets: []string{"subnet-0123456789abcdef0"}}}, v131)
	if err == nil || !strings.Contains(err.Error(), "(InvalidParameterException) when calling the CreateNodegroup operation") {
		t.Fatalf("green in an unknown subnet: %v", err)
	}
	if st, _ := tw.groups.Status("blue"); st.Status != mng.StatusActive || len(tw.nodes("blue")) != 2 {
		t.Fatalf("blue after the refusal: %s with %d nodes", st.Status, len(tw.nodes("blue")))
	}
}

// The green group runs with the blue group's node role: CreateNodegroup
// requires one (aws-sdk-go-v2 refuses the input without it, before any
// request), and the role is what lets green's nodes join as blue's did.
func TestGreenInputCopiesTheBlueGroup(t *testing.T) {
	blue := &ekstypes.Nodegroup{
		NodegroupName: aws.String("blue-mng"), NodeRole: aws.String("arn:aws:iam::111122223333:role/eksctl-nodegroup-NodeInstanceRole"),
		Subnets: []string{"subnet-a", "subnet-b"}, InstanceTypes: []string{"m5.large"}, CapacityType: ekstypes.CapacityTypesOnDemand,
		ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(1), DesiredSize: aws.Int32(2), MaxSize: aws.Int32(3)},
		Labels:        map[string]string{"type": "OrdersMNG"},
	}
	in := greenInput("eksworkshop-eksctl", blue, Green{Name: "green-mng"})
	if aws.ToString(in.NodeRole) != aws.ToString(blue.NodeRole) {
		t.Errorf("green's NodeRole = %q, want blue's %q", aws.ToString(in.NodeRole), aws.ToString(blue.NodeRole))
	}
	if aws.ToString(in.NodegroupName) != "green-mng" || aws.ToString(in.ClusterName) != "eksworkshop-eksctl" || in.Labels["type"] != "OrdersMNG" ||
		aws.ToInt32(in.ScalingConfig.DesiredSize) != 2 {
		t.Errorf("green's input: %+v", in)
	}
	// Validated as the SDK validates it before sending.
	if _, err := eks.NewFromConfig(aws.Config{Region: "us-west-2"}).CreateNodegroup(context.Background(), in, func(o *eks.Options) {
		o.BaseEndpoint = aws.String("http://127.0.0.1:1")
		o.Retryer = aws.NopRetryer{}
	}); err == nil || strings.Contains(err.Error(), "missing required field") {
		t.Errorf("CreateNodegroup with green's input: %v, want it past the SDK's validation (a connection error)", err)
	}
}

// TestBlueGreenWaves: a blue group of 10 nodes, one pod of the wide
// Deployment on each (required anti-affinity by hostname), drained under
// each PDB shape in as few waves as the budget allows: ceil(10 / k) where
// k is the PDB's disruptionsAllowed with every pod healthy (semantics.md
// §D.2) — the fewest waves any drain that never has an eviction refused
// can take, since a wave evicts at most k of the pods — within 1.10 × the
// makespan bound those waves give, and no PDB breached.
func TestBlueGreenWaves(t *testing.T) {
	const nodes = 10
	var drainTime int // seconds: the first case's, without a PDB
	for _, c := range waveShapes {
		t.Run(c.name, func(t *testing.T) {
			tw := newManagedTwin(t)
			kc := tw.port.Cluster()
			if err := tw.groups.Adopt(nodegroup.Spec{Name: "wide", InstanceTypes: []string{"m5.large"}, Desired: nodes, Min: 1, Max: nodes, Version: "1.30",
				Labels: map[string]string{"type": "wide"}}, time.Hour); err != nil {
				t.Fatal(err)
			}
			lbls := map[string]string{"app": "wide"}
			if err := kc.Apply(&appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wide"},
				Spec: appsv1.DeploymentSpec{Replicas: aws.Int32(nodes), Selector: &metav1.LabelSelector{MatchLabels: lbls},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls}, Spec: corev1.PodSpec{
						NodeSelector: map[string]string{"type": "wide"},
						Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: lbls}, TopologyKey: corev1.LabelHostname}}}},
						Containers: []corev1.Container{{Name: "app", Image: "wide"}}}}},
			}); err != nil {
				t.Fatal(err)
			}
			if c.pdb != nil {
				spec := *c.pdb
				spec.Selector = &metav1.LabelSelector{MatchLabels: lbls}
				if err := kc.Apply(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wide"}, Spec: spec}); err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			if err := tw.ex.WaitFor(ctx, kubeport.Until{What: "wide's pods", Holds: func(ctx context.Context) (bool, error) {
				pods, err := tw.port.ListPods(ctx, kubeport.PodQuery{Namespace: "default"})
				ready := 0
				for _, p := range pods {
					if p.Labels["app"] == "wide" && p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
						ready++
					}
				}
				return ready == nodes, err
			}}); err != nil {
				t.Fatal(err)
			}
			if err := tw.ex.UpgradeBlueGreen(ctx, BlueGreen{Group: "wide", Blue: "wide", Green: Green{Name: "wide-green"}}, v131); err != nil {
				t.Fatal(err)
			}
			waves := len(tw.drainWaves("wide"))
			// The drain's makespan, first wave to blue empty, for the record.
			var first, last string
			for _, l := range tw.rec.lines {
				at, _, _ := strings.Cut(strings.TrimSpace(l), " ")
				if strings.Contains(l, "DrainWave") && first == "" {
					first = at
				}
				if strings.Contains(l, "BlueGreenDrain") {
					last = at
				}
			}
			makespan := seconds(t, last) - seconds(t, first)
			if c.pdb == nil {
				drainTime = makespan
			}
			// The bound: no wave can evict more than k pods, so no drain
			// without a refused eviction takes fewer than ceil(10/k)
			// waves, and a wave takes at least one node's drain time —
			// the unbudgeted one-wave drain's makespan.
			bound := c.waves * drainTime
			t.Logf("%s: %d waves, makespan %ds, bound %ds", c.name, waves, makespan, bound)
			if drainTime == 0 || float64(makespan) > 1.10*float64(bound) {
				t.Errorf("makespan %ds, want at most 1.10 × %ds", makespan, bound)
			}
			if waves != c.waves {
				t.Errorf("%d waves, want %d: %q", waves, c.waves, tw.events())
			}
			if b := kc.PDBBreaches(); len(b) != 0 {
				t.Errorf("PDB breaches %+v", b)
			}
		})
	}
}

// waveShapes are the PDB shapes the wave benchmarks drain 10 nodes
// under, one pod on each, the first without a PDB, with the fewest waves
// a drain that never has an eviction refused can take: ceil(10/k), k the
// PDB's disruptionsAllowed with every pod healthy (semantics.md §D.2).
var waveShapes = []struct {
	name  string
	pdb   *policyv1.PodDisruptionBudgetSpec
	waves int
}{
	{"none", nil, 1},
	{"maxUnavailable 1", &policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("1")}, 10},
	{"maxUnavailable 10%", &policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("10%")}, 10},
	{"maxUnavailable 30%", &policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("30%")}, 4},
	{"minAvailable N-1", &policyv1.PodDisruptionBudgetSpec{MinAvailable: intOrString("9")}, 10},
	{"minAvailable N-2", &policyv1.PodDisruptionBudgetSpec{MinAvailable: intOrString("8")}, 5},
}

// seconds reads the recorder's "NNs" time.
func seconds(t *testing.T, at string) int {
	t.Helper()
	var s int
	if _, err := fmt.Sscanf(at, "%ds", &s); err != nil {
		t.Fatalf("time %q: %v", at, err)
	}
	return s
}

func intOrString(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }
