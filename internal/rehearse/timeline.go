package rehearse

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/timeline"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// The HTML report's timeline (internal/timeline) is recorded only when a
// rehearsal asks for it (RunTimeline): the recorder watches the twins the
// way a person watches kubectl get nodes -w and kubectl get deploy -w, and
// a plain rehearsal never registers it, so it pays nothing. It reads, it
// never changes the twins or schedules an event: the report is the same
// with or without it.

// RunTimeline rehearses like Run and also records the rehearsal over time.
func RunTimeline(sc *scenario.Scenario, opts Options) (*report.Report, *timeline.Timeline, error) {
	r, err := setup(sc, opts)
	if err != nil {
		return nil, nil, err
	}
	r.recorder = newRecorder(r, nil)
	status := r.play()
	rep := r.report(status)
	return rep, r.recorder.build(rep), nil
}

// Watcher sees a rehearsal sample by sample, as the timeline's recorder
// does, and every pod change as a watch on pods would: for a replay of
// the rehearsal (ladder view --scenario). Times are virtual seconds since
// the scenario's start. A Watcher must not keep the pod beyond the call.
type Watcher interface {
	Node(t float64, s timeline.NodeSample)
	Workload(t float64, s timeline.WorkloadSample)
	// Pod is a pod created, bound, Ready or not, terminating, or gone.
	Pod(t float64, p *corev1.Pod, gone bool)
}

// RunWatch rehearses like RunTimeline and tells w, from the starting
// cluster on, everything the recorder samples and every pod change. It
// reads, as the recorder does: the report is the same as Run's.
func RunWatch(sc *scenario.Scenario, opts Options, w Watcher) (*report.Report, *timeline.Timeline, error) {
	r, err := setup(sc, opts)
	if err != nil {
		return nil, nil, err
	}
	r.recorder = newRecorder(r, w)
	status := r.play()
	rep := r.report(status)
	return rep, r.recorder.build(rep), nil
}

// drainStarts are the events that say a node's drain began, whoever drains
// it: a managed node group's update or deletion (DrainStarted,
// EvictingPod), Karpenter's termination after its disruption taint
// (NodeTainted), the Node Termination Handler (NodeCordonedAndDrained),
// kubectl drain and the executor's drains (Evicted).
var drainStarts = map[string]bool{
	"DrainStarted": true, "EvictingPod": true, "NodeTainted": true, "NodeCordonedAndDrained": true, "Evicted": true,
}

// recorder follows a rehearsal's nodes, workloads and NodePools into a
// timeline.Builder.
type recorder struct {
	r *run
	b *timeline.Builder
	// draining are the nodes whose drain began.
	draining map[string]bool
	// pdbs are each namespace's PodDisruptionBudgets (nil until read);
	// floors the PDBs that select each workload's pods. Both are dropped
	// when the script applies or patches something.
	pdbs   map[string][]*policyv1.PodDisruptionBudget
	floors map[string][]*policyv1.PodDisruptionBudget
	// poolNodes are each NodePool's nodes the budget counts (Ready once
	// and not gone), by node; disrupting each pool's disrupting count.
	poolNodes  map[string]map[string]bool
	disrupting map[string]int
	// ungrouped are the nodes not yet known to a node group's twin (a
	// Fargate node is its profile's once its pod is bound to it).
	ungrouped map[string]bool
	// watch, when set, hears every sample and every pod change.
	watch Watcher
}

func newRecorder(r *run, watch Watcher) *recorder {
	rec := &recorder{
		r: r, b: timeline.NewBuilder(), draining: map[string]bool{}, watch: watch,
		floors:    map[string][]*policyv1.PodDisruptionBudget{},
		poolNodes: map[string]map[string]bool{}, disrupting: map[string]int{}, ungrouped: map[string]bool{},
	}
	for _, n := range r.kube.Nodes() {
		rec.node(n.Name, true)
	}
	for _, w := range r.kube.Workloads() {
		rec.workload(kube.WorkloadReady{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, Desired: w.Desired, Ready: w.Ready})
	}
	for _, pool := range r.karp.NodePools() {
		rec.pool(pool)
	}
	if watch != nil {
		for _, p := range r.kube.Pods() {
			watch.Pod(rec.now(), p, false)
		}
		pod := func(gone bool) func(*corev1.Pod) {
			return func(p *corev1.Pod) { watch.Pod(rec.now(), p, gone) }
		}
		r.kube.OnPodCreated(pod(false))
		r.kube.OnPodUpdate(pod(false))
		r.kube.OnPodDeleted(pod(true))
	}
	r.kube.OnNodeChange(func(name string) { rec.node(name, false) })
	r.kube.OnPodChange(func(name string) {
		if rec.ungrouped[name] {
			rec.node(name, false)
		}
	})
	r.kube.OnWorkloadReady(rec.workload)
	r.karp.OnDisrupting(func(pool string, n int) {
		rec.disrupting[pool] = n
		rec.pool(pool)
	})
	return rec
}

func (rec *recorder) now() float64 { return seconds(rec.r.eng.Elapsed()) }

// event notes a drain's start, and forgets the PDBs when the script
// changed objects.
func (rec *recorder) event(e report.Event) {
	switch {
	case e.Node != "" && drainStarts[e.Code] && !rec.draining[e.Node] && rec.r.kube.Node(e.Node) != nil:
		rec.draining[e.Node] = true
		rec.node(e.Node, false)
	case e.Source == "scenario" && (e.Code == "Applied" || e.Code == "Patched"):
		rec.pdbs = nil
		clear(rec.floors)
	}
}

// node samples a node; one that is not there any more is gone.
func (rec *recorder) node(name string, initial bool) {
	n := rec.r.kube.Node(name)
	if n == nil {
		delete(rec.ungrouped, name)
		rec.sampleNode(timeline.NodeSample{Name: name, Gone: true})
		for pool, nodes := range rec.poolNodes {
			if nodes[name] {
				delete(nodes, name)
				rec.pool(pool)
			}
		}
		return
	}
	group, typ := rec.r.nodeGroup(n)
	if group == "" {
		rec.ungrouped[name] = true
	} else {
		delete(rec.ungrouped, name)
	}
	ready := kube.IsNodeReady(n)
	rec.sampleNode(timeline.NodeSample{
		Name: name, Group: group, GroupType: typ, Version: n.Status.NodeInfo.KubeletVersion, Initial: initial,
		Ready: ready, Cordoned: n.Spec.Unschedulable || kube.HasTaint(n, karpenter.DisruptedTaintKey), Draining: rec.draining[name],
		InstanceType: n.Labels[corev1.LabelInstanceTypeStable],
	})
	// Karpenter's budget counts a pool's initialized nodes (semantics.md
	// §A.1b): here, its nodes from their first Ready until gone.
	if pool := n.Labels[karpv1.NodePoolLabelKey]; pool != "" && ready {
		nodes := rec.poolNodes[pool]
		if nodes == nil {
			nodes = map[string]bool{}
			rec.poolNodes[pool] = nodes
		}
		if !nodes[name] {
			nodes[name] = true
			rec.pool(pool)
		}
	}
}

func (rec *recorder) sampleNode(s timeline.NodeSample) {
	rec.b.Node(rec.now(), s)
	if rec.watch != nil {
		rec.watch.Node(rec.now(), s)
	}
}

// pool samples a NodePool's disrupting nodes against its drift budget.
func (rec *recorder) pool(name string) {
	np := rec.r.karp.NodePool(name)
	if np == nil {
		return
	}
	allowed, _ := disruption.AllowedByReason(np, rec.r.eng.Now(), len(rec.poolNodes[name]))
	group := rec.r.groups[name]
	if group == "" {
		group = name
	}
	rec.b.NodePool(rec.now(), name, group, rec.disrupting[name], allowed[karpv1.DisruptionReasonDrifted])
}

// workload samples a workload's Ready and desired counts and names the
// PDBs selecting its pods. The timeline takes each PDB's floor from the
// PDB's own status at the end (build: the report's pdbs[]), computed over
// every pod it selects; the floor a watcher is told is what the PDB would
// give this workload alone (a live view's approximation, wrong for a PDB
// spanning several workloads).
func (rec *recorder) workload(w kube.WorkloadReady) {
	key := objectKey(w.Kind, w.Namespace, w.Name)
	pdbs, ok := rec.floors[key]
	if !ok {
		pdbs = rec.selecting(w)
		rec.floors[key] = pdbs
	}
	floor := -1
	var names []string
	for _, p := range pdbs {
		if d, err := eviction.DesiredHealthy(p, w.Desired, w.Desired); err == nil {
			floor = max(floor, int(d))
		}
		names = append(names, p.Namespace+"/"+p.Name)
	}
	s := timeline.WorkloadSample{Namespace: w.Namespace, Name: w.Name, Kind: w.Kind,
		Ready: w.Ready, Desired: int(w.Desired), Floor: floor, PDBs: names}
	rec.b.Workload(rec.now(), s)
	if rec.watch != nil {
		rec.watch.Workload(rec.now(), s)
	}
}

// selecting is the PDBs whose selector matches the workload's pod
// template (a bare pod's own labels).
func (rec *recorder) selecting(w kube.WorkloadReady) []*policyv1.PodDisruptionBudget {
	var podLabels map[string]string
	if tmpl, ok := rec.r.kube.PodTemplate(w.Kind, w.Namespace, w.Name); ok {
		podLabels = tmpl.Labels
	} else if p := rec.r.kube.Pod(w.Namespace, w.Name); p != nil {
		podLabels = p.Labels
	}
	if rec.pdbs == nil {
		rec.pdbs = rec.appliedPDBs()
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Labels: podLabels}}
	return eviction.MatchingPDBs(pod, rec.pdbs[w.Namespace])
}

// appliedPDBs are the PodDisruptionBudgets applied so far, by namespace,
// sorted by name. They are the applied manifests, not the twin's objects:
// reading those would sync their status at an instant the rehearsal did
// not, and the recorder must change nothing.
func (rec *recorder) appliedPDBs() map[string][]*policyv1.PodDisruptionBudget {
	out := map[string][]*policyv1.PodDisruptionBudget{}
	for _, key := range slices.Sorted(maps.Keys(rec.r.objects)) {
		if pdb, ok := rec.r.objects[key].Object.(*policyv1.PodDisruptionBudget); ok {
			out[pdb.Namespace] = append(out[pdb.Namespace], pdb)
		}
	}
	return out
}

// build makes the timeline once the report is done: it ends at the
// makespan, its blocked drains are the report's, with their spans, and its
// PDBs are the report's pdbs[].
func (rec *recorder) build(rep *report.Report) *timeline.Timeline {
	now, start := rec.r.eng.Now(), rec.r.eng.Start()
	var blocked []timeline.Blocked
	for _, b := range rec.r.blocked() {
		blocked = append(blocked, timeline.Blocked{Node: b.node, Pod: b.pod, PDB: b.pdb,
			From: seconds(b.since.Sub(start)), To: seconds(b.end(now).Sub(start)), Outcome: b.outcome, Message: b.message})
	}
	return rec.b.Build(rep.MakespanSeconds, blocked, TimelinePDBs(rep.PDBs))
}

// TimelinePDBs are the report's PDBs as the timeline takes them.
func TimelinePDBs(pdbs []report.PDB) []timeline.PDB {
	ints := func(s []int32) []int {
		out := make([]int, len(s))
		for i, v := range s {
			out[i] = int(v)
		}
		return out
	}
	out := make([]timeline.PDB, 0, len(pdbs))
	for _, p := range pdbs {
		tp := timeline.PDB{Namespace: p.Namespace, Name: p.Name, Workloads: p.Workloads, SyncError: p.SyncError,
			T: p.Series.T, Healthy: ints(p.Series.Healthy), Desired: ints(p.Series.Desired), Allowed: ints(p.Series.Allowed)}
		if tp.Workloads == nil {
			tp.Workloads = []string{}
		}
		for _, d := range p.Drops {
			var step []string
			for _, s := range []string{d.Hop, d.Step, d.Name} {
				if s != "" {
					step = append(step, s)
				}
			}
			tp.Drops = append(tp.Drops, timeline.Drop{T: d.T, Pod: d.Pod, Node: d.Node, Workload: d.Workload, Cause: d.Cause, By: d.By,
				Step: strings.Join(step, " ")})
		}
		out = append(out, tp)
	}
	return out
}
