// Package nodeclass holds the rules of Karpenter's EC2NodeClass and
// NodePool that the twin, the scenario format's validation and the lab
// share: which AMIs an EC2NodeClass's amiSelectorTerms resolve to (the AWS
// provider's AMI reconciler) and which one a launch picks, the labels an
// instance type offers, and whether a NodePool's requirements (the NodePool
// CRD) and its class's AMIs (amifamily.MapToInstanceTypes) are sound. Pure
// functions over the API types and the catalog.
package nodeclass

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
)

// AMIError is an EC2NodeClass's amiSelectorTerms that the AMI reconciler
// cannot resolve, or that boot none of its NodePool's instance types: the
// field it is about and the message, for a scenario's validation to name.
type AMIError struct {
	NodeClass string
	Field     string // e.g. spec.amiSelectorTerms[0].alias
	Msg       string
}

func (e *AMIError) Error() string {
	return fmt.Sprintf("EC2NodeClass %s: %s: %s", e.NodeClass, e.Field, e.Msg)
}

// ResolveNodeClassAMIs is the nodeclass AMI reconciler (AWS provider
// controllers/nodeclass/ami.go) as a function of the EC2NodeClass, the
// discovered Kubernetes version, the scenario's own AMIs (extra) and the
// clock: amiSelectorTerms are resolved to images — an alias through the SSM
// path for the version, per architecture (eks-data.md §1d), an id or a name
// through EC2 (the embedded catalog plus extra). Tags and SSM parameters are
// not modelled. The result is in term order, each image once. The twin
// resolves every class with it when the class is applied and every 5
// minutes after; a scenario's validation resolves the starting classes
// with it, so both refuse the same selectors.
func ResolveNodeClassAMIs(nc *awsv1.EC2NodeClass, kubernetesVersion string, extra []catalog.AMI, now time.Time) ([]catalog.AMI, error) {
	var out []catalog.AMI
	seen := map[string]bool{}
	add := func(a catalog.AMI) {
		if !seen[a.ID] {
			seen[a.ID] = true
			out = append(out, a)
		}
	}
	fail := func(field, format string, args ...any) error {
		return &AMIError{NodeClass: nc.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	for i, term := range nc.Spec.AMISelectorTerms {
		field := fmt.Sprintf("spec.amiSelectorTerms[%d]", i)
		switch {
		case term.Alias != "":
			found := false
			for _, arch := range []string{catalog.ArchX8664, catalog.ArchARM64} {
				a, err := catalog.ResolveAlias(term.Alias, kubernetesVersion, arch, now)
				if err != nil {
					if arch == catalog.ArchX8664 {
						return nil, fail(field+".alias", "%v", err)
					}
					continue
				}
				found = true
				add(a)
			}
			if !found {
				return nil, fail(field+".alias", "%q resolves to no AMI for Kubernetes %s", term.Alias, kubernetesVersion)
			}
		case term.ID != "":
			a, ok := FindAMI(extra, term.ID)
			if !ok {
				return nil, fail(field+".id", "AMI %s is not in the twin's AMI catalog (declare it under spec.amis in the scenario with its kubernetesVersion)", term.ID)
			}
			add(a)
		case term.Name != "":
			matched := matchAMIName(extra, term.Name)
			if len(matched) == 0 {
				return nil, fail(field+".name", "no AMI named %q (declare it under spec.amis in the scenario)", term.Name)
			}
			for _, a := range matched {
				add(a)
			}
		default:
			return nil, fail(field, "only alias, id and name selectors are modelled by the twin")
		}
	}
	if len(out) == 0 {
		return nil, fail("spec.amiSelectorTerms", "AMISelector did not match any AMIs")
	}
	return out, nil
}

// FindAMI finds an image by id: the scenario's own (extra) first, then
// the catalog.
func FindAMI(extra []catalog.AMI, id string) (catalog.AMI, bool) {
	for _, a := range extra {
		if a.ID == id {
			return a, true
		}
	}
	return catalog.LookupAMI(id)
}

// matchAMIName is EC2's name filter over the catalog and extra.
func matchAMIName(extra []catalog.AMI, pattern string) []catalog.AMI {
	out := catalog.MatchName(pattern)
	for _, a := range extra {
		if globMatch(pattern, a.Name) {
			out = append(out, a)
		}
	}
	return out
}

// NewestAMI is the image a new instance of an architecture (kubernetes.io/arch)
// gets from a class's resolved AMIs: the newest of that architecture
// (amifamily.MapToInstanceTypes keeps the newest per requirement set).
func NewestAMI(amis []catalog.AMI, kubeArch string) (catalog.AMI, bool) {
	var best catalog.AMI
	found := false
	for _, a := range amis {
		if a.KubeArch() != kubeArch {
			continue
		}
		if !found || newer(a, best) {
			best, found = a, true
		}
	}
	return best, found
}

// CheckNodePoolAMIs refuses a NodePool that can launch nothing because its
// EC2NodeClass's AMIs (amis, from ResolveNodeClassAMIs) boot none of the
// instance types its requirements allow: the AWS provider offers only the
// types amifamily.MapToInstanceTypes maps to an image, so every pod the
// pool could take would stay Pending ("no instance type satisfied
// resources and requirements"). types is the region's catalog, zones the
// cluster's. The twin applies the same filter, cached, to every pool it
// schedules on (the twin's poolTypes and launchable).
func CheckNodePoolAMIs(np *karpv1.NodePool, nc *awsv1.EC2NodeClass, amis []catalog.AMI, types []catalog.InstanceType, zones []string) error {
	if CheckRequirements(np) != nil {
		return nil // refused by CheckRequirements: not a question of AMIs
	}
	reqs := PoolRequirements(np)
	allowed := map[string]bool{}
	for _, it := range types {
		if InstanceTypeRequirements(it, zones).Intersects(reqs) != nil {
			continue
		}
		if _, ok := NewestAMI(amis, it.Arch); ok {
			return nil
		}
		allowed[it.Arch] = true
	}
	if len(allowed) == 0 {
		return nil // no instance type at all: not a question of AMIs
	}
	have := map[string]bool{}
	for _, a := range amis {
		have[a.KubeArch()] = true
	}
	return &AMIError{NodeClass: nc.Name, Field: "spec.amiSelectorTerms",
		Msg: fmt.Sprintf("selects %s AMIs only, but NodePool %s allows %s instance types only: it can launch no node", archList(have), np.Name, archList(allowed))}
}

func archList(set map[string]bool) string {
	archs := make([]string, 0, len(set))
	for a := range set {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	return strings.Join(archs, " and ")
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
