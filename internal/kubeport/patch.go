package kubeport

import (
	corev1 "k8s.io/api/core/v1"
)

// NodePatch is a change to a node's metadata and taints, applied in one
// write by both implementations (ApplyTo is the shared rule).
type NodePatch struct {
	// Labels and Annotations to set; a nil value removes the key.
	Labels      map[string]*string
	Annotations map[string]*string
	// AddTaints adds taints, replacing one with the same key and effect
	// (what kubectl taint --overwrite does).
	AddTaints []corev1.Taint
	// RemoveTaints removes every taint with one of these keys, whatever its
	// effect (kubectl taint NODE KEY-).
	RemoveTaints []string
}

// ApplyTo changes n as the patch says. Removals run before additions, so a
// patch can replace a taint by removing and adding its key.
func (p NodePatch) ApplyTo(n *corev1.Node) {
	n.Labels = ApplyMap(n.Labels, p.Labels)
	n.Annotations = ApplyMap(n.Annotations, p.Annotations)
	if len(p.RemoveTaints) > 0 {
		remove := map[string]bool{}
		for _, k := range p.RemoveTaints {
			remove[k] = true
		}
		kept := n.Spec.Taints[:0]
		for _, t := range n.Spec.Taints {
			if !remove[t.Key] {
				kept = append(kept, t)
			}
		}
		n.Spec.Taints = kept
	}
	for _, t := range p.AddTaints {
		replaced := false
		for i := range n.Spec.Taints {
			if n.Spec.Taints[i].Key == t.Key && n.Spec.Taints[i].Effect == t.Effect {
				n.Spec.Taints[i], replaced = t, true
				break
			}
		}
		if !replaced {
			n.Spec.Taints = append(n.Spec.Taints, t)
		}
	}
}

// Empty reports whether the patch changes nothing.
func (p NodePatch) Empty() bool {
	return len(p.Labels) == 0 && len(p.Annotations) == 0 && len(p.AddTaints) == 0 && len(p.RemoveTaints) == 0
}

// ApplyMap changes m as change says, in place: a nil value removes the
// key. It returns m, made when m is nil and a key is set.
func ApplyMap(m map[string]string, change map[string]*string) map[string]string {
	for k, v := range change {
		if v == nil {
			delete(m, k)
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = *v
	}
	return m
}
