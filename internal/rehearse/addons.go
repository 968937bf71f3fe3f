package rehearse

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/twin/eks"
)

// Add-ons in a rehearsal: the executor's UpdateAddon (internal/executor)
// reaches the twin through the EKS port (awsport/twinaws), which checks it
// by the EKS twin's rules (internal/twin/eks/addons.go); then the add-on's
// workloads in kube-system get the new images and roll out by their own
// strategies — a DaemonSet node by node, a Deployment with surge under its
// PDB — and the executor waits for kubectl rollout status of each.

// addonVersion is the version an add-on runs now.
func (r *run) addonVersion(name string) string {
	if v, ok := r.addonVersions[name]; ok {
		return v
	}
	for _, a := range r.sc.Spec.Addons {
		if a.Name == name {
			return a.Version
		}
	}
	return ""
}

// applyAddon is what EKS does on UpdateAddon (eks.ApplyAddon), on the
// twin's cluster.
func (r *run) applyAddon(name, version string) (rolledOut func() bool, err error) {
	return eks.ApplyAddon(addonKube{r}, name, version)
}

// addonKube is the rehearsal's eks.AddonKube: a workload's new template is
// applied as a manifest, so the run follows its rollout, and a rollout is
// done when kubectl rollout status says so.
type addonKube struct{ r *run }

func (k addonKube) UpdatePodTemplate(kind, namespace, name string, mutate func(*corev1.PodTemplateSpec) bool) error {
	o, ok := k.r.objects[objectKey(kind, namespace, name)]
	if !ok {
		return fmt.Errorf("%s %s/%s was not applied", kind, namespace, name)
	}
	var t *corev1.PodTemplateSpec
	switch w := o.Object.(type) {
	case *appsv1.Deployment:
		c := w.DeepCopy()
		o.Object, t = c, &c.Spec.Template
	case *appsv1.DaemonSet:
		c := w.DeepCopy()
		o.Object, t = c, &c.Spec.Template
	case *appsv1.StatefulSet:
		c := w.DeepCopy()
		o.Object, t = c, &c.Spec.Template
	default:
		return nil
	}
	if !mutate(t) {
		return nil
	}
	return k.r.apply(o)
}

func (k addonKube) RolledOut(kind, namespace, name string) bool {
	done, _, err := k.r.kube.RolloutStatus(kind, namespace, name)
	return err == nil && done
}

// AddonVersion implements executor.Observer.
func (r *run) AddonVersion(name, version, note string) {
	r.addonVersions[name] = version
	if note != "" {
		r.addonNotes[name] = note
	}
}
