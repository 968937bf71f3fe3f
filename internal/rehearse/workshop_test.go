package rehearse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	appsv1 "k8s.io/api/apps/v1"
)

func loadBuiltin(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestWorkshop is the "done when" for the default scenario: the
// seed workshop's 1.30 → 1.31 upgrade ends with the control plane, every
// add-on and every node — the custom-AMI group, the green group and the
// Fargate pod included — at 1.31, zero PDB violations and orders never
// Pending; each node group by its own mechanism, in the scenario's order.
func TestWorkshop(t *testing.T) {
	if scenario.Default != "workshop" {
		t.Fatalf("the default scenario is %s, want workshop", scenario.Default)
	}
	sc := loadBuiltin(t, scenario.Default)
	r, err := setup(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := r.report(r.play())
	if rep.Status != report.Succeeded {
		t.Fatalf("status %s: %s %v", rep.Status, rep.Failure, rep.Stuck)
	}
	if len(rep.Hops) != 1 || rep.Hops[0] != (report.Hop{From: "1.30", To: "1.31"}) {
		t.Fatalf("hops %v, want 1.30 → 1.31", rep.Hops)
	}
	if cp := rep.ControlPlane; cp.From != "1.30" || cp.Version != "1.31" || cp.Endpoint == "" || cp.OIDCIssuer == "" {
		t.Errorf("control plane %+v", cp)
	}

	// Phases: pre-checks, control plane, the two add-ons with a new
	// version, then the groups in the scenario's order, each its strategy.
	var got []string
	for _, ph := range rep.Phases {
		if ph.Status != report.Succeeded {
			t.Errorf("phase %s %s: %s %s", ph.Kind, ph.Name, ph.Status, ph.Message)
		}
		got = append(got, strings.Join(strings.Fields(ph.Kind+" "+ph.Name+" "+ph.Strategy), " "))
	}
	want := []string{"pre-checks", "control-plane", "addon kube-proxy", "addon aws-ebs-csi-driver",
		"node-group initial in-place", "node-group custom-Y in-place", "node-group blue-mng blue-green",
		"node-group default drift", "node-group default-selfmng instance-refresh", "node-group fp-profile restart"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("phases\n %s\nwant\n %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}

	// Add-ons: kube-proxy follows the table, the EBS CSI driver its pin;
	// vpc-cni and coredns have the same build for 1.30 and 1.31.
	addons := map[string]report.Addon{}
	for _, a := range rep.Addons {
		addons[a.Name] = a
	}
	for name, to := range map[string]string{"kube-proxy": "v1.31.14-eksbuild.20", "aws-ebs-csi-driver": "v1.36.0-eksbuild.1",
		"vpc-cni": "v1.20.1-eksbuild.3", "coredns": "v1.11.4-eksbuild.40"} {
		if addons[name].To != to {
			t.Errorf("add-on %s: %s → %s, want → %s", name, addons[name].From, addons[name].To, to)
		}
	}
	// … and their pods run the new images (the kube-proxy "minimal" build).
	for _, p := range r.kube.Pods() {
		if p.Namespace != "kube-system" || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Spec.Containers {
			if strings.Contains(c.Image, "/eks/kube-proxy:") && !strings.HasSuffix(c.Image, ":v1.31.14-minimal-eksbuild.20") {
				t.Errorf("pod %s runs %s after the kube-proxy update", p.Name, c.Image)
			}
			if strings.Contains(c.Image, "/eks/aws-ebs-csi-driver:") && !strings.HasSuffix(c.Image, ":v1.36.0") {
				t.Errorf("pod %s runs %s after the EBS CSI driver update", p.Name, c.Image)
			}
		}
	}

	// Every node at 1.31, in the groups the workshop ends with.
	perGroup := map[string]int{}
	for _, n := range rep.Nodes {
		if v, err := kubeversion.Parse(n.Version); err != nil || v.String() != "1.31" || !n.Ready {
			t.Errorf("node %s (%s): kubelet %s, ready %v", n.Name, n.Group, n.Version, n.Ready)
		}
		perGroup[n.Group]++
	}
	wantNodes := map[string]int{"initial": 3, "custom-Y": 2, "green-mng": 2, "default": 1, "default-selfmng": 2, "fp-profile": 1}
	if fmt.Sprint(perGroup) != fmt.Sprint(wantNodes) {
		t.Errorf("nodes per group %v, want %v", perGroup, wantNodes)
	}
	for _, n := range r.kube.Nodes() {
		if n.Labels[fargate.LabelComputeType] == fargate.ComputeTypeFargate && len(r.kube.PodsOnNode(n.Name)) != 1 {
			t.Errorf("Fargate node %s runs %d pods, want 1", n.Name, len(r.kube.PodsOnNode(n.Name)))
		}
	}
	groups := map[string]report.Group{}
	for _, g := range rep.Groups {
		groups[g.Name] = g
	}
	for name, replaced := range map[string]int{"initial": 3, "custom-Y": 2, "blue-mng": 2, "default-selfmng": 2, "fp-profile": 1} {
		if g := groups[name]; g.Replaced != replaced || g.MaxConcurrentDisruptions != 1 && name != "blue-mng" {
			t.Errorf("group %s replaced %d nodes, %d at once; want %d, one at a time", name, g.Replaced, g.MaxConcurrentDisruptions, replaced)
		}
	}

	// Availability: no PDB violated, orders never Pending, no pod killed
	// without eviction (every group drains), and the probe ran throughout.
	for _, w := range rep.Workloads {
		if w.PDBViolations != 0 {
			t.Errorf("%s %s/%s: %d PDB violations", w.Kind, w.Namespace, w.Name, w.PDBViolations)
		}
		if w.Namespace == "orders" && w.UnschedulableSeconds != 0 {
			t.Errorf("%s orders/%s was Pending for %.0fs", w.Kind, w.Name, w.UnschedulableSeconds)
		}
	}
	if k := r.kube.Killed(); len(k) != 0 {
		t.Errorf("%d pods killed without eviction: %+v", len(k), k)
	}
	if rep.Probe == nil || rep.Probe.Seconds < rep.MakespanSeconds-1 {
		t.Fatalf("probe %+v over a %.0fs run", rep.Probe, rep.MakespanSeconds)
	}
	sum := 0.0
	for _, ph := range rep.Phases {
		sum += ph.ProbeFailedSeconds
	}
	if sum != rep.Probe.FailedSeconds {
		t.Errorf("per-phase failed seconds add up to %.0f, the probe's to %.0f", sum, rep.Probe.FailedSeconds)
	}
}

// TestWorkshopMultiHop: --to 1.33 repeats the hop three times, every node
// caught up before the next hop, and ends with everything at 1.33.
func TestWorkshopMultiHop(t *testing.T) {
	rep, err := Run(loadBuiltin(t, "workshop"), Options{To: "1.33"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != report.Succeeded || len(rep.Hops) != 3 || rep.ControlPlane.Version != "1.33" {
		t.Fatalf("status %s, hops %v, control plane %s: %s %v", rep.Status, rep.Hops, rep.ControlPlane.Version, rep.Failure, rep.Stuck)
	}
	for _, n := range rep.Nodes {
		if !strings.HasPrefix(n.Version, "v1.33.") {
			t.Errorf("node %s (%s) at %s", n.Name, n.Group, n.Version)
		}
	}
	// Each hop's control-plane phase starts after every node group of the
	// hop before it.
	lastGroupEnd := map[int]float64{}
	for _, ph := range rep.Phases {
		if ph.Kind == "node-group" {
			lastGroupEnd[ph.Hop] = max(lastGroupEnd[ph.Hop], ph.End)
		}
		if ph.Kind == "control-plane" && ph.Hop > 0 && ph.Start < lastGroupEnd[ph.Hop-1] {
			t.Errorf("hop %d's control plane started at %.0fs, before hop %d's nodes were done at %.0fs", ph.Hop, ph.Start, ph.Hop-1, lastGroupEnd[ph.Hop-1])
		}
	}
}

// TestTraps: each trap scenario ends with the failure its description
// promises, named in the report.
func TestTraps(t *testing.T) {
	t.Run("pdb-deadlock", func(t *testing.T) {
		rep, err := Run(loadBuiltin(t, "pdb-deadlock"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ph := rep.Phases[len(rep.Phases)-1]
		if rep.Status != report.Failed || ph.Status != report.Failed || ph.Name != "blue-mng" {
			t.Fatalf("status %s, last phase %+v", rep.Status, ph)
		}
		for _, want := range []string{"PodEvictionFailure", "pod orders/orders-", "within 15m0s", "PodDisruptionBudget orders/orders-pdb"} {
			if !strings.Contains(ph.Message, want) {
				t.Errorf("phase message lacks %q: %s", want, ph.Message)
			}
		}
		// §B: EKS gives up after 15 minutes of failed evictions.
		if d := ph.End - ph.Start; d < 15*60 {
			t.Errorf("the update failed after %.0fs, before EKS's 15-minute eviction timeout", d)
		}
	})
	t.Run("az-mismatch", func(t *testing.T) {
		rep, err := Run(loadBuiltin(t, "az-mismatch"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ph := rep.Phases[len(rep.Phases)-1]
		if rep.Status != report.Stuck || ph.Status != report.Stuck || ph.Strategy != scenario.BlueGreen {
			t.Fatalf("status %s, last phase %+v", rep.Status, ph)
		}
		if !strings.Contains(ph.Message, "orders/orders-mysql") || !strings.Contains(ph.Message, "volume node affinity conflict") {
			t.Errorf("phase message does not say why orders-mysql is Pending: %s", ph.Message)
		}
		for _, w := range rep.Workloads {
			if w.Name == "orders-mysql" && w.UnschedulableSeconds < 30*60 {
				t.Errorf("orders-mysql unschedulable for %.0fs, want the rest of the run", w.UnschedulableSeconds)
			}
		}
	})
	t.Run("no-lifecycle-hook", func(t *testing.T) {
		sc := loadBuiltin(t, "no-lifecycle-hook")
		r, err := setup(sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep := r.report(r.play())
		if rep.Status != report.Succeeded {
			t.Fatalf("status %s: %s", rep.Status, rep.Failure)
		}
		killed := r.kube.Killed()
		if len(killed) == 0 {
			t.Fatal("no pod killed without eviction: the ASG has no lifecycle hook to drain its nodes")
		}
		var refresh report.Phase
		for _, ph := range rep.Phases {
			if ph.Strategy == scenario.InstanceRefresh {
				refresh = ph
			}
		}
		if !strings.Contains(refresh.Message, fmt.Sprintf("%d Ready pod(s) killed without eviction", len(killed))) {
			t.Errorf("instance-refresh phase message %q does not count the %d killed pods", refresh.Message, len(killed))
		}
		if rep.Probe == nil || rep.Probe.FailedSeconds == 0 || refresh.ProbeFailedSeconds == 0 {
			t.Errorf("the probe saw no failure during the refresh: %+v", rep.Probe)
		}
	})
}

// TestRolloutRestartAction: the rolloutRestart action replaces the
// workload's pods, and the applied manifest keeps the restartedAt
// annotation, so a later patch does not roll the workload out again.
func TestRolloutRestartAction(t *testing.T) {
	sc := loadBuiltin(t, "workshop")
	sc.Spec.Upgrade = nil
	sc.Spec.Actions = []scenario.Action{{RolloutRestart: &scenario.WorkloadRef{Kind: "Deployment", Namespace: "ui", Name: "ui"}}}
	r, err := setup(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for _, p := range r.kube.Pods() {
		if p.Namespace == "ui" {
			before[p.Name] = true
		}
	}
	if status := r.play(); status != report.Succeeded {
		t.Fatalf("status %s: %s", status, r.failure)
	}
	for _, p := range r.kube.Pods() {
		if p.Namespace == "ui" && before[p.Name] {
			t.Errorf("pod %s survived the restart", p.Name)
		}
	}
	tpl, _ := r.kube.PodTemplate("Deployment", "ui", "ui")
	o := r.objects[objectKey("Deployment", "ui", "ui")]
	if tpl.Annotations[kube.RestartedAtAnnotation] == "" {
		t.Fatalf("no restartedAt annotation on the live template: %v", tpl.Annotations)
	}
	if got := templateAnnotations(t, o.Object)[kube.RestartedAtAnnotation]; got != tpl.Annotations[kube.RestartedAtAnnotation] {
		t.Errorf("the applied manifest's restartedAt is %q, the live template's %q", got, tpl.Annotations[kube.RestartedAtAnnotation])
	}
}

func templateAnnotations(t *testing.T, obj any) map[string]string {
	t.Helper()
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		t.Fatalf("%T is not a Deployment", obj)
	}
	return d.Spec.Template.Annotations
}
