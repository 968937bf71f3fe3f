package rehearse

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
)

// Fargate in a rehearsal (semantics.md §E): a node group of type fargate is
// its profile's pods, one node each (internal/twinbuild registers the
// profiles). The executor's `restart`
// strategy (RestartFargate) is the user guide's "rolling restart of all
// Fargate Pods"; the rehearsal follows it as a RestartObserver.

func (r *run) fargateEvent(e fargate.Event) {
	r.log(report.Event{
		T: r.eng.Elapsed().Seconds(), Type: e.Type, Message: e.Message, Node: e.Node, Group: e.Profile,
		Source: "fargate-scheduler", Code: e.Reason,
	})
}

// RolloutRestarted implements executor.RestartObserver: the rehearsal
// follows the workload's rollout, and its applied manifest takes the
// annotation the restart set.
func (r *run) RolloutRestarted(w kubeport.Workload) { r.restarted(w.Kind, w.Namespace, w.Name) }

// RestartPolled implements executor.RestartObserver: a Fargate node is
// disrupted while its pod terminates, and the report gives the most of a
// profile's nodes disrupted at one reading.
func (r *run) RestartPolled(profile string, nodes []string) {
	disrupted := 0
	for _, n := range nodes {
		for _, p := range r.kube.PodsOnNode(n) {
			if p.DeletionTimestamp != nil {
				disrupted++
			}
		}
	}
	r.fargateMaxDisrupted[profile] = max(r.fargateMaxDisrupted[profile], disrupted)
}

// restarted records a rollout restart: the rehearsal follows the rollout,
// and the applied manifest takes the same restartedAt annotation.
func (r *run) restarted(kind, namespace, name string) {
	r.rolling[objectKey(kind, namespace, name)] = scenario.WorkloadRef{Kind: kind, Namespace: namespace, Name: name}
	o, ok := r.objects[objectKey(kind, namespace, name)]
	if !ok {
		return
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
		return
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[kubeport.RestartedAtAnnotation] = r.eng.Now().Format(time.RFC3339)
}
