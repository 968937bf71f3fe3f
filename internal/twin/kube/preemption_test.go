package kube

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/util/podutils"

	workloadrules "github.com/ladder-eks/ladder/internal/rules/workload"
)

// A DaemonSet's pod is scheduled by the default scheduler to its node;
// when app pods fill that node, the system-node-critical daemon pod
// preempts one of them instead of staying Pending.
func TestDaemonPodPreemptsAppPodsOnAFullNode(t *testing.T) {
	eng, c := newCluster(t)
	var events []Event
	c.OnEvent(func(e Event) { events = append(events, e) })
	must(t, c.AddNode(node("n1", "us-west-2a", "2", "8Gi"), true))
	must(t, c.Apply(deployment("default", "web", 2, "1")))
	run(eng, time.Minute)
	if got := readyPods(c, "default"); got != 2 {
		t.Fatalf("%d web pods ready, want 2", got)
	}

	ds := daemonSet("aws-node")
	ds.Namespace = "kube-system"
	ds.Spec.Template.Spec.PriorityClassName = workloadrules.SystemNodeCritical
	ds.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	must(t, c.Apply(ds))
	run(eng, time.Second)
	daemon := podsOf(c, "kube-system")
	if len(daemon) != 1 {
		t.Fatalf("%d daemon pods, want 1", len(daemon))
	}
	if got := daemon[0].Status.NominatedNodeName; got != "n1" {
		t.Fatalf("daemon pod nominated to %q, want n1 (PodScheduled: %v)", got, daemon[0].Status.Conditions)
	}
	var victims []*corev1.Pod
	for _, p := range podsOf(c, "default") {
		if p.DeletionTimestamp != nil {
			victims = append(victims, p)
		}
	}
	if len(victims) != 1 || !preemptedByScheduler(victims[0]) {
		t.Fatalf("%d web pods terminating, want 1 with DisruptionTarget PreemptionByScheduler", len(victims))
	}

	run(eng, time.Minute)
	p := c.Pod("kube-system", daemon[0].Name)
	if p.Spec.NodeName != "n1" || !podutils.IsPodReady(p) || p.Status.NominatedNodeName != "" {
		t.Fatalf("daemon pod on %q ready %v nominated %q, want Ready on n1 and no nomination", p.Spec.NodeName, podutils.IsPodReady(p), p.Status.NominatedNodeName)
	}
	if got := readyPods(c, "default"); got != 1 {
		t.Fatalf("%d web pods ready, want 1 (its replacement has no room)", got)
	}
	var preempted []string
	for _, e := range events {
		if e.Reason == "Preempted" {
			preempted = append(preempted, e.Message)
		}
	}
	if len(preempted) != 1 || !strings.Contains(preempted[0], "preempted by pod kube-system/"+daemon[0].Name) {
		t.Fatalf("Preempted events %q", preempted)
	}
}

func podsOf(c *Cluster, ns string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.Pods() {
		if p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

func preemptedByScheduler(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.DisruptionTarget {
			return cond.Status == corev1.ConditionTrue && cond.Reason == corev1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// runningPod is a bare pod bound to a node, of a class, requesting CPU.
type runningPod struct {
	name, node, class, cpu string
	app                    string // label app=, for PDBs
}

func (r runningPod) pod() *corev1.Pod {
	p := classPod(r.name, r.class, nil, nil)
	p.Spec.NodeName = r.node
	p.Labels = map[string]string{"app": r.app}
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(r.cpu)}
	return p
}

// DefaultPreemption's choices: which pods may be preempted, the victims
// on a node (as few and as unimportant as possible, PDBs spared where
// possible), and the node (pickOneNodeForPreemption's criteria in order).
func TestPreemptionChoosesVictimsAsKubeScheduler(t *testing.T) {
	type nodeSpec struct {
		name    string
		tainted bool
	}
	two := []nodeSpec{{name: "n1"}, {name: "n2"}}
	cases := []struct {
		name  string
		nodes []nodeSpec
		pods  []runningPod
		// together starts the pods at the same time; otherwise each starts
		// 10 s after the one before.
		together  bool
		guarded   string // app whose pods a PDB with minAvailable 1 covers
		preemptor runningPod
		node      string   // the node preempted on, "" for none
		victims   []string // sorted
	}{
		{name: "a lower-priority pod is preempted", nodes: two[:1],
			pods:      []runningPod{{name: "a", node: "n1", class: "low", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}, node: "n1", victims: []string{"a"}},
		{name: "an equal-priority pod is not", nodes: two[:1],
			pods:      []runningPod{{name: "a", node: "n1", class: "high", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}},
		{name: "a higher-priority pod is not", nodes: two[:1],
			pods:      []runningPod{{name: "a", node: "n1", class: "high", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "mid", cpu: "1"}},
		{name: "preemptionPolicy Never does not preempt", nodes: two[:1],
			pods:      []runningPod{{name: "a", node: "n1", class: "low", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "high-never", cpu: "1"}},
		{name: "a node whose taint the pod does not tolerate is no candidate", nodes: []nodeSpec{{name: "n1", tainted: true}, {name: "n2"}},
			pods:      []runningPod{{name: "a", node: "n1", class: "low", cpu: "2"}, {name: "b", node: "n2", class: "high", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}},
		{name: "the more important pods are reprieved while the pod still fits", nodes: two[:1],
			pods: []runningPod{{name: "a", node: "n1", class: "low", cpu: "500m"}, {name: "b", node: "n1", class: "mid", cpu: "500m"},
				{name: "c", node: "n1", class: "low", cpu: "1"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}, node: "n1", victims: []string{"c"}},
		{name: "a pod whose PDB would be violated is reprieved first", nodes: two[:1], guarded: "guarded",
			pods:      []runningPod{{name: "a", node: "n1", class: "low", cpu: "1"}, {name: "b", node: "n1", class: "low", cpu: "1", app: "guarded"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}, node: "n1", victims: []string{"a"}},
		{name: "a PDB violation when nothing else makes room", nodes: two[:1], guarded: "guarded",
			pods:      []runningPod{{name: "a", node: "n1", class: "low", cpu: "2", app: "guarded"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}, node: "n1", victims: []string{"a"}},
		{name: "the node with fewest PDB violations", nodes: two, guarded: "guarded",
			pods:      []runningPod{{name: "a", node: "n2", class: "low", cpu: "2"}, {name: "b", node: "n1", class: "low", cpu: "2", app: "guarded"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}, node: "n2", victims: []string{"a"}},
		{name: "the node whose highest victim priority is lowest", nodes: two,
			pods:      []runningPod{{name: "a", node: "n1", class: "mid", cpu: "2"}, {name: "b", node: "n2", class: "low", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}, node: "n2", victims: []string{"b"}},
		{name: "the node with the smallest sum of victim priorities", nodes: two,
			pods: []runningPod{{name: "a", node: "n1", class: "low", cpu: "1"}, {name: "b", node: "n1", class: "low", cpu: "1"},
				{name: "c", node: "n2", class: "low", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "2"}, node: "n2", victims: []string{"c"}},
		{name: "the node whose victims started last", nodes: two,
			pods:      []runningPod{{name: "a", node: "n1", class: "low", cpu: "2"}, {name: "b", node: "n2", class: "low", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}, node: "n2", victims: []string{"b"}},
		{name: "a full tie goes to the first node by name", nodes: two, together: true,
			pods:      []runningPod{{name: "a", node: "n1", class: "low", cpu: "2"}, {name: "b", node: "n2", class: "low", cpu: "2"}},
			preemptor: runningPod{name: "p", class: "high", cpu: "1"}, node: "n1", victims: []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, c := newCluster(t)
			never := corev1.PreemptNever
			highNever := priorityClassOf("high-never", 1000)
			highNever.PreemptionPolicy = &never
			for _, pc := range []any{priorityClassOf("low", 100), priorityClassOf("mid", 500), priorityClassOf("high", 1000), highNever} {
				must(t, c.Apply(pc.(metav1.Object)))
			}
			taint := corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
			for _, n := range tc.nodes {
				if n.tainted {
					must(t, c.AddNode(node(n.name, "us-west-2a", "2", "8Gi", taint), true))
				} else {
					must(t, c.AddNode(node(n.name, "us-west-2a", "2", "8Gi"), true))
				}
			}
			for _, r := range tc.pods {
				p := r.pod()
				if r.node == "n1" && len(tc.nodes) > 0 && tc.nodes[0].tainted {
					p.Spec.Tolerations = []corev1.Toleration{{Key: taint.Key, Operator: corev1.TolerationOpExists}}
				}
				must(t, c.Apply(p))
				if !tc.together {
					run(eng, 10*time.Second)
				}
			}
			if tc.guarded != "" {
				must(t, c.Apply(pdb("guard", tc.guarded, 1)))
			}
			run(eng, time.Minute)

			must(t, c.Apply(tc.preemptor.pod()))
			run(eng, time.Second)
			var victims []string
			for _, p := range podsOf(c, "default") {
				if p.DeletionTimestamp != nil {
					if !preemptedByScheduler(p) {
						t.Errorf("%s terminating without DisruptionTarget PreemptionByScheduler", p.Name)
					}
					victims = append(victims, p.Name)
				}
			}
			slices.Sort(victims)
			p := c.Pod("default", "p")
			if p.Status.NominatedNodeName != tc.node || !slices.Equal(victims, tc.victims) {
				t.Fatalf("nominated %q victims %q, want %q %q", p.Status.NominatedNodeName, victims, tc.node, tc.victims)
			}
			run(eng, time.Minute)
			if got := c.Pod("default", "p").Spec.NodeName; got != tc.node {
				t.Fatalf("preemptor bound to %q, want %q", got, tc.node)
			}
		})
	}
}

// A Deployment's pod of high priority preempts too, and two such pods do
// not both count on the same victims: the second sees the first one's
// nomination (RunFilterPluginsWithNominatedPods) and preempts elsewhere.
func TestNominatedPodsReserveTheirRoom(t *testing.T) {
	eng, c := newCluster(t)
	must(t, c.Apply(priorityClassOf("low", 100)))
	must(t, c.Apply(priorityClassOf("high", 1000)))
	for _, n := range []string{"n1", "n2"} {
		must(t, c.AddNode(node(n, "us-west-2a", "2", "8Gi"), true))
		must(t, c.Apply(runningPod{name: "filler-" + n, node: n, class: "low", cpu: "2"}.pod()))
	}
	run(eng, time.Minute)
	d := deployment("default", "api", 2, "2")
	d.Spec.Template.Spec.PriorityClassName = "high"
	must(t, c.Apply(d))
	run(eng, time.Second)
	nominated := map[string]int{}
	for _, p := range podsOf(c, "default") {
		if strings.HasPrefix(p.Name, "api-") {
			nominated[p.Status.NominatedNodeName]++
		}
	}
	if nominated["n1"] != 1 || nominated["n2"] != 1 {
		t.Fatalf("api pods nominated %v, want one on each node", nominated)
	}
	run(eng, time.Minute)
	ready := 0
	for _, p := range podsOf(c, "default") {
		if strings.HasPrefix(p.Name, "api-") && podutils.IsPodReady(p) {
			ready++
		}
	}
	if ready != 2 {
		t.Fatalf("%d api pods ready, want 2", ready)
	}
}

// A nominated pod's room is not taken by a pod of no higher priority that
// waited longer: when the victim is gone, the earlier pod of equal
// priority (which may not preempt) is filtered against the nomination, as
// RunFilterPluginsWithNominatedPods does, and the preemptor gets the node.
func TestNominationHoldsRoomAgainstEqualPriority(t *testing.T) {
	eng, c := newCluster(t)
	never := corev1.PreemptNever
	highNever := priorityClassOf("high-never", 1000)
	highNever.PreemptionPolicy = &never
	must(t, c.Apply(priorityClassOf("low", 100)))
	must(t, c.Apply(priorityClassOf("high", 1000)))
	must(t, c.Apply(highNever))
	must(t, c.AddNode(node("n1", "us-west-2a", "2", "8Gi"), true))
	must(t, c.Apply(runningPod{name: "filler", node: "n1", class: "low", cpu: "2"}.pod()))
	run(eng, time.Minute)
	must(t, c.Apply(runningPod{name: "waiting", class: "high-never", cpu: "2"}.pod()))
	run(eng, time.Second)
	must(t, c.Apply(runningPod{name: "preemptor", class: "high", cpu: "2"}.pod()))
	run(eng, time.Minute)
	if got := c.Pod("default", "preemptor").Spec.NodeName; got != "n1" {
		t.Fatalf("preemptor on %q, want n1", got)
	}
	if got := c.Pod("default", "waiting").Spec.NodeName; got != "" {
		t.Fatalf("the waiting pod took the preemptor's room on %q", got)
	}
}
