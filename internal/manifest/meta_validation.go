package manifest

import (
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NameRule is how the API server validates a kind's metadata.name.
type NameRule struct {
	// Fn is the rule (apimachinery's api/validation name functions).
	Fn apivalidation.ValidateNameFunc
	// MaxLen, when set, is a length the kind allows below Fn's own.
	MaxLen int
}

// nameRules are the kinds whose names are not DNS-1123 subdomains, the
// rule of most built-in kinds and of every custom resource: the kinds'
// validation in k8s.io/kubernetes pkg/apis/*/validation (ValidateServiceName
// is NameIsDNS1035Label, ValidateNamespaceName NameIsDNSLabel,
// ValidateRBACName path.IsValidPathSegmentName; ValidateCronJob caps the
// name at 52 characters for the Jobs' names it makes).
var nameRules = map[schema.GroupKind]NameRule{
	{Group: "", Kind: "Service"}:                                     {Fn: apivalidation.NameIsDNS1035Label},
	{Group: "", Kind: "Namespace"}:                                   {Fn: apivalidation.ValidateNamespaceName},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               {Fn: pathSegment},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        {Fn: pathSegment},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        {Fn: pathSegment},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: {Fn: pathSegment},
	{Group: "batch", Kind: "CronJob"}:                                {Fn: apivalidation.NameIsDNSSubdomain, MaxLen: 52},
}

// subdomainKinds are the built-in kinds whose names are DNS-1123
// subdomains (pkg/apis/{core,apps,batch,policy,autoscaling,networking,
// storage,scheduling}/validation: NameIsDNSSubdomain). A built-in kind in
// neither list is held to what every name must be, a path segment
// (k8s.io/apiserver pkg/registry/rest BeforeCreate).
var subdomainKinds = map[schema.GroupKind]bool{
	{Kind: "Pod"}: true, {Kind: "ConfigMap"}: true, {Kind: "Secret"}: true, {Kind: "ServiceAccount"}: true,
	{Kind: "PersistentVolumeClaim"}: true, {Kind: "PersistentVolume"}: true, {Kind: "Node"}: true,
	{Kind: "ReplicationController"}: true, {Kind: "LimitRange"}: true, {Kind: "ResourceQuota"}: true, {Kind: "Endpoints"}: true,
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
	{Group: "batch", Kind: "Job"}: true, {Group: "policy", Kind: "PodDisruptionBudget"}: true,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: true,
	{Group: "networking.k8s.io", Kind: "Ingress"}:           true, {Group: "networking.k8s.io", Kind: "NetworkPolicy"}: true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}: true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:    true, {Group: "scheduling.k8s.io", Kind: "PriorityClass"}: true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
}

func pathSegment(name string, prefix bool) []string { return path.IsValidPathSegmentName(name) }

// builtinGroup reports whether group is one of Kubernetes' own: the core
// group, a group without a dot (apps, batch, policy…) or one under k8s.io.
func builtinGroup(group string) bool {
	return !strings.Contains(group, ".") || group == "k8s.io" || strings.HasSuffix(group, ".k8s.io")
}

// NameRuleOf is the rule the API server holds apiVersion/kind's names to:
// a DNS-1123 subdomain for most built-in kinds and for custom resources
// (apiextensions-apiserver's customResourceStrategy validates with
// NameIsDNSSubdomain), the kind's own rule for the others.
func NameRuleOf(apiVersion, kind string) NameRule {
	gk := schema.FromAPIVersionAndKind(apiVersion, kind).GroupKind()
	if r, ok := nameRules[gk]; ok {
		return r
	}
	if subdomainKinds[gk] || !builtinGroup(gk.Group) {
		return NameRule{Fn: apivalidation.NameIsDNSSubdomain}
	}
	return NameRule{Fn: pathSegment}
}

// ValidateMeta checks an object's name, generateName, namespace, labels and
// annotations as the API server does on create
// (apimachinery api/validation ValidateObjectMetaAccessor with the kind's
// name rule): what it returns the API server refuses. A missing name is
// not among them (the callers say it their own way), nor a missing
// namespace (kubectl fills it in).
func ValidateMeta(apiVersion, kind string, meta metav1.Object) field.ErrorList {
	rule := NameRuleOf(apiVersion, kind)
	var errs field.ErrorList
	for _, e := range apivalidation.ValidateObjectMetaAccessor(meta, meta.GetNamespace() != "", rule.Fn, field.NewPath("metadata")) {
		if e.Type == field.ErrorTypeRequired && e.Field == "metadata.name" {
			continue
		}
		errs = append(errs, e)
	}
	if name := meta.GetName(); rule.MaxLen > 0 && len(name) > rule.MaxLen {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), name, rule.MaxLen))
	}
	return errs
}

// MetaFix says how to mend a metadata field manifest.ValidateMeta refused.
func MetaFix(kind string, e *field.Error) string {
	switch f := e.Field; {
	case f == "metadata.name" || f == "metadata.generateName":
		switch {
		case e.Type == field.ErrorTypeTooLong:
			return "shorten the name"
		case kind == "Service":
			return "a Service's name is a DNS-1035 label: at most 63 lowercase letters, digits and '-', starting with a letter and ending with a letter or digit"
		case kind == "Namespace":
			return "a Namespace's name is a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
		case strings.Contains(e.Detail, "path segment") || strings.Contains(e.Detail, "may not"):
			return "a name may not be '.' or '..' nor contain '/' or '%'"
		}
		return "use a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	case f == "metadata.namespace":
		return "a namespace is a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
	case strings.HasPrefix(f, "metadata.labels"):
		return "a label key is [prefix/]name, name at most 63 letters, digits, '-', '_' and '.' starting and ending with a letter or digit, prefix a DNS-1123 subdomain; a value is empty or at most 63 such characters"
	case strings.HasPrefix(f, "metadata.annotations"):
		return "an annotation key is [prefix/]name like a label key; all annotations together under 256 KiB"
	}
	return "correct the value; the API server refuses the object"
}
