package insights

import (
	"fmt"
	"regexp"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

func init() { Register(karpenterAMIPinned{}) }

// karpenterAMIPinned finds EC2NodeClasses whose amiSelectorTerms do not
// follow the control plane: an AMI id, a name or SSM parameter that names a
// Kubernetes minor, or an alias pinned to a release (al2023@v20240807).
// Karpenter then does not drift the nodes to the new minor's AMI after the
// control-plane upgrade. WARNING; ERROR when the hop breaks the node class:
// a pinned AL2/AL2023 release older than the minor (no such AMI exists, so
// Karpenter launches nothing), an al2 alias at 1.33 or later, or a pinned
// kubelet beyond the skew policy at the target.
type karpenterAMIPinned struct{}

func (karpenterAMIPinned) Info() Info {
	return Info{
		ID:    "karpenter-ami-pinned",
		Title: "EC2NodeClasses whose AMIs do not follow the control plane",
		Help: "Karpenter replaces nodes after a control-plane upgrade only when the AMIs its EC2NodeClass selects change. An alias @latest follows the control plane; " +
			"an AMI id, a name or SSM parameter naming a Kubernetes minor, or a pinned alias does not (a pinned alias resolves to the same dated build for the new minor). " +
			"WARNING; ERROR when the hop leaves the node class without an AMI (a pinned release older than the minor, al2 at 1.33+) or the pinned kubelet beyond the skew policy.",
		Needs: NeedsObjects,
	}
}

var (
	nameMinorRE = regexp.MustCompile(`(?:^|[-_/])(1\.[0-9]{1,2})(?:[-_/.]|$)`)
	ssmMinorRE  = regexp.MustCompile(`(?:/optimized-ami/|aws-k8s-|EKS_Optimized-)(1\.[0-9]{1,2})(?:[-_/]|$)`)
	alDateRE    = regexp.MustCompile(`^v(20[0-9]{6})$`)
)

func (karpenterAMIPinned) Run(in *Input) []Finding {
	var out []Finding
	for _, o := range in.Kind("EC2NodeClass") {
		nc, ok := o.Typed.(*awsv1.EC2NodeClass)
		if !ok {
			continue
		}
		for i, term := range nc.Spec.AMISelectorTerms {
			field := fmt.Sprintf("spec.amiSelectorTerms[%d]", i)
			switch {
			case term.Alias != "":
				if f, ok := pinnedAlias(in, o, field+".alias", term.Alias); ok {
					out = append(out, f)
				}
			case term.ID != "":
				msg := fmt.Sprintf("%s selects AMI %s by id: the id does not change with the control plane, so after the upgrade to %s Karpenter does not drift its nodes and they keep their kubelet", o, term.ID, in.Target)
				sev := Warning
				if ami, known := catalog.LookupAMI(term.ID); known {
					if m, err := kubeversion.Parse(ami.KubernetesMinor); err == nil && !kubeversion.KubeletSkewOK(in.Target, m) {
						sev = Error
						msg += fmt.Sprintf(" — %s is built for Kubernetes %s, beyond the kubelet skew policy at %s", term.ID, m, in.Target)
					}
				}
				out = append(out, o.Finding(sev, field+".id", msg, followAdvice(nc)))
			case term.Name != "":
				if f, ok := pinnedMinor(in, o, field+".name", "name "+term.Name, nameMinorRE, term.Name, nc); ok {
					out = append(out, f)
				}
			case term.SSMParameter != "":
				if f, ok := pinnedMinor(in, o, field+".ssmParameter", "SSM parameter "+term.SSMParameter, ssmMinorRE, term.SSMParameter, nc); ok {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func pinnedAlias(in *Input, o *Object, field, alias string) (Finding, bool) {
	a, err := catalog.ParseAlias(alias)
	if err != nil {
		return Finding{}, false // the API server rejects it; not this check's business
	}
	if a.Family == catalog.FamilyAL2 {
		last := kubeversion.MustParse(catalog.LastAL2Minor)
		for _, hop := range in.Hops() {
			if last.Less(hop) {
				f := o.Finding(Error, field,
					fmt.Sprintf("%s uses alias %s, but there are no AL2 AMIs for Kubernetes %s (they end at %s): after the upgrade to %s Karpenter finds no AMI and launches no nodes", o, alias, hop, last, hop),
					fmt.Sprintf("Move the EC2NodeClass to alias al2023@latest (or bottlerocket@latest) before the upgrade to %s; check user data, which differs between AL2 and AL2023.", hop))
				if in.MultiHop() {
					f.Hop = hop.String()
				}
				return f, true
			}
		}
	}
	if a.Version == catalog.AliasVersionLatest {
		return Finding{}, false
	}
	if m := alDateRE.FindStringSubmatch(a.Version); m != nil {
		date, err := time.Parse("20060102", m[1])
		if err == nil {
			for _, hop := range in.Hops() {
				rel, ok := catalog.LookupRelease(hop.String())
				if !ok || !date.Before(rel.EKSRelease) {
					continue
				}
				f := o.Finding(Error, field,
					fmt.Sprintf("%s pins alias %s: after the upgrade to %s Karpenter looks for the %s build for %s, which cannot exist (%s came to EKS on %s), so it finds no AMI and launches no nodes",
						o, alias, hop, a.Version, hop, hop, rel.EKSRelease.Format(time.DateOnly)),
					fmt.Sprintf("Use %s@latest, or pin a release of %s or later, before the upgrade.", a.Family, rel.EKSRelease.Format("v20060102")))
				if in.MultiHop() {
					f.Hop = hop.String()
				}
				return f, true
			}
		}
	}
	return o.Finding(Warning, field,
		fmt.Sprintf("%s pins alias %s: after the upgrade to %s Karpenter drifts its nodes to the %s build for %s, not to the newest AMI, and never past it", o, alias, in.Target, a.Version, in.Target),
		fmt.Sprintf("Use %s@latest to follow the control plane, or move the pin to a current release as part of the upgrade.", a.Family)), true
}

func pinnedMinor(in *Input, o *Object, field, what string, re *regexp.Regexp, value string, nc *awsv1.EC2NodeClass) (Finding, bool) {
	m := re.FindStringSubmatch(value)
	if m == nil {
		return Finding{}, false
	}
	minor, err := kubeversion.Parse(m[1])
	if err != nil || !minor.Less(in.Target) {
		return Finding{}, false
	}
	sev := Warning
	msg := fmt.Sprintf("%s selects AMIs by %s, which names Kubernetes %s: after the upgrade to %s Karpenter does not drift its nodes, and their kubelets stay at %s", o, what, minor, in.Target, minor)
	if !kubeversion.KubeletSkewOK(in.Target, minor) {
		sev = Error
		msg += fmt.Sprintf(", beyond the kubelet skew policy at %s (at most %d minors)", in.Target, kubeversion.MaxKubeletSkew(minor))
	}
	return o.Finding(sev, field, msg, followAdvice(nc)), true
}

func followAdvice(nc *awsv1.EC2NodeClass) string {
	family := "al2023"
	if nc.Spec.AMIFamily != nil && *nc.Spec.AMIFamily != "" && *nc.Spec.AMIFamily != "Custom" {
		switch *nc.Spec.AMIFamily {
		case "AL2":
			family = "al2023"
		case "Bottlerocket":
			family = "bottlerocket"
		}
	}
	return fmt.Sprintf("Select AMIs with alias %s@latest so Karpenter drifts the nodes after each control-plane upgrade, or update the term to an AMI built for the target as part of every hop.", family)
}
