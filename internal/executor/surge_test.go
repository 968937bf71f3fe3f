package executor

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// surgeTwin is a self-managed group, workers: n m5.large instances on
// launch template workers:1 with the 1.30 AMI, at most max, running for a
// day, with one pod of the Deployment wide on each node (required
// anti-affinity by hostname) under pdb (nil: none) and the group's
// termination lifecycle hook with the Node Termination Handler, as the
// workshop's group has them. The executor drives it through twinaws.
func surgeTwin(t *testing.T, n, max int, pdb *policyv1.PodDisruptionBudgetSpec) (*Executor, *recorder, *kube.Cluster, *asg.ASG) {
	t.Helper()
	base := twintest.New(t0, 1, "us-west-2a", "us-west-2b")
	eng, kc := base.Eng, base.Kube
	groups := asg.New(eng, kc, worker.New(eng, kc, base.Cloud, worker.Timings{}),
		asg.Options{InstanceTypes: catalog.InstanceTypes(), Zones: []string{"us-west-2a", "us-west-2b"}})
	if err := groups.Create(asg.Spec{Name: "workers", InstanceType: "m5.large", Desired: n, Min: 1, Max: max, TerminationHook: true,
		LaunchTemplate: asg.LaunchTemplate{Name: "workers", Version: "1", ImageID: al2023v130}}, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	lbls := map[string]string{"app": "wide"}
	if err := kc.Apply(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wide"},
		Spec: appsv1.DeploymentSpec{Replicas: aws.Int32(int32(n)), Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{selfManagedLabel: "workers"},
				Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: lbls}, TopologyKey: corev1.LabelHostname}}}},
				Containers: []corev1.Container{{Name: "app", Image: "wide"}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	if pdb != nil {
		spec := *pdb
		spec.Selector = &metav1.LabelSelector{MatchLabels: lbls}
		if err := kc.Apply(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wide"}, Spec: spec}); err != nil {
			t.Fatal(err)
		}
	}
	p := twinport.New(kc, twinport.Options{})
	rec := &recorder{port: p}
	api := twinaws.NewAutoScaling(groups).WithClock(eng.Now)
	ex := &Executor{Cluster: "demo", Ports: Ports{Kube: p, AutoScaling: api, LaunchTemplates: api}, AMIs: catalogAMIs{},
		Observer: rec, Deadline: p.Now().Add(6 * time.Hour)}
	if err := ex.WaitFor(context.Background(), kubeport.PodsSettled{}); err != nil {
		t.Fatal(err)
	}
	rec.start = p.Now()
	return ex, rec, kc, groups
}

// events are the recorder's event lines without their time.
func (r *recorder) events() []string {
	var out []string
	for _, l := range r.lines {
		if _, e, ok := strings.Cut(l, " event Normal "); ok {
			out = append(out, e)
		}
	}
	return out
}

// --strategy ladder on a group of four: the launch template gets the hop's
// AMI, the group surges to eight within its MaxSize, the old nodes drain
// one a wave under maxUnavailable 1, each old instance is terminated with
// its capacity, and the group ends at four nodes on the new AMI with no
// PDB breached and no pod killed; the journal holds each drain and each
// termination. With a MaxSize of six the group surges twice by two; with
// no room above its capacity the step fails naming the fix.
func TestSurgeGroup(t *testing.T) {
	one := &policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("1")}
	for _, tc := range []struct {
		name    string
		max     int
		surges  []string
		waves   int
		wantErr string
	}{
		{name: "room for every new node at once", max: 8, surges: []string{"Surge: node group workers: desired capacity 4 → 8 for 4 old nodes"}, waves: 4},
		{name: "max size six: two surges of two", max: 6, surges: []string{
			"Surge: node group workers: desired capacity 4 → 6 for 4 old nodes",
			"Surge: node group workers: desired capacity 4 → 6 for 2 old nodes"}, waves: 4},
		{name: "no room", max: 4, wantErr: "node group workers: max size 4 leaves no room for a new instance beside 4; raise it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex, rec, kc, groups := surgeTwin(t, 4, tc.max, one)
			j := &memJournal{}
			ex.Journal = j
			err := ex.SurgeGroup(context.Background(), "workers", kubeversion.MustParse("1.31"))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("SurgeGroup = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var surges []string
			waves := 0
			for _, e := range rec.events() {
				switch {
				case strings.HasPrefix(e, "Surge: "):
					surges = append(surges, e)
				case strings.HasPrefix(e, "DrainWave: "):
					waves++
					if len(strings.Fields(e)) != 7 {
						t.Errorf("%s: want one node a wave", e)
					}
				}
			}
			if !slices.Equal(surges, tc.surges) || waves != tc.waves {
				t.Errorf("surges %q and %d waves, want %q and %d\n%s", surges, waves, tc.surges, tc.waves, strings.Join(rec.lines, "\n"))
			}
			st, _ := groups.Status("workers")
			if st.Desired != 4 || len(st.Instances) != 4 || st.Replaced != 4 || st.PodsKilled != 0 {
				t.Errorf("group: desired %d, %d instances, %d replaced, %d pods killed; want 4, 4, 4, 0", st.Desired, len(st.Instances), st.Replaced, st.PodsKilled)
			}
			for _, in := range st.Instances {
				if in.ImageID != al2023v131 {
					t.Errorf("instance %s on %s, want %s", in.ID, in.ImageID, al2023v131)
				}
			}
			if b := kc.PDBBreaches(); len(b) != 0 {
				t.Errorf("PDB breaches %+v", b)
			}
			drained, terminated := 0, 0
			for k, en := range j.entries {
				switch {
				case strings.HasPrefix(k, "/Drain/") && en.State == Called:
					drained++
				case strings.HasPrefix(k, "/TerminateInstanceInAutoScalingGroup/") && en.State == Called:
					terminated++
				}
			}
			if drained != 4 || terminated != 4 {
				t.Errorf("journal: %d drains and %d terminations, want 4 of each", drained, terminated)
			}
		})
	}
}

// A run killed after it drained and terminated an old node, started
// again, neither drains nor terminates it twice: the group's old nodes
// are read from the group, and the journal holds what was made.
func TestSurgeGroupResumed(t *testing.T) {
	ex, rec, _, groups := surgeTwin(t, 4, 8, nil)
	killed := fmt.Errorf("killed")
	j := &memJournal{}
	j.kill = func(key string, e Entry) {
		if strings.HasPrefix(key, "/TerminateInstanceInAutoScalingGroup/") && e.State == Called {
			panic(killed)
		}
	}
	ex.Journal = j
	func() {
		defer func() {
			if r := recover(); r != killed {
				panic(r)
			}
		}()
		_ = ex.SurgeGroup(context.Background(), "workers", kubeversion.MustParse("1.31"))
	}()
	first := len(rec.events())
	j.kill = nil
	if err := ex.SurgeGroup(context.Background(), "workers", kubeversion.MustParse("1.31")); err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.events()[first:] {
		if strings.HasPrefix(e, "Surge: ") || strings.HasPrefix(e, "LaunchTemplateUpdated: ") {
			t.Errorf("the resumed run: %s", e)
		}
	}
	st, _ := groups.Status("workers")
	if st.Desired != 4 || len(st.Instances) != 4 || st.Replaced != 4 {
		t.Errorf("group: desired %d, %d instances, %d replaced; want 4, 4, 4\n%s", st.Desired, len(st.Instances), st.Replaced, strings.Join(rec.lines, "\n"))
	}
}

// TestSurgeWaves is the benchmark of --strategy ladder: a group of 10
// nodes, one pod of wide on each, replaced under each PDB shape. Its
// makespan runs from the first cordon (the first wave: the surge's nodes
// are Ready before it) to the last old node gone. The lower bound is the
// critical path: with k the PDB's disruptionsAllowed when every pod is
// healthy (semantics.md §D.2), a drain that never has an eviction refused
// evicts at most k pods a wave, so it takes at least W = ceil(10/k)
// waves; a wave that spent the budget lets the next go only once its
// pods' replacements are Ready, PodStartup after their eviction (the
// replacements start on the surged nodes at once); and the last wave's
// node must still drain and be terminated — T1, the makespan of the
// PDB-less case, one wave. Bound = (W-1) × PodStartup + T1. Goal: ≤ 1.10
// × bound, no PDB breached. Beside it, the same group by an instance
// refresh with Auto Scaling's defaults (one instance at a time, the Node
// Termination Handler draining each node), EKS's and Auto Scaling's
// one-at-a-time default.
func TestSurgeWaves(t *testing.T) {
	const nodes = 10
	var oneWave int
	for _, c := range waveShapes {
		t.Run(c.name, func(t *testing.T) {
			ex, rec, kc, _ := surgeTwin(t, nodes, 2*nodes, c.pdb)
			if err := ex.SurgeGroup(context.Background(), "workers", kubeversion.MustParse("1.31")); err != nil {
				t.Fatal(err)
			}
			rec.log("ended")
			var first, last string
			waves := 0
			for _, l := range rec.lines {
				at, _, _ := strings.Cut(strings.TrimSpace(l), " ")
				if strings.Contains(l, "DrainWave") {
					waves++
					if first == "" {
						first = at
					}
				}
				last = at
			}
			makespan := seconds(t, last) - seconds(t, first)
			if c.pdb == nil {
				oneWave = makespan
			}
			bound := (c.waves-1)*int(kube.DefaultTimings.PodStartup/time.Second) + oneWave
			step := seconds(t, last)
			t.Logf("%s: %d waves, makespan %ds, bound %ds (%.2f×); the whole step %ds", c.name, waves, makespan, bound, float64(makespan)/float64(bound), step)
			if oneWave == 0 || float64(makespan) > 1.10*float64(bound) {
				t.Errorf("makespan %ds, want at most 1.10 × %ds", makespan, bound)
			}
			if waves != c.waves {
				t.Errorf("%d waves, want %d", waves, c.waves)
			}
			if b := kc.PDBBreaches(); len(b) != 0 {
				t.Errorf("PDB breaches %+v", b)
			}
			// The default: an instance refresh, Auto Scaling's
			// preferences, one instance at a time.
			ex, rec, kc, groups := surgeTwin(t, nodes, 2*nodes, c.pdb)
			if err := ex.RefreshGroup(context.Background(), "workers", nil, kubeversion.MustParse("1.31")); err != nil {
				t.Fatal(err)
			}
			st, _ := groups.Status("workers")
			refresh := int(math.Round(ex.Ports.Kube.Now().Sub(rec.start).Seconds()))
			t.Logf("%s: instance refresh (defaults) %ds, %.1f× Ladder's whole step; %d PDB breaches, %d pods killed", c.name, refresh, float64(refresh)/float64(step), len(kc.PDBBreaches()), st.PodsKilled)
		})
	}
}

// BenchmarkSurgeGroup replaces the group of 10 under maxUnavailable 1
// (ten waves); virtual-s/op is the step's virtual duration.
func BenchmarkSurgeGroup(b *testing.B) {
	t := &testing.T{}
	for b.Loop() {
		ex, rec, _, _ := surgeTwin(t, 10, 20, &policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("1")})
		if err := ex.SurgeGroup(context.Background(), "workers", kubeversion.MustParse("1.31")); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ex.Ports.Kube.Now().Sub(rec.start).Seconds(), "virtual-s/op")
	}
}
