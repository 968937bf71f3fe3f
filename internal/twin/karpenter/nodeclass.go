package karpenter

import (
	"slices"
	"sort"
	"strings"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
)

// nodeClass is an EC2NodeClass and its resolved status.
type nodeClass struct {
	obj  *awsv1.EC2NodeClass
	amis []catalog.AMI // what amiSelectorTerms resolve to now
}

// resolveAMIs resolves a class's amiSelectorTerms at the discovered
// Kubernetes version (ResolveNodeClassAMIs) and stamps its status.
func (k *Karpenter) resolveAMIs(c *nodeClass) error {
	out, err := ResolveNodeClassAMIs(c.obj, k.version, k.opts.ExtraAMIs, k.eng.Now())
	if err != nil {
		return err
	}
	c.amis = out
	disruption.StampNodeClassHash(c.obj) // the nodeclass hash controller (aws-apis.md §6.4)
	c.obj.Status.AMIs = StatusAMIs(out)
	return nil
}

// StatusAMIs is the status.amis the AMI reconciler writes for resolved
// images: newest first, each with the architecture it serves, so the first
// one an instance type meets is the one a launch picks (NewestAMI) and
// drift checks against (amifamily.MapToInstanceTypes).
func StatusAMIs(amis []catalog.AMI) []awsv1.AMI {
	sorted := slices.Clone(amis)
	slices.SortStableFunc(sorted, func(a, b catalog.AMI) int {
		if newer(a, b) {
			return -1
		}
		if newer(b, a) {
			return 1
		}
		return 0
	})
	var out []awsv1.AMI
	for _, a := range sorted {
		out = append(out, awsv1.AMI{ID: a.ID, Name: a.Name, Requirements: disruption.AMIRequirements(a.KubeArch())})
	}
	return out
}

// newer reports whether a launches before b: released later, or the same
// day with a greater name.
func newer(a, b catalog.AMI) bool {
	return a.ReleaseDate.After(b.ReleaseDate) || (a.ReleaseDate.Equal(b.ReleaseDate) && a.Name > b.Name)
}

func (k *Karpenter) lookupAMI(id string) (catalog.AMI, bool) {
	return findAMI(k.opts.ExtraAMIs, id)
}

// amiFor picks the image a new instance of an architecture gets
// (NewestAMI).
func (c *nodeClass) amiFor(kubeArch string) (catalog.AMI, bool) {
	return NewestAMI(c.amis, kubeArch)
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

// globMatch matches EC2 name filters: '*' any run, '?' one character.
func globMatch(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if globMatch(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && globMatch(pattern[1:], s[1:])
	default:
		return s != "" && s[0] == pattern[0] && globMatch(pattern[1:], s[1:])
	}
}
