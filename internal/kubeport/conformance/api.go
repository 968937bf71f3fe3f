package conformance

import (
	"context"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// The rest of the port: reads with the status the controllers write, node
// patches with the API server's validation, and DELETE.

func apiCases() []testCase {
	return []testCase{
		{"api/lists-and-status", apiLists},
		{"api/patch-node", apiPatchNode},
		{"api/delete-ignores-pdb", apiDelete},
	}
}

func names[T any, PT interface {
	*T
	GetName() string
}](items []T) []string {
	out := []string{}
	for i := range items {
		out = append(out, PT(&items[i]).GetName())
	}
	return out
}

func podNames(pods []corev1.Pod) []string { return names(pods) }

// apiLists: two nodes; Deployment web (2) on n0, StatefulSet db (1) and
// DaemonSet agent on n1. Each list selects what it says, sorted by name,
// and each workload's status reaches what its controller writes.
func apiLists(f *fixture) error {
	n0, err := f.addNode("n0")
	if err != nil {
		return err
	}
	n1, err := f.addNode("n1")
	if err != nil {
		return err
	}
	if err := f.deployment("web", 2, n0); err != nil {
		return err
	}
	if err := f.statefulSet("db", 1, n1); err != nil {
		return err
	}
	if err := f.daemonSet("agent", n1); err != nil {
		return err
	}
	web, err := f.readyPods("web", 2)
	if err != nil {
		return err
	}
	agent, err := f.readyPods("agent", 1)
	if err != nil {
		return err
	}
	if _, err := f.readyPods("db", 1); err != nil {
		return err
	}

	nodes, err := f.env.ListNodes(f.ctx)
	if err != nil {
		return err
	}
	var ours []string
	for _, n := range nodes {
		if n.Labels[NodeLabel] != "" && (n.Name == n0 || n.Name == n1) {
			ours = append(ours, n.Name)
		}
	}
	if !reflect.DeepEqual(ours, []string{n0, n1}) {
		return mismatchf("ListNodes: want %s and %s in that order, got %v", n0, n1, names(nodes))
	}

	queries := []struct {
		q    kubeport.PodQuery
		want []string
	}{
		{kubeport.PodQuery{Namespace: f.ns, Node: n0}, podNames(web)},
		{kubeport.PodQuery{Node: n1}, []string{agent[0].Name, "db-0"}},
		{kubeport.PodQuery{Namespace: f.ns, Selector: labels.SelectorFromSet(labels.Set{"app": "db"})}, []string{"db-0"}},
		{kubeport.PodQuery{Namespace: f.ns, Node: n0, Selector: appSelector("db")}, []string{}},
	}
	for _, c := range queries {
		pods, err := f.env.ListPods(f.ctx, c.q)
		if err != nil {
			return err
		}
		if got := podNames(pods); !reflect.DeepEqual(got, c.want) {
			return mismatchf("ListPods(%+v): want %v, got %v", c.q, c.want, got)
		}
	}

	if err := f.waitWorkloads(); err != nil {
		return err
	}
	_, err = f.env.GetNode(f.ctx, f.ns+"-missing")
	if err := notFound("nodes", f.ns+"-missing").check("get a missing node", err); err != nil {
		return err
	}
	_, err = f.env.GetPod(f.ctx, f.ns, "missing")
	return notFound("pods", "missing").check("get a missing pod", err)
}

// waitWorkloads waits until the lists of apiLists' workloads carry the
// status their controllers write once every pod is Ready.
func (f *fixture) waitWorkloads() error {
	type seen struct {
		Deployments  []string
		StatefulSets []string
		DaemonSets   []string
	}
	want := seen{
		Deployments:  []string{"web generation=1 observed=1 replicas=2 updated=2 ready=2 available=2 unavailable=0"},
		StatefulSets: []string{"db generation=1 observed=1 replicas=1 ready=1 current=1 updated=1 available=1"},
		DaemonSets:   []string{"agent generation=1 observed=1 desired=1 current=1 ready=1 updated=1 available=1 unavailable=0"},
	}
	var got seen
	err := f.env.Wait(f.ctx, waitTimeout, func(ctx context.Context) (bool, error) {
		deps, err := f.env.ListDeployments(ctx, f.ns)
		if err != nil {
			return false, err
		}
		sets, err := f.env.ListStatefulSets(ctx, f.ns)
		if err != nil {
			return false, err
		}
		dss, err := f.env.ListDaemonSets(ctx, f.ns)
		if err != nil {
			return false, err
		}
		got = seen{Deployments: []string{}, StatefulSets: []string{}, DaemonSets: []string{}}
		for _, d := range deps {
			got.Deployments = append(got.Deployments, deploymentLine(&d))
		}
		for _, s := range sets {
			got.StatefulSets = append(got.StatefulSets, statefulSetLine(&s))
		}
		for _, d := range dss {
			got.DaemonSets = append(got.DaemonSets, daemonSetLine(&d))
		}
		return reflect.DeepEqual(got, want), nil
	})
	if err != nil {
		return mismatchf("workload status:\n  want %+v\n  got  %+v\n  (%v)", want, got, err)
	}
	return nil
}

func deploymentLine(d *appsv1.Deployment) string {
	s := d.Status
	return fmt.Sprintf("%s generation=%d observed=%d replicas=%d updated=%d ready=%d available=%d unavailable=%d",
		d.Name, d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas, s.UnavailableReplicas)
}

func statefulSetLine(d *appsv1.StatefulSet) string {
	s := d.Status
	return fmt.Sprintf("%s generation=%d observed=%d replicas=%d ready=%d current=%d updated=%d available=%d",
		d.Name, d.Generation, s.ObservedGeneration, s.Replicas, s.ReadyReplicas, s.CurrentReplicas, s.UpdatedReplicas, s.AvailableReplicas)
}

func daemonSetLine(d *appsv1.DaemonSet) string {
	s := d.Status
	return fmt.Sprintf("%s generation=%d observed=%d desired=%d current=%d ready=%d updated=%d available=%d unavailable=%d",
		d.Name, d.Generation, s.ObservedGeneration, s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.NumberReady,
		s.UpdatedNumberScheduled, s.NumberAvailable, s.NumberUnavailable)
}

// apiPatchNode: labels, annotations and taints are set and removed in one
// write each; an invalid label is refused whole with the API server's 422.
func apiPatchNode(f *fixture) error {
	node, err := f.addNode("n0")
	if err != nil {
		return err
	}
	taint := corev1.Taint{Key: "example.com/maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	set := kubeport.NodePatch{
		Labels:      map[string]*string{"example.com/role": ptr("batch")},
		Annotations: map[string]*string{"example.com/note": ptr("draining soon")},
		AddTaints:   []corev1.Taint{taint},
	}
	if _, err := f.env.PatchNode(f.ctx, node, set); err != nil {
		return mismatchf("patch %s: %v", node, err)
	}
	if err := f.nodeHas(node, "batch", "draining soon", true); err != nil {
		return err
	}
	unset := kubeport.NodePatch{Labels: map[string]*string{"example.com/role": nil}, RemoveTaints: []string{taint.Key}}
	if _, err := f.env.PatchNode(f.ctx, node, unset); err != nil {
		return mismatchf("patch %s: %v", node, err)
	}
	if err := f.nodeHas(node, "", "draining soon", false); err != nil {
		return err
	}

	bad := kubeport.NodePatch{Labels: map[string]*string{"example.com/role": ptr("x"), "bad key!": ptr("x")}}
	_, err = f.env.PatchNode(f.ctx, node, bad)
	labelErrs := metav1validation.ValidateLabels(map[string]string{"bad key!": "x"}, field.NewPath("metadata", "labels"))
	invalid := apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Node").GroupKind(), node, labelErrs).ErrStatus
	want := wantStatus{Code: 422, Reason: "Invalid", Message: invalid.Message, Causes: invalid.Details.Causes}
	if err := want.check("patch an invalid label", err); err != nil {
		return err
	}
	return f.nodeHas(node, "", "draining soon", false) // nothing of the bad patch applied
}

// nodeHas checks the example.com/role label ("" for absent), the note
// annotation and the maintenance taint on a node.
func (f *fixture) nodeHas(node, role, note string, tainted bool) error {
	n, err := f.env.GetNode(f.ctx, node)
	if err != nil {
		return err
	}
	gotRole, hasRole := n.Labels["example.com/role"]
	if gotRole != role || hasRole != (role != "") {
		return mismatchf("node %s: want label example.com/role=%q (present=%v), got %q (present=%v)", node, role, role != "", gotRole, hasRole)
	}
	if got := n.Annotations["example.com/note"]; got != note {
		return mismatchf("node %s: want annotation example.com/note=%q, got %q", node, note, got)
	}
	has := false
	for _, t := range n.Spec.Taints {
		if t.Key == "example.com/maintenance" && t.Value == "true" && t.Effect == corev1.TaintEffectNoSchedule {
			has = true
		}
	}
	if has != tainted {
		return mismatchf("node %s: want taint example.com/maintenance=true:NoSchedule present=%v, taints %+v", node, tainted, n.Spec.Taints)
	}
	return nil
}

// apiDelete: DELETE ignores PDBs. With grace period 0 the pod is gone when
// the call returns; with the pod's own grace period it goes soon after.
func apiDelete(f *fixture) error {
	_, pods, err := f.web(2, pdbSpec{name: "web", app: "web", minAvailable: intOrStr(2)})
	if err != nil {
		return err
	}
	if err := f.env.DeletePod(f.ctx, f.ns, pods[0].Name, ptr(int64(0))); err != nil {
		return mismatchf("delete %s with grace 0 under an exhausted PDB: %v", pods[0].Name, err)
	}
	if _, err := f.env.GetPod(f.ctx, f.ns, pods[0].Name); !apierrors.IsNotFound(err) {
		return mismatchf("pod %s deleted with grace 0 should be gone at once, GetPod gave %v", pods[0].Name, err)
	}
	if err := f.env.DeletePod(f.ctx, f.ns, pods[1].Name, nil); err != nil {
		return mismatchf("delete %s under an exhausted PDB: %v", pods[1].Name, err)
	}
	return f.gone(pods[1].Name)
}
