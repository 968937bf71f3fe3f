package scenario

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
	"github.com/ladder-eks/ladder/internal/rules/nodegroup"
	"github.com/ladder-eks/ladder/internal/rules/workload"
)

// DefaultTimeLimit bounds a rehearsal when the scenario does not.
const DefaultTimeLimit = 6 * time.Hour

// Validate checks everything a rehearsal relies on, before it runs, and
// returns every problem found, each one line naming the file, the field and
// the fix. Warnings are problems that do not stop a rehearsal.
func (sc *Scenario) Validate() (warnings []string, err error) {
	v := &validator{sc: sc, resolved: map[*awsv1.EC2NodeClass][]catalog.AMI{}}
	v.header()
	v.cluster()
	v.catalogs()
	v.manifests()
	v.nodeGroups()
	if v.nodeCount() {
		v.zoneAddresses()
	}
	v.groupUpgrades()
	v.addons()
	v.probe()
	v.upgrade()
	v.actions()
	return v.warnings, errors.Join(v.errs...)
}

type validator struct {
	sc       *Scenario
	errs     []error
	warnings []string
	types    map[string]catalog.InstanceType
	// priorityClasses are the classes pods may name: the system classes
	// and the scenario's PriorityClasses (its actions' included);
	// defaultPriority is what a pod naming none gets (validate_priority.go).
	priorityClasses map[string]priority
	defaultPriority priority
	// What the manifests create, for checks of references.
	namespaces, nodeClasses, storageClasses map[string]bool
	// script is the objects the actions have reached (validate_patch.go).
	script applied
	// resolved is what each EC2NodeClass manifest (starting, applied or
	// patched) resolves to (nodeclass.ResolveNodeClassAMIs), for its
	// NodePools and nodes (validate_karpenter.go).
	resolved map[*awsv1.EC2NodeClass][]catalog.AMI
}

func (v *validator) fail(field, format string, args ...any) {
	v.errs = append(v.errs, v.sc.errorf(field, format, args...))
}

func (v *validator) failObject(o manifest.Object, field, msg, fix string) {
	v.errs = append(v.errs, o.FieldError(field, msg, fix))
}

func (v *validator) header() {
	sc := v.sc
	if sc.APIVersion != APIVersion {
		v.fail("apiVersion", "%q is not %s", sc.APIVersion, APIVersion)
	}
	if sc.Kind != Kind {
		v.fail("kind", "%q is not %s", sc.Kind, Kind)
	}
	if sc.Metadata.Name == "" {
		v.fail("metadata.name", "missing (name the scenario)")
	}
	if sc.Spec.Start.IsZero() {
		v.fail("spec.start", "missing (the virtual start time, RFC 3339 in UTC, e.g. \"2026-03-30T09:00:00Z\")")
	}
	if tl := sc.Spec.TimeLimit; tl != nil && tl.Duration <= 0 {
		v.fail("spec.timeLimit", "must be positive, e.g. \"6h\"")
	} else if tl != nil && tl.Duration > MaxTimeLimit {
		v.fail("spec.timeLimit", "%s is more than the %s a rehearsal may run (set at most %s)", tl.Duration, MaxTimeLimit, MaxTimeLimit)
	}
}

// KnownVersions are the Kubernetes minors the embedded EKS calendar has.
func KnownVersions() []string {
	var out []string
	for _, r := range catalog.Releases() {
		out = append(out, r.Minor)
	}
	return out
}

func checkVersion(version string) error {
	if _, err := kubeversion.Parse(version); err != nil {
		return err
	}
	minor, _ := catalog.NormalizeMinor(version)
	if _, ok := catalog.LookupRelease(minor); !ok {
		return fmt.Errorf("unknown EKS version %q (known: %s)", version, strings.Join(KnownVersions(), ", "))
	}
	return nil
}

func (v *validator) cluster() {
	c := v.sc.Spec.Cluster
	if c.Name == "" {
		v.fail("spec.cluster.name", "missing")
	} else if msg := eksName(c.Name, maxClusterName); msg != "" {
		v.fail("spec.cluster.name", "%s (EKS CreateCluster refuses it: %s)", msg, eksNameRule(maxClusterName))
	}
	if err := checkVersion(c.Version); err != nil {
		v.fail("spec.cluster.version", "%v", err)
	}
	if c.Region == "" {
		v.fail("spec.cluster.region", "missing (e.g. us-west-2)")
	} else if !knownRegion(c.Region) {
		hint := "use one such as us-west-2"
		if near := regionsNear(c.Region); near != "" {
			hint = "use one of " + near
		}
		v.fail("spec.cluster.region", "%q is not an AWS Region (%s)", c.Region, hint)
		return // its zones cannot be checked against it
	}
	if len(c.Zones) == 0 {
		v.fail("spec.cluster.zones", "list at least one zone, e.g. [us-west-2a, us-west-2b]")
	}
	seen := map[string]bool{}
	for i, z := range c.Zones {
		if !strings.HasPrefix(z, c.Region) || len(z) <= len(c.Region) {
			v.fail(fmt.Sprintf("spec.cluster.zones[%d]", i), "%q is not a zone of region %q", z, c.Region)
		}
		if seen[z] {
			v.fail(fmt.Sprintf("spec.cluster.zones[%d]", i), "%q is listed twice", z)
		}
		seen[z] = true
	}
	if len(c.Zones) > 16 {
		v.fail("spec.cluster.zones", "at most 16 zones")
	}
}

func (v *validator) catalogs() {
	v.types = map[string]catalog.InstanceType{}
	for _, it := range catalog.InstanceTypes() {
		v.types[it.Name] = it
	}
	for i, it := range v.sc.Spec.InstanceTypes {
		f := fmt.Sprintf("spec.instanceTypes[%d]", i)
		switch {
		case it.Name == "":
			v.fail(f+".name", "missing")
		case it.VCPU <= 0:
			v.fail(f+".vcpu", "must be positive")
		case it.MemoryMiB <= 0:
			v.fail(f+".memoryMiB", "must be positive")
		case it.MaxPods <= 0:
			v.fail(f+".maxPods", "must be positive (the EKS ENI-based max pods)")
		case it.OnDemandPrice <= 0:
			v.fail(f+".onDemandPrice", "must be positive (USD per hour)")
		case it.Arch != "" && it.Arch != "amd64" && it.Arch != "arm64":
			v.fail(f+".arch", "%q is not amd64 or arm64", it.Arch)
		}
	}
	for _, it := range v.sc.InstanceTypes() {
		v.types[it.Name] = it
	}
	for i, a := range v.sc.Spec.AMIs {
		f := fmt.Sprintf("spec.amis[%d]", i)
		if !strings.HasPrefix(a.ID, "ami-") {
			v.fail(f+".id", "%q is not an AMI id (ami-…)", a.ID)
		}
		if a.Name == "" {
			v.fail(f+".name", "missing")
		}
		if err := checkVersion(a.KubernetesVersion); err != nil {
			v.fail(f+".kubernetesVersion", "%v", err)
		}
		if a.Arch != "" {
			if _, ok := catalog.AMIArch(a.Arch); !ok {
				v.fail(f+".arch", "%q is not x86_64 or arm64", a.Arch)
			}
		}
	}
}

// manifests checks each object as the API server and the twin would.
func (v *validator) manifests() {
	namespaces := map[string]bool{metav1.NamespaceDefault: true, metav1.NamespaceSystem: true}
	classes := map[string]bool{}
	for _, o := range v.sc.Objects {
		switch obj := o.Object.(type) {
		case *corev1.Namespace:
			namespaces[obj.Name] = true
		case *awsv1.EC2NodeClass:
			classes[obj.Name] = true
		}
	}
	all := append([]manifest.Object(nil), v.sc.Objects...)
	for i := range v.sc.Spec.Actions {
		all = append(all, v.sc.ActionObjects[i]...)
	}
	v.priorities(all)
	// The starting manifests are applied before any action: what only an
	// action creates is not there for them.
	startNamespaces, startClasses := maps.Clone(namespaces), maps.Clone(classes)
	for _, o := range all {
		if _, ok := o.Object.(*corev1.Namespace); ok {
			namespaces[o.Object.GetName()] = true
		}
		if nc, ok := o.Object.(*awsv1.EC2NodeClass); ok {
			classes[nc.Name] = true
		}
	}
	storageClasses := map[string]bool{}
	for _, o := range all {
		if _, ok := o.Object.(*storagev1.StorageClass); ok {
			storageClasses[o.Object.GetName()] = true
		}
	}
	v.namespaces, v.nodeClasses, v.storageClasses = namespaces, classes, storageClasses
	v.duplicates()
	for i, o := range all {
		if i < len(v.sc.Objects) {
			v.object(o, startNamespaces, startClasses, storageClasses)
		} else {
			v.object(o, namespaces, classes, storageClasses)
		}
	}
	v.nodePoolAMIs()
	v.podCount()
}

// object checks one manifest as the API server and the twin would.
func (v *validator) object(o manifest.Object, namespaces, classes, storageClasses map[string]bool) {
	if ns := o.Object.GetNamespace(); ns != "" && !namespaces[ns] {
		if v.namespaces[ns] {
			v.failObject(o, "metadata.namespace", fmt.Sprintf("namespace %q is created only by an action, after this manifest is applied", ns), "add the Namespace manifest to spec.manifests")
		} else {
			v.failObject(o, "metadata.namespace", fmt.Sprintf("namespace %q is not created by any manifest", ns), "add a Namespace manifest")
		}
	}
	// Names, namespace, labels and annotations as the API server checks
	// them for the kind (a Service's name is a DNS-1035 label, …).
	for _, e := range manifest.ValidateMeta(o.GVK.GroupVersion().String(), o.GVK.Kind, o.Object) {
		v.failObject(o, e.Field, e.ErrorBody(), manifest.MetaFix(o.GVK.Kind, e))
	}
	if err := manifest.ValidateSpec(o); err != nil {
		v.errs = append(v.errs, err)
	}
	switch obj := o.Object.(type) {
	case *karpv1.NodePool:
		v.nodePool(o, obj, classes)
	case *appsv1.Deployment:
		v.workload(o, workload.ValidateDeployment(obj), &obj.Spec.Template)
		v.replicas(o, obj.Spec.Replicas)
	case *appsv1.StatefulSet:
		v.workload(o, workload.ValidateStatefulSet(obj), &obj.Spec.Template)
		v.replicas(o, obj.Spec.Replicas)
		for i, t := range obj.Spec.VolumeClaimTemplates {
			v.storageClass(o, fmt.Sprintf("spec.volumeClaimTemplates[%d].spec.storageClassName", i), t.Spec.StorageClassName, storageClasses)
		}
	case *appsv1.DaemonSet:
		v.workload(o, workload.ValidateDaemonSet(obj), &obj.Spec.Template)
	case *policyv1.PodDisruptionBudget:
		v.pdb(o, obj)
	case *corev1.Pod:
		v.podSpec(o, "spec", &obj.Spec, obj.Annotations)
	case *corev1.PersistentVolumeClaim:
		v.storageClass(o, "spec.storageClassName", obj.Spec.StorageClassName, storageClasses)
	case *schedulingv1.PriorityClass:
		// The API server's validation, which the twin applies too.
		for _, e := range workload.ValidatePriorityClass(obj) {
			v.failObject(o, e.Field, e.ErrorBody(), "")
		}
	case *karpv1.NodeClaim:
		v.failObject(o, "kind", "NodeClaims are created by Karpenter", "describe existing nodes under spec.nodeGroups[].karpenter.nodes instead")
	case *awsv1.EC2NodeClass:
		v.nodeClass(o, obj)
	}
}

// duplicates refuses a second object of the same kind, namespace and name
// among the starting manifests, as the API server refuses to create it
// (k8s.io/apimachinery/pkg/api/errors NewAlreadyExists: `deployments.apps
// "web" already exists`). Apply actions may re-apply an object: that is an
// update.
func (v *validator) duplicates() {
	first := map[string]manifest.Object{}
	for _, o := range v.sc.Objects {
		key := o.GVK.GroupKind().String() + "/" + o.Object.GetNamespace() + "/" + o.Object.GetName()
		if f, ok := first[key]; ok {
			v.failObject(o, "metadata.name", fmt.Sprintf("%s already exists (first at %s)", o.Name(), f.Source),
				"remove one of the two, or rename one")
			continue
		}
		first[key] = o
	}
}

// storageClass checks a claim's class: a named class the scenario does not
// create would leave the claim Pending for ever (the PersistentVolume
// controller provisions only through a StorageClass that exists). An empty
// name asks for no class (a pre-bound volume); an unset one for the
// default class.
func (v *validator) storageClass(o manifest.Object, field string, name *string, classes map[string]bool) {
	if name == nil || *name == "" || classes[*name] {
		return
	}
	v.failObject(o, field, fmt.Sprintf("StorageClass %q is not in the scenario's manifests (%s)", *name, strings.Join(sortedKeys(classes), ", ")),
		"add the StorageClass manifest or use one that is there")
}

func (v *validator) nodeClass(o manifest.Object, nc *awsv1.EC2NodeClass) {
	if len(nc.Spec.AMISelectorTerms) == 0 {
		v.failObject(o, "spec.amiSelectorTerms", "missing", "select an AMI by alias (al2023@latest), id or name")
	}
	// The EC2NodeClass CRD's own rule (karpenter-provider-aws
	// pkg/apis/v1/ec2nodeclass.go XValidation): the API server refuses the
	// object, so the twin does too.
	hasAlias := false
	for _, t := range nc.Spec.AMISelectorTerms {
		hasAlias = hasAlias || t.Alias != ""
	}
	if len(nc.Spec.AMISelectorTerms) > 0 && !hasAlias && nc.Spec.AMIFamily == nil {
		v.failObject(o, "spec.amiFamily", "must specify amiFamily if amiSelectorTerms does not contain an alias",
			"add amiFamily: AL2023 (or the family of the selected AMI), as the EC2NodeClass CRD requires")
	}
	for i, t := range nc.Spec.AMISelectorTerms {
		if t.Alias != "" {
			if _, err := catalog.ParseAlias(t.Alias); err != nil {
				v.failObject(o, fmt.Sprintf("spec.amiSelectorTerms[%d].alias", i), err.Error(), "")
				return
			}
		}
	}
	if len(nc.Spec.AMISelectorTerms) == 0 || checkVersion(v.sc.Spec.Cluster.Version) != nil {
		return
	}
	// Karpenter resolves the class when it is applied, at the cluster's
	// version and the start, with the twin's own resolution.
	minor, _ := catalog.NormalizeMinor(v.sc.Spec.Cluster.Version)
	amis, err := nodeclass.ResolveNodeClassAMIs(nc, minor, v.sc.ExtraAMIs(), v.sc.Spec.Start.UTC())
	var amiErr *nodeclass.AMIError
	switch {
	case errors.As(err, &amiErr):
		fix := ""
		if strings.HasSuffix(amiErr.Field, ".alias") {
			fix = "pin a release the catalog has, or use @latest"
		}
		v.failObject(o, amiErr.Field, amiErr.Msg, fix)
	case err != nil:
		v.failObject(o, "spec.amiSelectorTerms", err.Error(), "")
	default:
		v.resolved[nc] = amis
	}
}

func (v *validator) knownAMI(id string) bool {
	_, ok := v.lookupAMI(id)
	return ok
}

// lookupAMI finds an AMI as the twins do: the scenario's own first, then
// the catalog.
func (v *validator) lookupAMI(id string) (catalog.AMI, bool) {
	for _, a := range v.sc.ExtraAMIs() {
		if a.ID == id {
			return a, true
		}
	}
	return catalog.LookupAMI(id)
}

// amiArch refuses a launch template's AMI that does not run on the
// group's instance type, as CreateNodegroup and the Auto Scaling group's
// launch refuse it.
func (v *validator) amiArch(field, id, instanceType string) {
	a, okAMI := v.lookupAMI(id)
	it, okType := v.types[instanceType]
	if okAMI && okType && a.KubeArch() != it.Arch {
		v.fail(field, "AMI %s is %s but instance type %s is %s (use an AMI of the instance type's architecture)", id, a.KubeArch(), it.Name, it.Arch)
	}
}

func (v *validator) nodePool(o manifest.Object, np *karpv1.NodePool, classes map[string]bool) {
	np = np.DeepCopy()
	written, _ := disruption.WrittenFromManifest(o.Document(), np.Name)
	disruption.DefaultNodePool(np)
	for _, e := range disruption.ValidateBudgetsAsWritten(np, written) {
		if e.Kind == disruption.Warning {
			v.warnings = append(v.warnings, o.FieldError(e.Field, e.Msg, e.Fix).Error())
			continue
		}
		v.failObject(o, e.Field, e.Msg+" — "+e.Kind.String(), e.Fix)
	}
	// The CRD's weight, durations and limits (disruption.ValidateSpec).
	for _, e := range disruption.ValidateSpec(np, written) {
		v.failObject(o, e.Field, e.Msg, e.Fix)
	}
	ref := np.Spec.Template.Spec.NodeClassRef
	switch {
	case ref == nil || ref.Name == "":
		v.failObject(o, "spec.template.spec.nodeClassRef", "missing", "reference an EC2NodeClass: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}")
	case ref.Kind != "" && ref.Kind != "EC2NodeClass":
		v.failObject(o, "spec.template.spec.nodeClassRef.kind", fmt.Sprintf("%q is not EC2NodeClass", ref.Kind), "")
	case !classes[ref.Name] && v.nodeClasses[ref.Name]:
		v.failObject(o, "spec.template.spec.nodeClassRef.name", fmt.Sprintf("EC2NodeClass %q is applied only by an action, after this NodePool (Karpenter refuses a NodePool whose class does not exist)", ref.Name), "add the EC2NodeClass to spec.manifests")
	case !classes[ref.Name]:
		v.failObject(o, "spec.template.spec.nodeClassRef.name", fmt.Sprintf("EC2NodeClass %q is not in the scenario's manifests", ref.Name), "add its manifest or fix the name")
	}
	// The NodePool CRD's rules, which the twin applies too.
	var reqErr *nodeclass.RequirementError
	if errors.As(nodeclass.CheckRequirements(np), &reqErr) {
		v.failObject(o, reqErr.Field, reqErr.Msg, reqErr.Fix)
	} else {
		v.emptyRequirements(o, np)
	}
	for i, r := range np.Spec.Template.Spec.Requirements {
		f := fmt.Sprintf("spec.template.spec.requirements[%d]", i)
		if r.Key == corev1.LabelInstanceTypeStable && (r.Operator == corev1.NodeSelectorOpIn || r.Operator == corev1.NodeSelectorOpNotIn) {
			for _, name := range r.Values {
				if _, ok := v.types[name]; !ok {
					v.failObject(o, f+".values", fmt.Sprintf("instance type %q is not in the catalog", name), "add it under spec.instanceTypes or pick a catalogued type (ladder scenario instance-types)")
				}
			}
		}
	}
	if ea := np.Spec.Template.Spec.ExpireAfter; ea.Duration != nil && *ea.Duration <= 0 {
		v.failObject(o, "spec.template.spec.expireAfter", "must be positive or Never", "")
	}
}

// workload reports what kube-apiserver's apps validation refuses in a
// workload — the rules of internal/rules/workload (ValidateDeployment and its
// siblings), which the twin would refuse the object with — and checks its pods.
func (v *validator) workload(o manifest.Object, errs field.ErrorList, tmpl *corev1.PodTemplateSpec) {
	for _, e := range errs {
		v.failObject(o, e.Field, e.ErrorBody(), workload.Fix(e))
	}
	v.podSpec(o, "spec.template.spec", &tmpl.Spec, tmpl.Annotations)
}

func (v *validator) podSpec(o manifest.Object, field string, spec *corev1.PodSpec, annotations map[string]string) {
	if len(spec.Containers) == 0 {
		v.failObject(o, field+".containers", "a pod needs at least one container", "")
	}
	// The Priority admission plugin refuses a pod naming a class that does
	// not exist (priority.go): no pod of the workload would ever be created.
	class, known := v.defaultPriority, true
	if name := spec.PriorityClassName; name != "" {
		class, known = v.priorityClasses[name]
		if !known {
			v.failObject(o, field+".priorityClassName", fmt.Sprintf("no PriorityClass with name %s was found", name),
				fmt.Sprintf("add a scheduling.k8s.io/v1 PriorityClass manifest named %s, or use %s or %s", name, workload.SystemClusterCritical, workload.SystemNodeCritical))
		}
	}
	if known && spec.Priority != nil && *spec.Priority != class.value {
		v.failObject(o, field+".priority", fmt.Sprintf("%d must not be provided in pod spec; the priority admission controller computes %d from the PriorityClass", *spec.Priority, class.value),
			"remove spec.priority and name the class in priorityClassName")
	}
	if known && spec.PreemptionPolicy != nil && *spec.PreemptionPolicy != class.policy {
		v.failObject(o, field+".preemptionPolicy", fmt.Sprintf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *spec.PreemptionPolicy, class.policy),
			"remove preemptionPolicy from the pod spec and set it on the PriorityClass the pod names")
	}
	if err := workload.ValidateStartupAnnotation(annotations); err != nil {
		v.failObject(o, strings.TrimSuffix(field, ".spec")+".metadata.annotations", err.Error(), "")
	}
	for i, vol := range spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		if _, ok := v.sc.Find("PersistentVolumeClaim", o.Object.GetNamespace(), vol.PersistentVolumeClaim.ClaimName); ok {
			continue
		}
		if _, isSts := o.Object.(*appsv1.StatefulSet); isSts {
			continue // may come from volumeClaimTemplates
		}
		v.failObject(o, fmt.Sprintf("%s.volumes[%d].persistentVolumeClaim.claimName", field, i),
			fmt.Sprintf("PersistentVolumeClaim %q is not in the scenario's manifests", vol.PersistentVolumeClaim.ClaimName), "add the claim's manifest")
	}
}

func (v *validator) pdb(o manifest.Object, pdb *policyv1.PodDisruptionBudget) {
	// Both set is the API server's own error (manifest.ValidateSpec).
	if pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable == nil {
		v.failObject(o, "spec", "set exactly one of minAvailable and maxUnavailable", "")
	}
	if pdb.Spec.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil {
			v.failObject(o, "spec.selector", err.Error(), "")
		}
	}
}

func (v *validator) nodeGroups() {
	pools := map[string]bool{}
	for _, o := range v.sc.Objects {
		if _, ok := o.Object.(*karpv1.NodePool); ok {
			pools[o.Object.GetName()] = true
		}
	}
	zones := map[string]bool{}
	for _, z := range v.sc.Spec.Cluster.Zones {
		zones[z] = true
	}
	names := map[string]bool{}
	usedPools := map[string]bool{}
	for i, g := range v.sc.Spec.NodeGroups {
		f := fmt.Sprintf("spec.nodeGroups[%d]", i)
		if g.Name == "" {
			v.fail(f+".name", "missing")
		} else if names[g.Name] {
			v.fail(f+".name", "%q is used by another node group", g.Name)
		} else if msg := eksName(g.Name, maxNodegroupName); msg != "" && g.Type == Managed {
			v.fail(f+".name", "%s (EKS CreateNodegroup refuses it: %s)", msg, eksNameRule(maxNodegroupName))
		}
		names[g.Name] = true
		blocks := map[string]bool{Karpenter: g.Karpenter != nil, Managed: g.Managed != nil, SelfManaged: g.SelfManaged != nil, Fargate: g.Fargate != nil}
		switch g.Type {
		case Karpenter, Managed, SelfManaged, Fargate:
		default:
			v.fail(f+".type", "%q is not one of managed, self-managed, karpenter, fargate", g.Type)
			continue
		}
		for typ, set := range blocks {
			if typ != g.Type && set {
				v.fail(f+"."+blockField(typ), "set only the %s block for a %s group", blockField(g.Type), g.Type)
			}
		}
		if !blocks[g.Type] {
			v.fail(f+".type", "a %s group needs its %s block", g.Type, blockField(g.Type))
			continue
		}
		switch g.Type {
		case Karpenter:
			k := g.Karpenter
			if !pools[k.NodePool] {
				v.fail(f+".karpenter.nodePool", "NodePool %q is not in the scenario's manifests", k.NodePool)
			}
			if usedPools[k.NodePool] {
				v.fail(f+".karpenter.nodePool", "NodePool %q belongs to another group", k.NodePool)
			}
			usedPools[k.NodePool] = true
			for j, n := range k.Nodes {
				v.existingNode(fmt.Sprintf("%s.karpenter.nodes[%d]", f, j), n, zones)
				v.nodeAMI(fmt.Sprintf("%s.karpenter.nodes[%d]", f, j), k.NodePool, n)
			}
		case Managed:
			m := g.Managed
			typeErrs := len(v.errs)
			for j, t := range m.InstanceTypes {
				it, ok := v.types[t]
				if !ok {
					v.fail(fmt.Sprintf("%s.managed.instanceTypes[%d]", f, j), "%q is not in the instance-type catalog (add it under spec.instanceTypes)", t)
				} else if first, ok := v.types[m.InstanceTypes[0]]; ok && it.Arch != first.Arch {
					v.fail(fmt.Sprintf("%s.managed.instanceTypes[%d]", f, j), "%s is %s but %s is %s: a managed node group's instance types share one architecture (EKS CreateNodegroup refuses a mix)", t, it.Arch, first.Name, first.Arch)
				}
			}
			if len(m.InstanceTypes) == 0 {
				v.fail(f+".managed.instanceTypes", "list at least one instance type")
			}
			typesOK := len(v.errs) == typeErrs
			before := len(v.errs)
			v.counts(f+".managed", m.Desired, m.Min, m.Max)
			v.groupZones(f+".managed.zones", m.Zones, zones)
			if len(v.errs) == before {
				v.managedScaling(f+".managed", m)
			}
			versionOK := true
			if m.Version != "" {
				if err := checkVersion(m.Version); err != nil {
					v.fail(f+".managed.version", "%v", err)
					versionOK = false
				}
			}
			if typesOK && versionOK {
				// Counts and zones aside, the image is the instance
				// types' and the version's.
				v.managedImage(f+".managed", g.Name, m)
			}
		case SelfManaged:
			s := g.SelfManaged
			if _, ok := v.types[s.InstanceType]; !ok {
				v.fail(f+".selfManaged.instanceType", "%q is not in the instance-type catalog (add it under spec.instanceTypes)", s.InstanceType)
			}
			v.counts(f+".selfManaged", s.Desired, s.Min, s.Max)
			v.groupZones(f+".selfManaged.zones", s.Zones, zones)
			if s.LaunchTemplate.ImageID == "" {
				v.fail(f+".selfManaged.launchTemplate.imageId", "missing (the AMI the group's launch template uses)")
			} else if !v.knownAMI(s.LaunchTemplate.ImageID) {
				v.fail(f+".selfManaged.launchTemplate.imageId", "AMI %s is not in the catalog (declare it under spec.amis)", s.LaunchTemplate.ImageID)
			} else {
				v.amiArch(f+".selfManaged.launchTemplate.imageId", s.LaunchTemplate.ImageID, s.InstanceType)
			}
		case Fargate:
			if len(g.Fargate.Selectors) == 0 {
				v.fail(f+".fargate.selectors", "list at least one selector {namespace: ...}")
			}
			for j, s := range g.Fargate.Selectors {
				if s.Namespace == "" {
					v.fail(fmt.Sprintf("%s.fargate.selectors[%d].namespace", f, j), "missing")
				}
			}
		}
	}
	badType := false
	for _, g := range v.sc.Spec.NodeGroups {
		switch g.Type {
		case Karpenter, Managed, SelfManaged, Fargate:
		default:
			badType = true
		}
	}
	for _, name := range sortedKeys(pools) {
		if !usedPools[name] && !badType {
			v.warnings = append(v.warnings, fmt.Sprintf("%s: NodePool %q has no node group; add {name: %s, type: karpenter, karpenter: {nodePool: %s}} to spec.nodeGroups to report it", v.sc.Path, name, name, name))
		}
	}
}

// managedScaling refuses what the twin's CreateNodegroup refuses in a
// group's scaling and update settings (semantics.md §B updateConfig:
// maxUnavailable 1–100 and at most maxSize, maxUnavailablePercentage 1–100,
// not both), through the twin's own check.
func (v *validator) managedScaling(f string, m *ManagedGroup) {
	spec := nodegroup.Spec{CapacityType: m.CapacityType, Desired: m.Desired, Min: m.Min, Max: m.Max, Zones: m.Zones, UpdateStrategy: m.UpdateStrategy}
	if uc := m.UpdateConfig; uc != nil {
		spec.UpdateConfig = nodegroup.UpdateConfig{MaxUnavailable: uc.MaxUnavailable, MaxUnavailablePercentage: uc.MaxUnavailablePercentage}
	}
	err := nodegroup.ValidateScaling(&spec, v.sc.Spec.Cluster.Zones)
	if err == nil {
		return
	}
	msg := err.Error()
	var apiErr *nodegroup.Error
	if errors.As(err, &apiErr) {
		msg = apiErr.Message
	}
	field := f
	switch {
	case strings.HasPrefix(msg, "updateConfig.updateStrategy "):
		field, msg = f+".updateStrategy", strings.TrimPrefix(msg, "updateConfig.updateStrategy ")
	case strings.HasPrefix(msg, "updateConfig: "):
		field, msg = f+".updateConfig", strings.TrimPrefix(msg, "updateConfig: ")
	case strings.HasPrefix(msg, "updateConfig."):
		name, rest, _ := strings.Cut(strings.TrimPrefix(msg, "updateConfig."), " ")
		field, msg = f+".updateConfig."+name, rest
	case strings.HasPrefix(msg, "capacityType "):
		field, msg = f+".capacityType", strings.TrimPrefix(msg, "capacityType ")
	}
	v.fail(field, "%s (EKS CreateNodegroup refuses it)", msg)
}

// managedImage refuses what the twin's CreateNodegroup refuses in a
// group's image (nodegroup.ResolveImage): a version ahead of the control plane,
// an amiType of the other architecture or with no AMI for the version, a
// release the catalog does not have, a launch template without a name or
// whose image is unknown or of the other architecture, amiType CUSTOM
// without an image. The group exists at the start, at the scenario's start
// time.
func (v *validator) managedImage(f, name string, m *ManagedGroup) {
	if len(m.InstanceTypes) == 0 || checkVersion(v.sc.Spec.Cluster.Version) != nil {
		return
	}
	spec := nodegroup.Spec{Name: name, InstanceTypes: m.InstanceTypes, AMIType: m.AMIType, Version: m.Version, ReleaseVersion: m.ReleaseVersion}
	if lt := m.LaunchTemplate; lt != nil {
		spec.LaunchTemplate = &nodegroup.LaunchTemplate{Name: lt.Name, Version: lt.Version, ImageID: lt.ImageID}
	}
	if imgErr := v.resolveImage(spec); imgErr != nil {
		v.imageError(f, m, imgErr)
	}
}

// resolveImage is nodegroup.ResolveImage of a group that exists at the start,
// at the cluster's version and the start time, on its first instance
// type; nil when it resolves or the instance type is unknown (reported
// with the type).
func (v *validator) resolveImage(spec nodegroup.Spec) *nodegroup.ImageError {
	it, ok := v.types[spec.InstanceTypes[0]]
	if !ok {
		return nil
	}
	cp := kubeversion.MustParse(v.sc.Spec.Cluster.Version)
	_, err := nodegroup.ResolveImage(spec, it, cp, v.sc.ExtraAMIs(), v.sc.Spec.Start.UTC(), true)
	var imgErr *nodegroup.ImageError
	if !errors.As(err, &imgErr) {
		return nil
	}
	return imgErr
}

// imageError reports a managed group's image refusal at the scenario's
// field, with a fix.
func (v *validator) imageError(f string, m *ManagedGroup, imgErr *nodegroup.ImageError) {
	it := v.types[m.InstanceTypes[0]]
	cp := kubeversion.MustParse(v.sc.Spec.Cluster.Version)
	msg := imageMessage(imgErr)
	field, fix := f+"."+imgErr.Field, ""
	switch imgErr.Field {
	case "launchTemplate":
		field, fix = f+".launchTemplate.name", "name the group's launch template"
	case "launchTemplate.imageId":
		fix = "declare the AMI under spec.amis, of the instance types' architecture"
	case "version":
		if m.LaunchTemplate != nil && m.LaunchTemplate.ImageID != "" {
			fix = "remove version and releaseVersion: the launch template's AMI sets the group's version"
		} else {
			fix = fmt.Sprintf("set at most the cluster's %s: a node group is never ahead of its control plane", cp)
		}
	case "amiType":
		if m.AMIType == nodegroup.AMITypeCustom {
			fix = "name the AMI in launchTemplate.imageId, or use an EKS amiType such as AL2023_" + amiTypeArch(it.Arch) + "_STANDARD"
			break
		}
		fix = fmt.Sprintf("use an amiType of the instance types' architecture (%s) with AMIs for Kubernetes %s, e.g. AL2023_%s_STANDARD, or a launch template with imageId", it.Arch, cp, amiTypeArch(it.Arch))
	case "releaseVersion":
		fix = "pin a release of the group's version the catalog has, or remove releaseVersion for the newest"
	}
	v.fail(field, "%s (EKS CreateNodegroup refuses it; %s)", msg, fix)
}

// imageMessage is the EKS error's message, without the AWS CLI's framing.
func imageMessage(imgErr *nodegroup.ImageError) string {
	var apiErr *nodegroup.Error
	if errors.As(imgErr.Err, &apiErr) {
		return apiErr.Message
	}
	return imgErr.Err.Error()
}

// amiTypeArch is the architecture as amiType names spell it.
func amiTypeArch(kubeArch string) string {
	if kubeArch == "arm64" {
		return "ARM_64"
	}
	return "x86_64"
}

func blockField(typ string) string {
	if typ == SelfManaged {
		return "selfManaged"
	}
	return typ
}

func (v *validator) counts(f string, desired, min, max int) {
	if min < 0 {
		v.fail(f+".min", "cannot be negative")
	}
	if desired < 0 {
		v.fail(f+".desired", "cannot be negative")
	}
	if max != 0 && desired > max {
		v.fail(f+".desired", "%d is above max %d", desired, max)
	}
	if desired < min {
		v.fail(f+".desired", "%d is below min %d", desired, min)
	}
}

func (v *validator) groupZones(f string, list []string, zones map[string]bool) {
	for i, z := range list {
		if !zones[z] {
			v.fail(fmt.Sprintf("%s[%d]", f, i), "%q is not one of the cluster's zones", z)
		}
	}
}

func (v *validator) existingNode(f string, n ExistingNode, zones map[string]bool) {
	if _, ok := v.types[n.InstanceType]; !ok {
		v.fail(f+".instanceType", "%q is not in the instance-type catalog (add it under spec.instanceTypes, or use one of %s)", n.InstanceType, v.someTypes())
	}
	if !zones[n.Zone] {
		v.fail(f+".zone", "%q is not one of the cluster's zones (%s)", n.Zone, strings.Join(v.sc.Spec.Cluster.Zones, ", "))
	}
	switch n.CapacityType {
	case "", karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand:
	default:
		v.fail(f+".capacityType", "%q is not spot or on-demand", n.CapacityType)
	}
	if n.AMI != "" && !v.knownAMI(n.AMI) {
		v.fail(f+".ami", "AMI %s is not in the catalog (declare it under spec.amis)", n.AMI)
	}
	if n.Count < 0 {
		v.fail(f+".count", "cannot be negative")
	}
}

func (v *validator) someTypes() string {
	names := make([]string, 0, len(v.types))
	for n := range v.types {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 6 {
		names = append(names[:6], "…")
	}
	return strings.Join(names, ", ")
}

func (v *validator) actions() {
	version, _ := kubeversion.Parse(v.sc.Spec.Cluster.Version)
	knownVersion := checkVersion(v.sc.Spec.Cluster.Version) == nil
	v.startScript()
	for i, a := range v.sc.Spec.Actions {
		f := fmt.Sprintf("spec.actions[%d]", i)
		n := 0
		for _, set := range []bool{a.Scale != nil, a.Apply != nil, a.Patch != nil, a.UpgradeControlPlane != nil, a.Drain != nil, a.Wait != nil, a.Upgrade != nil, a.RolloutRestart != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			v.fail(f, "set exactly one of scale, apply, patch, upgradeControlPlane, drain, wait, upgrade, rolloutRestart")
			continue
		}
		switch {
		case a.Scale != nil:
			s := a.Scale
			if s.Kind != "Deployment" && s.Kind != "StatefulSet" {
				v.fail(f+".scale.kind", "%q is not Deployment or StatefulSet", s.Kind)
			} else if _, ok := v.sc.Find(s.Kind, nsOrDefault(s.Namespace), s.Name); !ok {
				v.fail(f+".scale.name", "%s %s/%s is not in the scenario's manifests (%s)", s.Kind, nsOrDefault(s.Namespace), s.Name, v.existing(s.Kind))
			}
			if s.Replicas < 0 {
				v.fail(f+".scale.replicas", "cannot be negative")
			} else if s.Replicas > MaxPods {
				v.fail(f+".scale.replicas", "%d is more than the %d pods a cluster may run (Kubernetes is designed for at most 150,000 pods)", s.Replicas, MaxPods)
			}
		case a.Apply != nil:
			if len(v.sc.ActionObjects[i]) == 0 {
				v.fail(f+".apply", "holds no object the twin models")
			}
			v.scriptReapply(f+".apply", v.sc.ActionObjects[i])
			v.scriptApply(v.sc.ActionObjects[i])
			v.scriptPools(f+".apply", v.sc.ActionObjects[i])
		case a.Patch != nil:
			p := a.Patch
			ns := p.Namespace
			if !clusterScopedKind(p.Kind) {
				ns = nsOrDefault(ns)
			}
			if _, ok := v.sc.Find(p.Kind, ns, p.Name); !ok {
				v.fail(f+".patch.name", "%s %s is not in the scenario's manifests (patch targets an object the scenario applied)", p.Kind, qualified(ns, p.Name))
			}
			switch p.Type {
			case "", "merge", "strategic", "json":
			default:
				v.fail(f+".patch.type", "%q is not merge, strategic or json", p.Type)
			}
			if len(p.Patch) == 0 {
				v.fail(f+".patch.patch", "missing")
			} else if p.Type == "json" && !isJSONList(p.Patch) {
				v.fail(f+".patch.patch", "a json patch (RFC 6902) is a list of operations such as [{op: replace, path: /spec/replicas, value: 3}]; to merge a map, use type: merge")
			} else if p.Type == "" || p.Type == "merge" || p.Type == "strategic" || p.Type == "json" {
				v.dryRunPatch(f, p, ns)
			}
		case a.UpgradeControlPlane != nil:
			to := a.UpgradeControlPlane.Version
			if err := checkVersion(to); err != nil {
				v.fail(f+".upgradeControlPlane.version", "%v", err)
				continue
			}
			target, _ := kubeversion.Parse(to)
			if knownVersion && target.Sub(version) != 1 {
				v.fail(f+".upgradeControlPlane.version", "%s is not one minor after %s: EKS updates one minor version at a time (add a step per version)", target, version)
			}
			if knownVersion {
				v.classesAt(f+".upgradeControlPlane.version", version.String(), to)
			}
			version = target
		case a.Drain != nil:
			d := a.Drain
			if (d.Node == "") == (d.Selector == "") {
				v.fail(f+".drain", "set node (a node name) or selector (a label selector such as eks.amazonaws.com/nodegroup=initial)")
			} else if d.Selector != "" {
				if _, err := labels.Parse(d.Selector); err != nil {
					v.fail(f+".drain.selector", "%v", err)
				}
			}
		case a.Wait != nil:
			if a.Wait.Settled == (a.Wait.For != nil) {
				v.fail(f+".wait", "set settled: true or for: DURATION")
			}
		case a.Upgrade != nil:
			if to := a.Upgrade.To; to != "" {
				if err := checkVersion(to); err != nil {
					v.fail(f+".upgrade.to", "%v", err)
				} else if target, _ := kubeversion.Parse(to); knownVersion && !version.Less(target) {
					v.fail(f+".upgrade.to", "%s is not newer than the control plane's %s", target, version)
				} else {
					version = target
				}
			} else if knownVersion {
				version = version.Next()
			}
		case a.RolloutRestart != nil:
			v.workloadRef(f+".rolloutRestart", *a.RolloutRestart)
			v.restartPaused(f+".rolloutRestart", *a.RolloutRestart)
		}
	}
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return metav1.NamespaceDefault
	}
	return ns
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func clusterScopedKind(kind string) bool {
	switch kind {
	case "Namespace", "PersistentVolume", "StorageClass", "NodePool", "NodeClaim", "EC2NodeClass":
		return true
	}
	return false
}

// InstanceTypes is the embedded catalog with the scenario's additions.
func (sc *Scenario) InstanceTypes() []catalog.InstanceType {
	byName := map[string]catalog.InstanceType{}
	for _, it := range catalog.InstanceTypes() {
		byName[it.Name] = it
	}
	for _, it := range sc.Spec.InstanceTypes {
		arch := it.Arch
		if arch == "" {
			arch = "amd64"
		}
		spot := it.SpotPrice
		if spot == 0 {
			spot = it.OnDemandPrice
		}
		family, size, _ := strings.Cut(it.Name, ".")
		category := ""
		if len(family) > 0 {
			category = family[:1]
		}
		gen := 0
		for _, r := range family {
			if r >= '0' && r <= '9' {
				gen = gen*10 + int(r-'0')
			}
		}
		byName[it.Name] = catalog.InstanceType{Name: it.Name, Arch: arch, Category: category, Family: family, Size: size,
			Generation: gen, VCPU: it.VCPU, MemoryMiB: it.MemoryMiB, MaxPods: it.MaxPods, OnDemandPrice: it.OnDemandPrice, SpotPrice: spot}
	}
	out := make([]catalog.InstanceType, 0, len(byName))
	for _, it := range byName {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ExtraAMIs converts the scenario's declared AMIs.
func (sc *Scenario) ExtraAMIs() []catalog.AMI {
	var out []catalog.AMI
	for _, a := range sc.Spec.AMIs {
		minor, _ := catalog.NormalizeMinor(a.KubernetesVersion)
		arch, ok := catalog.AMIArch(a.Arch)
		if !ok {
			arch = catalog.ArchX8664
		}
		kubelet := a.KubeletVersion
		if kubelet == "" {
			kubelet = "v" + minor + ".0"
		}
		family := a.Family
		if family == "" {
			family = "custom"
		}
		out = append(out, catalog.AMI{ID: a.ID, Name: a.Name, Family: family, Arch: arch, KubernetesMinor: minor, KubeletVersion: kubelet})
	}
	return out
}

// existing lists the names of a kind among the manifests, for hints.
func (v *validator) existing(kind string) string {
	var names []string
	for _, o := range v.sc.Objects {
		if o.GVK.Kind == kind {
			names = append(names, qualified(o.Object.GetNamespace(), o.Object.GetName()))
		}
	}
	if len(names) == 0 {
		return "there is none"
	}
	return "there are: " + strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
