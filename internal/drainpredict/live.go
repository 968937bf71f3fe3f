package drainpredict

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// Drain prediction of a live cluster (ladder check against a kubeconfig):
// the cluster's nodes, workloads, PodDisruptionBudgets and volumes as its
// API server lists them are loaded into a twin with no node group, Karpenter
// or Fargate twin, each running pod on the node it runs on; then, as for a
// scenario (predict.go), nodes are drained one at a time, each in a fresh
// twin. Without the node group's surge or Karpenter's new nodes, a pod that
// fits on no other existing node is reported Pending.

// PerGroup is how many nodes of each node group a prediction drains
// (Scenario, Live): a node group's nodes run the same kind of pods, each
// drain sets up a fresh twin of the whole cluster, and a cluster of a
// thousand nodes must not take minutes. The nodes whose drain
// a PodDisruptionBudget refuses now come first, then those with pods a
// budget covers, then the others, by name within each rank (mostTelling).
const PerGroup = 3

// LiveCluster is a running cluster's state, as its API server lists it.
type LiveCluster struct {
	// Start is the twin's clock at the start (the time of the read).
	Start time.Time
	// Region and Zones are the cluster's, for claims the twin provisions.
	Region string
	Zones  []string
	// Nodes are the cluster's nodes with their group (Type as
	// internal/inventory spells it: managed, managed-custom-ami,
	// self-managed, karpenter, fargate; "" when unknown).
	Nodes []LiveNode
	// Objects are the listed objects the twin models: StorageClasses,
	// PersistentVolumes, PersistentVolumeClaims, PodDisruptionBudgets,
	// DaemonSets, StatefulSets, Deployments, ReplicaSets (read for their
	// Deployment) and Pods; their namespaces are created. Others are
	// ignored.
	Objects []metav1.Object
}

// LiveNode is a node of a live cluster and its group.
type LiveNode struct {
	Node  *corev1.Node
	Group twinbuild.GroupRef
}

// Live drains, each in a fresh twin of the live cluster, at
// most perGroup EC2 nodes of each node group (all of them when perGroup
// <= 0; see PerGroup for which; Fargate nodes are not drained),
// and reports what each drain does, in node-name order, with the objects
// the twin refused and left out ("Deployment shop/web: ...").
func Live(lc *LiveCluster, perGroup int) ([]Prediction, []string, error) {
	tw, err := liveTwin(lc)
	if err != nil {
		return nil, nil, err
	}
	refused := tw.refused
	groups := map[string]twinbuild.GroupRef{}
	byGroup := map[string][]string{}
	for _, n := range lc.Nodes {
		if n.Group.Type == report.GroupFargate || n.Node.Labels["eks.amazonaws.com/compute-type"] == "fargate" {
			continue
		}
		groups[n.Node.Name] = n.Group
		byGroup[n.Group.Name] = append(byGroup[n.Group.Name], n.Node.Name)
	}
	var nodes []string
	for _, names := range byGroup {
		if perGroup > 0 && len(names) > perGroup {
			names = mostTelling(tw.k, names)[:perGroup]
		}
		nodes = append(nodes, names...)
	}
	sort.Strings(nodes)
	out := make([]Prediction, 0, len(nodes))
	for i, node := range nodes {
		if i > 0 {
			// A fresh twin for each drain: the previous one changed the
			// cluster.
			if tw, err = liveTwin(lc); err != nil {
				return nil, nil, err
			}
		}
		out = append(out, liveNames(predictNodeDrain(tw.eng, tw.k, node, groups[node]), tw.names))
	}
	return out, refused, nil
}

// mostTelling orders a group's nodes by how telling their drain is: first
// those with a pod a PodDisruptionBudget refuses to let go now (none
// allowed, or two budgets), then those with a pod a budget covers, then
// the rest; by name within each rank.
func mostTelling(k *kube.Cluster, nodes []string) []string {
	rank := map[string]int{}
	for _, n := range nodes {
		rank[n] = 2
		for _, p := range k.PodsOnNode(n) {
			if kind, _ := k.PodOwner(p.Namespace, p.Name); kind == "DaemonSet" {
				continue
			}
			pdbs := k.PDBsOf(p)
			switch {
			case len(pdbs) > 1 || (len(pdbs) == 1 && pdbs[0].Status.DisruptionsAllowed == 0):
				rank[n] = 0
			case len(pdbs) == 1 && rank[n] > 1:
				rank[n] = 1
			}
		}
	}
	out := slices.Clone(nodes)
	sort.Slice(out, func(i, j int) bool {
		if rank[out[i]] != rank[out[j]] {
			return rank[out[i]] < rank[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// liveApplyOrder is the order kinds are applied in, dependencies first.
var liveApplyOrder = map[string]int{
	"StorageClass": 1, "PersistentVolume": 2, "PersistentVolumeClaim": 3, "PodDisruptionBudget": 4,
	"DaemonSet": 5, "StatefulSet": 6, "Deployment": 7, "Pod": 8,
}

// liveNames renames, in a prediction, the twin's pods of a Deployment to
// the live pods they stand for, and its replacements after the live
// ReplicaSet (names maps namespace/name in the twin to the live one's).
func liveNames(p Prediction, names map[string]string) Prediction {
	var renames []string // old, new: kubectl quotes the pods it names
	for i := range p.Blocks {
		b := &p.Blocks[i]
		if live, ok := names[b.Pod]; ok {
			_, twin, _ := strings.Cut(b.Pod, "/")
			_, name, _ := strings.Cut(live, "/")
			renames = append(renames, `"`+twin+`"`, `"`+name+`"`)
			b.Pod = live
		}
	}
	if len(renames) > 0 {
		r := strings.NewReplacer(renames...)
		p.Error = r.Replace(p.Error)
		for i := range p.Blocks {
			p.Blocks[i].Message = r.Replace(p.Blocks[i].Message)
		}
	}
	// A replacement a drain left Pending is named after its ReplicaSet, as
	// the live controller would name it: the live ReplicaSet's name, the
	// twin's random suffix.
	rs := map[string]string{}
	for twin, live := range names {
		if i, j := strings.LastIndex(twin, "-"), strings.LastIndex(live, "-"); i > 0 && j > 0 {
			rs[twin[:i]] = live[:j]
		}
	}
	for i := range p.Pending {
		pp := &p.Pending[i]
		if j := strings.LastIndex(pp.Pod, "-"); j > 0 && names[pp.Pod] == "" {
			if live, ok := rs[pp.Pod[:j]]; ok {
				pp.Pod = live + pp.Pod[j:]
			}
		}
	}
	sort.Slice(p.Blocks, func(i, j int) bool { return p.Blocks[i].Pod < p.Blocks[j].Pod })
	sort.Slice(p.Pending, func(i, j int) bool { return p.Pending[i].Pod < p.Pending[j].Pod })
	return p
}

// livePod is a live pod's name and node.
type livePod struct{ name, node string }

// twinOfLive is a live cluster's twin at its start.
type twinOfLive struct {
	eng *sim.Engine
	k   *kube.Cluster
	// names maps each Deployment pod of the twin (namespace/name) to the
	// live pod it stands for.
	names map[string]string
	// refused are the objects the twin refused ("Deployment shop/web: ..."),
	// left out.
	refused []string
}

// liveTwin builds the twin of a live cluster: its nodes as they are, its
// workloads' pods bound to the nodes their live pods run on (a mutating
// admission hook names the node while the starting state is created), its
// other pods as bare pods on their nodes, all Running and Ready.
func liveTwin(lc *LiveCluster) (*twinOfLive, error) {
	eng := sim.New(lc.Start, 1)
	k := kube.New(eng, kube.Options{Region: lc.Region, Zones: lc.Zones})
	for _, n := range lc.Nodes {
		node := n.Node.DeepCopy()
		node.ResourceVersion, node.ManagedFields = "", nil
		if err := k.AddNode(node, kube.IsNodeReady(n.Node)); err != nil {
			return nil, fmt.Errorf("node %s: %v", n.Node.Name, err)
		}
	}

	// Which Deployment owns each ReplicaSet; which nodes each workload's
	// pods run on.
	rsOwner := map[string]string{} // namespace/replicaset → deployment
	namespaces := map[string]bool{}
	for _, o := range lc.Objects {
		if ns := o.GetNamespace(); ns != "" {
			namespaces[ns] = true
		}
		if rs, ok := o.(*appsv1.ReplicaSet); ok {
			if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && ref.Kind == "Deployment" {
				rsOwner[rs.Namespace+"/"+rs.Name] = ref.Name
			}
		}
	}
	workloads := map[string]bool{}
	for _, o := range lc.Objects {
		switch o.(type) {
		case *appsv1.Deployment, *appsv1.StatefulSet, *appsv1.DaemonSet:
			workloads[workloadKey(o)+"/"+o.GetNamespace()+"/"+o.GetName()] = true
		}
	}
	deployPods := map[string][]livePod{} // namespace/deployment → its pods, by name
	setNodes := map[string]string{}      // namespace/pod of a StatefulSet → node
	var pods []*corev1.Pod
	var owners []string // each pod's workload, Kind/namespace/name; "" for others
	for _, p := range livePods(lc.Objects) {
		if p.Spec.NodeName != "" && k.Node(p.Spec.NodeName) == nil {
			continue // a node the listing did not return
		}
		owner := ""
		ref := metav1.GetControllerOfNoCopy(p)
		switch {
		case ref == nil:
		case ref.Kind == "DaemonSet" && workloads["DaemonSet/"+p.Namespace+"/"+ref.Name]:
			// The twin's DaemonSet controller places its own.
			owner = "DaemonSet/" + p.Namespace + "/" + ref.Name
		case ref.Kind == "StatefulSet" && workloads["StatefulSet/"+p.Namespace+"/"+ref.Name]:
			owner = "StatefulSet/" + p.Namespace + "/" + ref.Name
			setNodes[p.Namespace+"/"+p.Name] = p.Spec.NodeName
		case ref.Kind == "ReplicaSet" && workloads["Deployment/"+p.Namespace+"/"+rsOwner[p.Namespace+"/"+ref.Name]]:
			d := p.Namespace + "/" + rsOwner[p.Namespace+"/"+ref.Name]
			owner = "Deployment/" + d
			if p.Spec.NodeName != "" {
				deployPods[d] = append(deployPods[d], livePod{p.Name, p.Spec.NodeName})
			}
		}
		pods, owners = append(pods, p), append(owners, owner)
	}

	// While the starting state is created, each workload pod the twin's
	// controllers make is bound to the node a live pod of its workload runs
	// on; the replacements the drain makes are scheduled.
	placing := true
	names := map[string]string{}
	k.OnAdmit(func(pod *corev1.Pod) bool {
		if !placing || pod.Spec.NodeName != "" {
			return false
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref == nil {
			return false
		}
		node := ""
		switch ref.Kind {
		case "StatefulSet":
			node = setNodes[pod.Namespace+"/"+pod.Name]
		case "ReplicaSet":
			// The twin names a Deployment's ReplicaSet NAME-HASH.
			if i := strings.LastIndex(ref.Name, "-"); i > 0 {
				d := pod.Namespace + "/" + ref.Name[:i]
				if q := deployPods[d]; len(q) > 0 {
					node, deployPods[d] = q[0].node, q[1:]
					names[pod.Namespace+"/"+pod.Name] = pod.Namespace + "/" + q[0].name
				}
			}
		}
		if node == "" {
			return false
		}
		pod.Spec.NodeName = node
		return true
	})

	nsNames := make([]string, 0, len(namespaces))
	for ns := range namespaces {
		nsNames = append(nsNames, ns)
	}
	sort.Strings(nsNames)
	for _, ns := range nsNames {
		if err := k.Apply(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, err
		}
	}
	objs := make([]metav1.Object, 0, len(lc.Objects))
	for _, o := range lc.Objects {
		if _, ok := liveApplyOrder[workloadKey(o)]; ok && workloadKey(o) != "Pod" {
			objs = append(objs, o)
		}
	}
	sort.SliceStable(objs, func(i, j int) bool {
		return liveApplyOrder[workloadKey(objs[i])] < liveApplyOrder[workloadKey(objs[j])]
	})
	var refused []string
	refusedWorkloads := map[string]bool{}
	apply := func(o metav1.Object) {
		if err := k.Apply(startingCopy(o)); err != nil {
			// One object the twin does not take (a spec it does not model)
			// need not cost the whole prediction: a workload's pods stay,
			// as bare pods.
			refused = append(refused, fmt.Sprintf("%s %s/%s: %v", workloadKey(o), o.GetNamespace(), o.GetName(), err))
			refusedWorkloads[workloadKey(o)+"/"+o.GetNamespace()+"/"+o.GetName()] = true
		}
	}
	for _, o := range objs {
		apply(o)
	}
	// The other pods, on their nodes: bare pods, pods of other controllers
	// (Jobs, operators) and of workloads the twin refused.
	for i, p := range pods {
		if owners[i] == "" || refusedWorkloads[owners[i]] {
			apply(p)
		}
	}
	eng.Run(eng.Now(), nil)
	for _, n := range k.Nodes() {
		k.StartPodsNow(n.Name, n.CreationTimestamp.Time)
	}
	eng.Run(eng.Now(), nil)
	placing = false
	k.StartTracking()
	return &twinOfLive{eng: eng, k: k, names: names, refused: refused}, nil
}

// livePods are the pods that hold a place in the cluster, by name: not
// finished, not being deleted, not mirror pods (which kubectl drain skips
// and the kubelet, not the API, runs).
func livePods(objs []metav1.Object) []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range objs {
		p, ok := o.(*corev1.Pod)
		if !ok || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// workloadKey is the kind of a typed object the twin applies, "" for others.
func workloadKey(o metav1.Object) string {
	switch o.(type) {
	case *storagev1.StorageClass:
		return "StorageClass"
	case *corev1.PersistentVolume:
		return "PersistentVolume"
	case *corev1.PersistentVolumeClaim:
		return "PersistentVolumeClaim"
	case *policyv1.PodDisruptionBudget:
		return "PodDisruptionBudget"
	case *appsv1.DaemonSet:
		return "DaemonSet"
	case *appsv1.StatefulSet:
		return "StatefulSet"
	case *appsv1.Deployment:
		return "Deployment"
	case *corev1.Pod:
		return "Pod"
	}
	return ""
}

// startingCopy is an object as it is applied to the twin: its spec, without
// the server's bookkeeping and status (the twin's controllers write their
// own).
func startingCopy(o metav1.Object) metav1.Object {
	if workloadKey(o) == "" {
		return o
	}
	c := o.(runtime.Object).DeepCopyObject().(metav1.Object)
	// A StorageClass has no status; a PersistentVolume is applied as read.
	switch x := c.(type) {
	case *corev1.PersistentVolumeClaim:
		x.Status = corev1.PersistentVolumeClaimStatus{}
	case *policyv1.PodDisruptionBudget:
		x.Status = policyv1.PodDisruptionBudgetStatus{}
	case *appsv1.DaemonSet:
		x.Status = appsv1.DaemonSetStatus{}
	case *appsv1.StatefulSet:
		x.Status = appsv1.StatefulSetStatus{}
	case *appsv1.Deployment:
		x.Status = appsv1.DeploymentStatus{}
	case *corev1.Pod:
		x.Status = corev1.PodStatus{}
	}
	c.SetUID("")
	c.SetResourceVersion("")
	c.SetManagedFields(nil)
	c.SetCreationTimestamp(metav1.Time{})
	return c
}
