package kube

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"slices"
)

// revision is one version of a workload's pod template and the pods made
// from it: a Deployment's ReplicaSet, or a StatefulSet's or DaemonSet's
// ControllerRevision. Pods keep the revision they were made from, so a
// rollout's old pods keep their old spec.
type revision struct {
	// name is the ReplicaSet or ControllerRevision name, <workload>-<hash>.
	name string
	// hash is the template's hash: a ReplicaSet pod's pod-template-hash
	// label, a DaemonSet pod's controller-revision-hash label (a StatefulSet
	// pod's controller-revision-hash label is the revision's name).
	hash string
	// uid is the ReplicaSet's UID, for its pods' controllerRef.
	uid types.UID
	// number is deployment.kubernetes.io/revision or
	// ControllerRevision.revision: the highest is the latest.
	number int64
	// seq orders revisions by creation, standing in for upstream's
	// creationTimestamp order (ReplicaSetsByCreationTimestamp).
	seq int
	// template is the workload's spec.template as it was; pods add the
	// labels their controller adds.
	template corev1.PodTemplateSpec
	// generation is a DaemonSet's template generation when the revision was
	// made (the pod-template-generation label).
	generation int64
	// sig numbers the template's scheduling constraints (signature); req is
	// what each pod requests, computed once.
	sig    int
	req    Resources
	reqSet bool
	// pdbs are the PDBs a pod of the template matches, as of the cluster's
	// pdbGen (indexPodInPDBs).
	pdbs   []*pdbState
	pdbGen uint64

	// pods counts the revision's pods in the store, terminating ones
	// included; active those not terminating, ready those of them Ready,
	// available those Ready for minReadySeconds.
	pods, active, ready, available int

	// A ReplicaSet's spec.replicas and the deployment.kubernetes.io
	// desired-replicas and max-replicas annotations the deployment
	// controller keeps on it (SetReplicasAnnotations).
	replicas           int32
	desiredAnn, maxAnn int32
}

// newRevision records a new revision of w's template, numbered after the
// latest (upstream nextRevision / MaxRevision+1).
func (c *Cluster) newRevision(w *workload, t corev1.PodTemplateSpec) *revision {
	hash := podTemplateHash(&t)
	r := &revision{name: w.name + "-" + hash, hash: hash, template: t, sig: c.signature(&t.Spec), seq: w.revSeq, generation: w.templateGeneration}
	w.revSeq++
	r.number = w.maxRevisionNumber() + 1
	if w.kind == "Deployment" {
		r.uid = c.newUID("ReplicaSet")
	}
	w.revs = append(w.revs, r)
	return r
}

// findRevision returns the revision whose template equals t, as upstream
// finds a Deployment's new ReplicaSet (FindNewReplicaSet, EqualIgnoreHash)
// and a ControllerRevision (FindEqualRevisions); the match becomes the
// latest revision again, as a rollback renumbers it.
func (w *workload) findRevision(t *corev1.PodTemplateSpec) *revision {
	for _, r := range w.revs {
		if apiequality.Semantic.DeepEqual(&r.template, t) {
			if max := w.maxRevisionNumber(); r.number < max {
				r.number = max + 1
			}
			return r
		}
	}
	return nil
}

func (w *workload) maxRevisionNumber() int64 {
	var max int64
	for _, r := range w.revs {
		if r.number > max {
			max = r.number
		}
	}
	return max
}

// updating reports whether pods of a revision other than the current one
// are still in the store: a rollout is under way.
func (w *workload) updating() bool {
	for _, r := range w.revs {
		if r != w.cur && r.pods > 0 {
			return true
		}
	}
	return false
}

// revisionRequests returns what each pod of r requests, computed once.
func (r *revision) requests(pod *corev1.Pod) Resources {
	if !r.reqSet {
		r.req, r.reqSet = PodRequests(pod), true
	}
	return r.req
}

// podFromTemplate is a controller's new pod for a template: its own copy of
// the template's metadata and pod spec, written in place. The containers'
// contents are shared with the template: nothing in the twin writes to a
// stored pod's containers (requests, probes, images are read-only here, as
// a pod's are in Kubernetes without in-place resize), and sharing them
// halves the memory a pod takes. Everything else is copied.
func podFromTemplate(t *corev1.PodTemplateSpec) *corev1.Pod {
	p := &corev1.Pod{}
	t.ObjectMeta.DeepCopyInto(&p.ObjectMeta)
	shallow := t.Spec
	shallow.Containers, shallow.InitContainers = nil, nil
	shallow.DeepCopyInto(&p.Spec)
	p.Spec.Containers = slices.Clone(t.Spec.Containers)
	p.Spec.InitContainers = slices.Clone(t.Spec.InitContainers)
	return p
}
