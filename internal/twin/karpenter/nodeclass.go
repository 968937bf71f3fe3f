package karpenter

import (
	"sort"
	"strings"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
)

// nodeClass is an EC2NodeClass and its resolved status.
type nodeClass struct {
	obj  *awsv1.EC2NodeClass
	amis []catalog.AMI // what amiSelectorTerms resolve to now
}

// resolveAMIs resolves a class's amiSelectorTerms at the discovered
// Kubernetes version (nodeclass.ResolveNodeClassAMIs) and stamps its status.
func (k *Karpenter) resolveAMIs(c *nodeClass) error {
	out, err := nodeclass.ResolveNodeClassAMIs(c.obj, k.version, k.opts.ExtraAMIs, k.eng.Now())
	if err != nil {
		return err
	}
	c.amis = out
	disruption.StampNodeClassHash(c.obj) // the nodeclass hash controller (aws-apis.md §6.4)
	c.obj.Status.AMIs = nodeclass.StatusAMIs(out)
	return nil
}

func (k *Karpenter) lookupAMI(id string) (catalog.AMI, bool) {
	return nodeclass.FindAMI(k.opts.ExtraAMIs, id)
}

// amiFor picks the image a new instance of an architecture gets
// (nodeclass.NewestAMI).
func (c *nodeClass) amiFor(kubeArch string) (catalog.AMI, bool) {
	return nodeclass.NewestAMI(c.amis, kubeArch)
}

// refreshAMIs re-resolves every EC2NodeClass, as the AMI reconciler does
// every 5 minutes; after a control-plane upgrade an alias then resolves to
// the new version's AMIs and NodeClaims drift (semantics.md §A.3).
func (k *Karpenter) refreshAMIs() {
	changed := false
	for _, name := range sortedNames(k.classes) {
		c := k.classes[name]
		before := amiIDs(c.amis)
		if err := k.resolveAMIs(c); err != nil {
			k.log(Event{Type: "Warning", Code: "AMIResolutionFailed", Message: err.Error()})
			continue
		}
		if after := amiIDs(c.amis); after != before {
			changed = true
			k.log(Event{Code: "AMIsDiscovered", Message: "discovered amis", Fields: []string{"ec2nodeclass=" + name, "ids=" + after}})
		}
	}
	if changed {
		k.evaluateDrift()
	}
}

func amiIDs(amis []catalog.AMI) string {
	ids := make([]string, len(amis))
	for i, a := range amis {
		ids[i] = a.ID
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
