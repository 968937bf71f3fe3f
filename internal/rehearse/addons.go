package rehearse

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/scenario"
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

// applyAddon is what EKS does on UpdateAddon: the add-on's workloads get
// the version's images; the update is done once kubectl rollout status
// says each has rolled out.
func (r *run) applyAddon(name, version string) (rolledOut func() bool, err error) {
	v, err := eks.ParseAddonVersion(version)
	if err != nil {
		return nil, err
	}
	refs := scenario.AddonWorkloads(name)
	for _, w := range refs {
		o, ok := r.objects[objectKey(w.Kind, w.Namespace, w.Name)]
		if !ok {
			return nil, fmt.Errorf("add-on %s: %s %s/%s was not applied", name, w.Kind, w.Namespace, w.Name)
		}
		if updated, changed := withAddonImages(o, name, v); len(changed) > 0 {
			if err := r.apply(updated); err != nil {
				return nil, fmt.Errorf("add-on %s: %v", name, err)
			}
		}
	}
	return func() bool {
		for _, w := range refs {
			if done, _, err := r.kube.RolloutStatus(w.Kind, w.Namespace, w.Name); err != nil || !done {
				return false
			}
		}
		return true
	}, nil
}

// AddonVersion implements executor.Observer.
func (r *run) AddonVersion(name, version, note string) {
	r.addonVersions[name] = version
	if note != "" {
		r.addonNotes[name] = note
	}
}

// withAddonImages returns a copy of an add-on's workload manifest with its
// own containers on the version's images, and the images it changed.
func withAddonImages(o manifest.Object, addon string, v eks.AddonVersion) (manifest.Object, []string) {
	var t *corev1.PodTemplateSpec
	var obj metav1.Object
	switch w := o.Object.(type) {
	case *appsv1.Deployment:
		c := w.DeepCopy()
		obj, t = c, &c.Spec.Template
	case *appsv1.DaemonSet:
		c := w.DeepCopy()
		obj, t = c, &c.Spec.Template
	case *appsv1.StatefulSet:
		c := w.DeepCopy()
		obj, t = c, &c.Spec.Template
	default:
		return o, nil
	}
	var changed []string
	for _, list := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for i := range list {
			if img, own := eks.AddonImage(addon, list[i].Image, v); own && img != list[i].Image {
				list[i].Image = img
				changed = append(changed, img)
			}
		}
	}
	o.Object = obj
	return o, changed
}
