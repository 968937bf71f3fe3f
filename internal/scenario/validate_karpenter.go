package scenario

import (
	"errors"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
)

// A NodePool launches only the instance types its EC2NodeClass's AMIs
// boot (nodeclass.CheckNodePoolAMIs, the filter the twin's Karpenter
// applies to what a pool offers), and a starting node was launched with
// the newest AMI of its architecture (nodeclass.NewestAMI): a pool and a
// class that leave no instance type, or a node of an architecture its
// class has no AMI for, are refused — at the start, and after each apply
// or patch action that changes either.

// poolAMIs is a NodePool's EC2NodeClass, found by find, and what it
// resolves to; false when the class is missing or did not resolve (both
// reported with the class).
func (v *validator) poolAMIs(np *karpv1.NodePool, find func(name string) (manifest.Object, bool)) (*awsv1.EC2NodeClass, []catalog.AMI, bool) {
	ref := np.Spec.Template.Spec.NodeClassRef
	if ref == nil {
		return nil, nil, false
	}
	o, ok := find(ref.Name)
	if !ok {
		return nil, nil, false
	}
	nc, ok := o.Object.(*awsv1.EC2NodeClass)
	if !ok {
		return nil, nil, false
	}
	amis, ok := v.resolved[nc]
	return nc, amis, ok
}

func (v *validator) checkPool(np *karpv1.NodePool, find func(name string) (manifest.Object, bool)) error {
	nc, amis, ok := v.poolAMIs(np, find)
	if !ok {
		return nil
	}
	return nodeclass.CheckNodePoolAMIs(np, nc, amis, v.sc.InstanceTypes(), v.sc.Spec.Cluster.Zones)
}

const poolAMIFix = "select an AMI of an architecture the requirements allow, or allow the AMIs' architecture (kubernetes.io/arch)"

// startingClass finds a starting EC2NodeClass.
func (v *validator) startingClass(name string) (manifest.Object, bool) {
	return v.sc.Find("EC2NodeClass", "", name)
}

// nodePoolAMIs refuses a starting NodePool that could launch no node.
func (v *validator) nodePoolAMIs() {
	for _, o := range v.sc.Objects {
		if np, ok := o.Object.(*karpv1.NodePool); ok {
			if err := v.checkPool(np, v.startingClass); err != nil {
				v.failObject(o, "spec.template.spec.requirements", err.Error(), poolAMIFix)
			}
		}
	}
}

// nodeAMI refuses a starting Karpenter node that names no AMI when its
// NodePool's EC2NodeClass has none for the node's architecture.
func (v *validator) nodeAMI(f, pool string, n ExistingNode) {
	it, ok := v.types[n.InstanceType]
	if n.AMI != "" || !ok {
		return
	}
	o, ok := v.sc.Find("NodePool", "", pool)
	if !ok {
		return
	}
	nc, amis, ok := v.poolAMIs(o.Object.(*karpv1.NodePool), v.startingClass)
	if !ok {
		return
	}
	if _, ok := nodeclass.NewestAMI(amis, it.Arch); !ok {
		v.fail(f+".instanceType", "%s is %s but EC2NodeClass %s resolves to no %s AMI (use an instance type of its AMIs' architecture, set the node's ami, or select an AMI of that architecture)", it.Name, it.Arch, nc.Name, it.Arch)
	}
}

// scriptPools checks, after an action applied or patched objs, every
// NodePool the script has reached whose NodePool or EC2NodeClass is among
// them, against the classes as the script left them.
func (v *validator) scriptPools(f string, objs []manifest.Object) {
	changed := map[string]bool{}
	for _, o := range objs {
		switch o.Object.(type) {
		case *karpv1.NodePool, *awsv1.EC2NodeClass:
			changed[o.GVK.Kind+"/"+o.Object.GetName()] = true
		}
	}
	if len(changed) == 0 {
		return
	}
	find := func(name string) (manifest.Object, bool) {
		o, ok := v.script[appliedKey("EC2NodeClass", "", name)]
		return o, ok
	}
	for _, k := range sortedKeys(v.script) {
		np, ok := v.script[k].Object.(*karpv1.NodePool)
		if !ok || np.Spec.Template.Spec.NodeClassRef == nil {
			continue
		}
		if !changed["NodePool/"+np.Name] && !changed["EC2NodeClass/"+np.Spec.Template.Spec.NodeClassRef.Name] {
			continue
		}
		if err := v.checkPool(np, find); err != nil {
			v.fail(f, "leaves NodePool %s unable to launch a node: %v (%s)", np.Name, err, poolAMIFix)
		}
	}
}

// classesAt resolves the script's EC2NodeClasses at the version an
// upgradeControlPlane action brings. Karpenter resolves an alias at the
// version it discovers (a pinned al2023@v20240807 is the SSM parameter
// .../optimized-ami/<version>/...-<version>-v20240807), and "as soon as
// your cluster is upgraded, Karpenter will auto-discover the new AMIs for
// that version" (semantics.md §A, EKS upgrade with Karpenter): a release
// the new version does not have leaves the class without an AMI, and the
// twin's Karpenter — as Karpenter — launching no node for its NodePools
// from then on. The playbook's drift step moves a class to @latest itself;
// a script must do it in an action before the upgrade.
//
// A class that does not resolve before the upgrade either is reported
// where it is applied, once.
func (v *validator) classesAt(f, from, to string) {
	minor, ok := catalog.NormalizeMinor(to)
	if !ok {
		return
	}
	for _, k := range sortedKeys(v.script) {
		nc, ok := v.script[k].Object.(*awsv1.EC2NodeClass)
		if !ok {
			continue
		}
		var amiErr *nodeclass.AMIError
		if _, err := nodeclass.ResolveNodeClassAMIs(nc, from, v.sc.ExtraAMIs(), v.sc.Spec.Start.UTC()); err != nil {
			continue
		}
		if _, err := nodeclass.ResolveNodeClassAMIs(nc, minor, v.sc.ExtraAMIs(), v.sc.Spec.Start.UTC()); errors.As(err, &amiErr) {
			v.fail(f, "%v; after this upgrade Karpenter resolves no AMI for the class and launches no node (pin a release Kubernetes %s has, or patch the alias to @latest in an action before this one)", amiErr, minor)
		}
	}
}

// emptyRequirements refuses a NodePool whose requirements on one key have
// no value in common (disruption.EmptyRequirements).
func (v *validator) emptyRequirements(o manifest.Object, np *karpv1.NodePool) {
	if e := disruption.EmptyRequirements(np); e != nil {
		v.failObject(o, e.Field, e.Msg, e.Fix)
	}
}
