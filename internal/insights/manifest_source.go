package insights

import "github.com/ladder-eks/ladder/internal/manifest"

// FromManifests converts objects decoded by internal/manifest (a scenario's
// manifests) into Objects. Their upstream types are kept as Typed.
func FromManifests(objs []manifest.Object) []*Object {
	out := make([]*Object, 0, len(objs))
	for _, m := range objs {
		o := &Object{Source: FromManifest(m.Source), APIVersion: m.GVK.GroupVersion().String(), Kind: m.GVK.Kind, Doc: m.Document()}
		if m.Object != nil {
			o.Namespace, o.Name = m.Object.GetNamespace(), m.Object.GetName()
			o.Labels, o.Annotations = m.Object.GetLabels(), m.Object.GetAnnotations()
			o.Typed = m.Object
		}
		out = append(out, o)
	}
	return out
}
