package insights

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rules/workload"
)

// workloadProblems reports what kube-apiserver refuses in a workload's
// selector — one missing a label of its pod template, which the API server
// answers "`selector` does not match template `labels`" — through the
// rule in internal/rules/workload (ValidateSelector), which the twin and
// `scenario validate` refuse the object with. They are ERRORs of the
// invalid-manifest check: the object could never be applied. A document
// without a selector is not judged: in a tree it is often a patch (a
// kustomization's, read as it is), not a whole object.
func workloadProblems(src Source, o *Object, doc []byte, typed any) []Problem {
	var kind string
	var sel *metav1.LabelSelector
	var labels map[string]string
	switch w := typed.(type) {
	case *karpv1.NodePool:
		return nodePoolProblems(src, o, doc, w)
	case *appsv1.Deployment:
		kind, sel, labels = "deployment", w.Spec.Selector, w.Spec.Template.Labels
	case *appsv1.StatefulSet:
		kind, sel, labels = "statefulset", w.Spec.Selector, w.Spec.Template.Labels
	case *appsv1.DaemonSet:
		kind, sel, labels = "daemonset", w.Spec.Selector, w.Spec.Template.Labels
	default:
		return nil
	}
	if sel == nil {
		return nil
	}
	var problems []Problem
	for _, e := range workload.ValidateSelector(kind, sel, labels) {
		problems = append(problems, Problem{Source: src, Object: o.Ref(), Field: e.Field, Severity: Error, doc: doc,
			Message: e.ErrorBody() + "; the API server refuses the object", Fix: workload.Fix(e)})
	}
	return problems
}

// metaProblems reports the names, namespace, labels and annotations the
// API server refuses (manifest.ValidateMeta: apimachinery's
// ValidateObjectMetaAccessor with the kind's name rule — a Service's name
// is a DNS-1035 label, a Namespace's a DNS-1123 label, most others
// DNS-1123 subdomains): ERRORs of the invalid-manifest check naming the
// field and the rule.
func metaProblems(src Source, o *Object, doc []byte, meta metav1.Object) []Problem {
	errs := manifest.ValidateMeta(o.APIVersion, o.Kind, meta)
	if len(errs) == 0 {
		return nil
	}
	problems := make([]Problem, 0, len(errs))
	for _, e := range errs {
		problems = append(problems, Problem{Source: src, Object: o.Ref(), Field: e.Field, Severity: Error, doc: doc,
			Message: e.ErrorBody() + "; the API server refuses the object", Fix: manifest.MetaFix(o.Kind, e)})
	}
	return problems
}

// nodePoolProblems reports what the NodePool CRD refuses outside the
// budgets — a weight outside 1–100, a consolidateAfter or expireAfter not
// matching its pattern — and what it takes but leaves Karpenter launching
// nothing: a negative limit, requirements on one key whose intersection
// is empty (disruption.ValidateSpec, disruption.EmptyRequirements, which
// `scenario validate` refuses with too): ERRORs of invalid-manifest.
func nodePoolProblems(src Source, o *Object, doc []byte, np *karpv1.NodePool) []Problem {
	var written *disruption.Written
	if doc != nil {
		written, _ = disruption.WrittenFromManifest(doc, np.Name)
	}
	errs := disruption.ValidateSpec(np, written)
	if e := disruption.EmptyRequirements(np); e != nil {
		errs = append(errs, *e)
	}
	var problems []Problem
	for _, e := range errs {
		problems = append(problems, Problem{Source: src, Object: o.Ref(), Field: e.Field, Severity: Error, doc: doc,
			Message: e.Msg, Fix: e.Fix})
	}
	return problems
}
