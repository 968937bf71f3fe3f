package rehearse

import (
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Fargate in a rehearsal (semantics.md §E): a node group of type fargate is
// its profile's pods, one node each (internal/twinbuild registers the
// profiles). The playbook's `restart`
// strategy is the user guide's "rolling restart of all Fargate Pods".

func (r *run) fargateEvent(e fargate.Event) {
	r.events = append(r.events, report.Event{
		T: r.eng.Elapsed().Seconds(), Type: e.Type, Message: e.Message, Node: e.Node, Group: e.Profile,
		Source: "fargate-scheduler", Code: e.Reason,
	})
}

// restartFargate is the workshop's §6.5 for a profile: kubectl rollout
// restart of every Deployment and StatefulSet with a pod on one of the
// profile's nodes still below the hop's version, then kubectl rollout
// status until each is done and every pod of the profile runs on a node of
// the new version.
func (r *run) restartFargate(g scenario.NodeGroup, to kubeversion.Minor) error {
	var nodes []string // the profile's nodes
	for _, n := range r.kube.Nodes() {
		if p, ok := r.fargate.ProfileOf(n.Name); ok && p == g.Name {
			nodes = append(nodes, n.Name)
		}
	}
	seen := map[scenario.WorkloadRef]bool{}
	var refs []scenario.WorkloadRef
	var bare []string
	for _, name := range nodes {
		if v, err := kubeversion.Parse(r.kube.Node(name).Status.NodeInfo.KubeletVersion); err == nil && v == to {
			continue
		}
		for _, p := range r.kube.PodsOnNode(name) {
			kind, owner := r.kube.PodOwner(p.Namespace, p.Name)
			if kind == "Deployment" || kind == "StatefulSet" {
				k := scenario.WorkloadRef{Kind: kind, Namespace: p.Namespace, Name: owner}
				if !seen[k] {
					seen[k] = true
					refs = append(refs, k)
				}
				continue
			}
			bare = append(bare, p.Namespace+"/"+p.Name)
		}
	}
	if len(bare) > 0 {
		sort.Strings(bare)
		return fmt.Errorf("node group %s (Fargate profile): pod(s) %s have no Deployment or StatefulSet to restart; delete and recreate them to move them to %s", g.Name, strings.Join(bare, ", "), to)
	}
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		return objectKey(a.Kind, a.Namespace, a.Name) < objectKey(b.Kind, b.Namespace, b.Name)
	})
	for _, w := range refs {
		if err := r.rolloutRestart(w.Kind, w.Namespace, w.Name); err != nil {
			return fmt.Errorf("node group %s (Fargate profile): %v", g.Name, err)
		}
		r.event("Normal", "RolloutRestarted", fmt.Sprintf("Fargate profile %s: kubectl rollout restart %s/%s -n %s", g.Name, strings.ToLower(w.Kind), w.Name, w.Namespace))
	}
	return r.waitFor(r.everySecond(func() bool {
		// A Fargate node is disrupted while its pod terminates.
		disrupted := 0
		for _, n := range nodes {
			for _, p := range r.kube.PodsOnNode(n) {
				if p.DeletionTimestamp != nil {
					disrupted++
				}
			}
		}
		r.fargateMaxDisrupted[g.Name] = max(r.fargateMaxDisrupted[g.Name], disrupted)
		for _, w := range refs {
			if done, _, err := r.kube.RolloutStatus(w.Kind, w.Namespace, w.Name); err != nil || !done {
				return false
			}
		}
		return r.kube.Quiet() && r.groupAt(g.Name, to)
	}))
}

// rolloutRestart is kubectl rollout restart; the applied manifest takes the
// same restartedAt annotation, so a later patch of the workload keeps it
// (as kubectl apply's three-way merge keeps a field it did not set) instead
// of rolling the workload out again.
func (r *run) rolloutRestart(kind, namespace, name string) error {
	if err := r.kube.RolloutRestart(kind, namespace, name); err != nil {
		return err
	}
	r.rolling[objectKey(kind, namespace, name)] = scenario.WorkloadRef{Kind: kind, Namespace: namespace, Name: name}
	o, ok := r.objects[objectKey(kind, namespace, name)]
	if !ok {
		return nil
	}
	var t *corev1.PodTemplateSpec
	switch obj := o.Object.(type) {
	case *appsv1.Deployment:
		t = &obj.Spec.Template
	case *appsv1.StatefulSet:
		t = &obj.Spec.Template
	case *appsv1.DaemonSet:
		t = &obj.Spec.Template
	default:
		return nil
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[kube.RestartedAtAnnotation] = r.eng.Now().Format(time.RFC3339)
	return nil
}
