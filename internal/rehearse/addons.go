package rehearse

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/eks"
)

// Add-ons in a rehearsal: UpdateAddon is checked by the EKS twin's rules
// (internal/twin/eks/addons.go), then its workloads in kube-system get the
// new images and roll out by their own strategies — a DaemonSet node by
// node, a Deployment with surge under its PDB — and the step waits for
// kubectl rollout status of each.

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

// updateAddon runs one add-on step of the plan.
func (r *run) updateAddon(st plan.Step) error {
	if st.To == st.From {
		r.addonNotes[st.Name] = st.Note
		r.event("Normal", "AddonUnchanged", fmt.Sprintf("add-on %s stays at %s: %s", st.Name, st.From, st.Note))
		return nil
	}
	from, to := st.From, st.To
	if f, err1 := eks.ParseAddonVersion(from); err1 == nil {
		if t, err2 := eks.ParseAddonVersion(to); err2 == nil && t.Compare(f) < 0 {
			note := fmt.Sprintf("the table's %s for %s is older than the installed %s, which stays", to, r.cp.Version(), from)
			r.addonNotes[st.Name] = note
			r.event("Normal", "AddonUnchanged", fmt.Sprintf("add-on %s: %s", st.Name, note))
			return nil
		}
	}
	if err := eks.CheckAddonUpdate(st.Name, from, to, r.cp.Version(), r.cp.Kubelets()); err != nil {
		return err
	}
	v, _ := eks.ParseAddonVersion(to)
	refs := scenario.AddonWorkloads(st.Name)
	var images []string
	for _, w := range refs {
		o, ok := r.objects[objectKey(w.Kind, w.Namespace, w.Name)]
		if !ok {
			return fmt.Errorf("add-on %s: %s %s/%s was not applied", st.Name, w.Kind, w.Namespace, w.Name)
		}
		updated, changed := withAddonImages(o, st.Name, v)
		images = append(images, changed...)
		if len(changed) == 0 {
			continue
		}
		if err := r.apply(updated); err != nil {
			return fmt.Errorf("add-on %s: %v", st.Name, err)
		}
	}
	if len(images) == 0 {
		return fmt.Errorf("add-on %s: none of its workloads (%s) runs an image of the add-on to update", st.Name, describeRefs(refs))
	}
	r.event("Normal", "AddonUpdating", fmt.Sprintf("add-on %s: %s → %s (UpdateAddon; images %s)", st.Name, from, to, strings.Join(images, ", ")))
	if err := r.waitFor(r.everySecond(func() bool {
		for _, w := range refs {
			if done, _, err := r.kube.RolloutStatus(w.Kind, w.Namespace, w.Name); err != nil || !done {
				return false
			}
		}
		return true
	})); err != nil {
		return err
	}
	r.addonVersions[st.Name] = to
	r.event("Normal", "AddonUpdated", fmt.Sprintf("add-on %s is %s: %s rolled out", st.Name, to, describeRefs(refs)))
	return nil
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

func describeRefs(refs []scenario.WorkloadRef) string {
	var out []string
	for _, w := range refs {
		out = append(out, fmt.Sprintf("%s %s/%s", strings.ToLower(w.Kind), w.Namespace, w.Name))
	}
	return strings.Join(out, ", ")
}
