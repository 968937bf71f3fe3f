package eks

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/rules/addon"
)

// EKS add-ons: the rules are internal/rules/addon's (semantics.md §E).

// AddonKube is what UpdateAddon does to Kubernetes (semantics.md §E): it
// writes the add-on's workloads' pod templates and reads their rollouts.
// The twin's cluster implements it in a rehearsal; a lab's API server
// through client-go.
type AddonKube interface {
	// UpdatePodTemplate applies mutate to the pod template of the
	// workload kind namespace/name and writes the workload back when
	// mutate reports a change.
	UpdatePodTemplate(kind, namespace, name string, mutate func(*corev1.PodTemplateSpec) (changed bool)) error
	// RolledOut reports whether kubectl rollout status would say the
	// workload has rolled out.
	RolledOut(kind, namespace, name string) bool
}

// ApplyAddon is what EKS does on an accepted UpdateAddon: the add-on's
// workloads (addon.Workloads) get the version's images, and each
// rolls out by its own strategy — a DaemonSet node by node, a Deployment
// with surge under its PDB. rolledOut reports when every one has.
func ApplyAddon(k AddonKube, name, version string) (rolledOut func() bool, err error) {
	v, err := addon.ParseVersion(version)
	if err != nil {
		return nil, err
	}
	refs := addon.Workloads(name)
	for _, w := range refs {
		err := k.UpdatePodTemplate(w.Kind, w.Namespace, w.Name, func(t *corev1.PodTemplateSpec) bool {
			return len(SetAddonImages(name, &t.Spec, v)) > 0
		})
		if err != nil {
			return nil, fmt.Errorf("add-on %s: %v", name, err)
		}
	}
	return func() bool {
		for _, w := range refs {
			if !k.RolledOut(w.Kind, w.Namespace, w.Name) {
				return false
			}
		}
		return true
	}, nil
}

// SetAddonImages puts the add-on's own containers of a pod spec (init
// containers first) on the version's images, and returns the images it
// changed; sidecars keep theirs (addon.Image).
func SetAddonImages(name string, spec *corev1.PodSpec, v addon.Version) []string {
	var changed []string
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			if img, own := addon.Image(name, list[i].Image, v); own && img != list[i].Image {
				list[i].Image = img
				changed = append(changed, img)
			}
		}
	}
	return changed
}
