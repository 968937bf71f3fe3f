package scenario

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rules/workload"
)

// The patch actions are dry-run in order, each on the object as the
// actions before it left it (the starting manifests, then apply actions
// and earlier patches), and the patched object is checked as a manifest
// is: a patch that makes a NodePool's budget invalid, or a Deployment's
// replicas negative, is refused before the rehearsal, with the action's
// line — not discovered half-way through it.

// applied is the objects the script has reached, by kind, namespace and name.
type applied map[string]manifest.Object

func appliedKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func (v *validator) startScript() {
	v.script = applied{}
	for _, o := range v.sc.Objects {
		v.script[appliedKey(o.GVK.Kind, o.Object.GetNamespace(), o.Object.GetName())] = o
	}
}

// scriptReapply refuses an apply or patch action that updates what the API
// server lets no update change, as the twin refuses it: a bare Pod ("pods
// are immutable; delete it first"), which the scenario cannot delete, and a
// StatefulSet's fields other than those ValidateStatefulSetUpdate allows.
func (v *validator) scriptReapply(f string, objs []manifest.Object) {
	for _, o := range objs {
		old, ok := v.script[appliedKey(o.GVK.Kind, o.Object.GetNamespace(), o.Object.GetName())]
		if !ok {
			continue
		}
		switch obj := o.Object.(type) {
		case *corev1.Pod:
			v.fail(f, "Pod %s/%s: pods are immutable; delete it first (a bare Pod cannot change: make it a Deployment to roll it)", obj.Namespace, obj.Name)
		case *appsv1.StatefulSet:
			if prev, ok := old.Object.(*appsv1.StatefulSet); ok {
				for _, e := range workload.ValidateStatefulSetUpdate(obj, prev) {
					v.fail(f, "StatefulSet %s/%s: %s: %s (%s)", obj.Namespace, obj.Name, e.Field, e.ErrorBody(), workload.Fix(e))
				}
			}
		}
	}
}

func (v *validator) scriptApply(objs []manifest.Object) {
	for _, o := range objs {
		v.script[appliedKey(o.GVK.Kind, o.Object.GetNamespace(), o.Object.GetName())] = o
	}
}

// dryRunPatch patches the object the action targets and checks the result.
func (v *validator) dryRunPatch(f string, p *PatchAction, namespace string) {
	o, ok := v.script[appliedKey(p.Kind, namespace, p.Name)]
	if !ok || len(p.Patch) == 0 {
		return // reported by the caller
	}
	patched, err := p.Apply(o)
	if err != nil {
		v.fail(f+".patch.patch", "%v", err)
		return
	}
	objs, err := manifest.Decode(o.Source.File, patched)
	if err == nil && (len(objs) != 1 || objs[0].Ignored || objs[0].Name() != o.Name()) {
		err = fmt.Errorf("the patch must leave %s one %s with the same name", o.Name(), o.GVK.Kind)
	}
	if err != nil {
		v.fail(f+".patch.patch", "leaves %s invalid: %s", o.Name(), fieldMessage(err))
		return
	}
	v.scriptReapply(f+".patch", objs)
	res := objs[0]
	// The patched object is checked against what the scenario defines, as
	// a starting manifest is: its instance types, PriorityClasses and
	// EC2NodeClasses.
	check := &validator{sc: v.sc, types: v.types, resolved: v.resolved,
		priorityClasses: v.priorityClasses, defaultPriority: v.defaultPriority}
	check.object(res, v.namespaces, v.nodeClasses, v.storageClasses)
	for _, e := range check.errs {
		v.fail(f+".patch.patch", "leaves %s invalid: %s", o.Name(), fieldMessage(e))
	}
	v.scriptApply(objs)
	v.scriptPools(f+".patch.patch", objs)
}

// fieldMessage is an object error without its location, which is the
// patched JSON's and means nothing to the reader: "field: message (fix)".
func fieldMessage(err error) string {
	var parts []string
	for _, e := range flatten(err) {
		var me *manifest.Error
		if errors.As(e, &me) {
			m := *me
			m.Source, m.Object = manifest.Source{}, ""
			parts = append(parts, trimLocation(m.Error()))
			continue
		}
		parts = append(parts, e.Error())
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return joinSemicolon(parts)
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// trimLocation drops the ": " an empty Source leaves in front.
func trimLocation(s string) string {
	for len(s) > 1 && s[:2] == ": " {
		s = s[2:]
	}
	return s
}

func joinSemicolon(parts []string) string {
	out := parts[0]
	for _, p := range parts[1:] {
		out += "; " + p
	}
	return out
}

// restartPaused refuses a rollout restart of a Deployment the script has
// left paused, as kubectl's objectRestarter does (and the twin with it).
func (v *validator) restartPaused(f string, w WorkloadRef) {
	o, ok := v.script[appliedKey(w.Kind, nsOrDefault(w.Namespace), w.Name)]
	if !ok {
		return
	}
	if d, ok := o.Object.(*appsv1.Deployment); ok && d.Spec.Paused {
		v.fail(f, "deployments.apps %q can't restart paused deployment (resume it first: patch spec.paused to false in an action before this one)", w.Name)
	}
}
