package karpenter

import (
	"fmt"
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

// resolveAMIs is the nodeclass AMI reconciler (AWS provider
// controllers/nodeclass/ami.go): amiSelectorTerms are resolved to images —
// an alias through the SSM path for the discovered Kubernetes version
// (eks-data.md §1d), an id or a name through EC2 (the embedded catalog plus
// the scenario's AMIs). Tags and SSM parameters are not modelled.
func (k *Karpenter) resolveAMIs(c *nodeClass) error {
	var out []catalog.AMI
	seen := map[string]bool{}
	add := func(a catalog.AMI) {
		if !seen[a.ID] {
			seen[a.ID] = true
			out = append(out, a)
		}
	}
	for i, term := range c.obj.Spec.AMISelectorTerms {
		field := fmt.Sprintf("spec.amiSelectorTerms[%d]", i)
		switch {
		case term.Alias != "":
			found := false
			for _, arch := range []string{catalog.ArchX8664, catalog.ArchARM64} {
				a, err := catalog.ResolveAlias(term.Alias, k.version, arch, k.eng.Now())
				if err != nil {
					if arch == catalog.ArchX8664 {
						return fmt.Errorf("EC2NodeClass %s: %s.alias: %v", c.obj.Name, field, err)
					}
					continue
				}
				found = true
				add(a)
			}
			if !found {
				return fmt.Errorf("EC2NodeClass %s: %s.alias: %q resolves to no AMI for Kubernetes %s", c.obj.Name, field, term.Alias, k.version)
			}
		case term.ID != "":
			a, ok := k.lookupAMI(term.ID)
			if !ok {
				return fmt.Errorf("EC2NodeClass %s: %s.id: AMI %s is not in the twin's AMI catalog (declare it under spec.amis in the scenario with its Kubernetes version)", c.obj.Name, field, term.ID)
			}
			add(a)
		case term.Name != "":
			matched := k.matchAMIName(term.Name)
			if len(matched) == 0 {
				return fmt.Errorf("EC2NodeClass %s: %s.name: no AMI named %q (declare it under spec.amis in the scenario)", c.obj.Name, field, term.Name)
			}
			for _, a := range matched {
				add(a)
			}
		default:
			return fmt.Errorf("EC2NodeClass %s: %s: only alias, id and name selectors are modelled by the twin", c.obj.Name, field)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("EC2NodeClass %s: spec.amiSelectorTerms: AMISelector did not match any AMIs", c.obj.Name)
	}
	c.amis = out
	disruption.StampNodeClassHash(c.obj) // the nodeclass hash controller (aws-apis.md §6.4)
	// status.amis newest first, each with the architecture it serves, so
	// the first one an instance type meets is the one amiFor launches
	// (amifamily.MapToInstanceTypes, which drift checks against).
	sorted := slices.Clone(out)
	slices.SortStableFunc(sorted, func(a, b catalog.AMI) int {
		if newer(a, b) {
			return -1
		}
		if newer(b, a) {
			return 1
		}
		return 0
	})
	c.obj.Status.AMIs = nil
	for _, a := range sorted {
		c.obj.Status.AMIs = append(c.obj.Status.AMIs, awsv1.AMI{ID: a.ID, Name: a.Name, Requirements: disruption.AMIRequirements(a.KubeArch())})
	}
	return nil
}

// newer reports whether a launches before b: released later, or the same
// day with a greater name.
func newer(a, b catalog.AMI) bool {
	return a.ReleaseDate.After(b.ReleaseDate) || (a.ReleaseDate.Equal(b.ReleaseDate) && a.Name > b.Name)
}

func (k *Karpenter) lookupAMI(id string) (catalog.AMI, bool) {
	for _, a := range k.opts.ExtraAMIs {
		if a.ID == id {
			return a, true
		}
	}
	return catalog.LookupAMI(id)
}

func (k *Karpenter) matchAMIName(pattern string) []catalog.AMI {
	out := catalog.MatchName(pattern)
	for _, a := range k.opts.ExtraAMIs {
		if globMatch(pattern, a.Name) {
			out = append(out, a)
		}
	}
	return out
}

// amiFor picks the image a new instance of an architecture gets: the newest
// matching AMI (amifamily.MapToInstanceTypes keeps the newest per
// requirement set).
func (c *nodeClass) amiFor(kubeArch string) (catalog.AMI, bool) {
	var best catalog.AMI
	found := false
	for _, a := range c.amis {
		if a.KubeArch() != kubeArch {
			continue
		}
		if !found || newer(a, best) {
			best, found = a, true
		}
	}
	return best, found
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
