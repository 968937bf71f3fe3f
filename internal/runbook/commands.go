package runbook

import (
	"fmt"
	"strings"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/scenario"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// commands writes the manual equivalents of steps, with the names the
// scenario gives (cluster, launch templates, EC2NodeClasses, green
// groups). The Terraform lines are the variables of terraform-aws-eks that
// the seed's workshop changes.
type commands struct{ sc *scenario.Scenario }

func (c commands) cluster() string { return c.sc.Spec.Cluster.Name }

func (c commands) group(name string) (scenario.NodeGroup, bool) {
	for _, g := range c.sc.Spec.NodeGroups {
		if g.Name == name {
			return g, true
		}
	}
	return scenario.NodeGroup{}, false
}

// step returns a step's commands and its rollback.
func (c commands) step(s Step) ([]Command, string) {
	cl := c.cluster()
	switch s.Kind {
	case "pre-checks":
		return []Command{
			{"aws", fmt.Sprintf("aws eks list-insights --cluster-name %s --filter kubernetesVersions=%s", cl, s.To)},
			{"ladder", fmt.Sprintf("ladder check --target %s", s.To)},
		}, "nothing to undo: the pre-checks change nothing"
	case "control-plane":
		return []Command{
				{"aws", fmt.Sprintf("aws eks update-cluster-version --name %s --kubernetes-version %s && aws eks wait cluster-active --name %s", cl, s.To, cl)},
				{"eksctl", fmt.Sprintf("eksctl upgrade cluster --name %s --version %s --approve", cl, s.To)},
				{"terraform", fmt.Sprintf(`cluster_version = "%s"   # terraform-aws-eks (kubernetes_version from v21); terraform apply`, s.To)},
			}, fmt.Sprintf("within 7 days of the upgrade, `aws eks update-cluster-version --name %s --kubernetes-version %s` is a VersionRollback "+
				"(https://docs.aws.amazon.com/eks/latest/userguide/rollback-cluster.html): first roll the node groups back to %s and delete Fargate pods at %s; the ROLLBACK_READINESS insights must show no ERROR; "+
				"add-ons, etcd data and workloads are not rolled back", cl, s.From, s.From, s.To)
	case "addon":
		if s.From == s.To {
			return nil, "nothing to undo: the add-on stays"
		}
		return []Command{
			{"aws", fmt.Sprintf("aws eks update-addon --cluster-name %s --addon-name %s --addon-version %s --resolve-conflicts PRESERVE", cl, s.Name, s.To)},
			{"eksctl", fmt.Sprintf("eksctl update addon --cluster %s --name %s --version %s", cl, s.Name, s.To)},
			{"terraform", fmt.Sprintf(`addons = { %s = { addon_version = "%s" } }   # terraform apply`, s.Name, s.To)},
		}, fmt.Sprintf("`aws eks update-addon --cluster-name %s --addon-name %s --addon-version %s` (one minor back is supported)", cl, s.Name, s.From)
	case "node-group":
		return c.nodeGroup(s)
	}
	return nil, ""
}

func (c commands) nodeGroup(s Step) ([]Command, string) {
	cl := c.cluster()
	g, _ := c.group(s.Name)
	switch s.Strategy {
	case scenario.InPlace:
		if m := g.Managed; m != nil && m.LaunchTemplate != nil && m.LaunchTemplate.ImageID != "" {
			lt := m.LaunchTemplate
			param := c.amiParameter(lt.ImageID, firstType(m.InstanceTypes), s.To)
			return []Command{
					{"aws", fmt.Sprintf("aws ec2 create-launch-template-version --launch-template-name %s --source-version %s --launch-template-data \"ImageId=$(aws ssm get-parameter --name %s --query Parameter.Value --output text)\"", lt.Name, lt.Version, param)},
					{"aws", fmt.Sprintf("aws eks update-nodegroup-version --cluster-name %s --nodegroup-name %s --launch-template name=%s,version=NEW_VERSION", cl, s.Name, lt.Name)},
					{"terraform", fmt.Sprintf(`ami_id = data.aws_ssm_parameter.eks_%s.value   # %s; terraform apply`, strings.ReplaceAll(s.To, ".", "_"), param)},
				}, fmt.Sprintf("`aws eks update-nodegroup-version --cluster-name %s --nodegroup-name %s --launch-template name=%s,version=%s`: the previous launch template version",
					cl, s.Name, lt.Name, lt.Version)
		}
		return []Command{
				{"aws", fmt.Sprintf("aws eks update-nodegroup-version --cluster-name %s --nodegroup-name %s --kubernetes-version %s && aws eks wait nodegroup-active --cluster-name %s --nodegroup-name %s", cl, s.Name, s.To, cl, s.Name)},
				{"eksctl", fmt.Sprintf("eksctl upgrade nodegroup --cluster %s --name %s --kubernetes-version %s", cl, s.Name, s.To)},
				{"terraform", fmt.Sprintf(`cluster_version = "%s"   # the module's managed groups follow it; terraform apply`, s.To)},
			}, fmt.Sprintf("`aws eks update-nodegroup-version --cluster-name %s --nodegroup-name %s --kubernetes-version %s --release-version PREVIOUS` while the control plane is at %s (EKS allows a group one minor behind)",
				cl, s.Name, s.From, s.To)
	case scenario.BlueGreen:
		green := s.Name + "-green"
		if g.Upgrade != nil && g.Upgrade.Green != nil && g.Upgrade.Green.Name != "" {
			green = g.Upgrade.Green.Name
		}
		return []Command{
				{"eksctl", fmt.Sprintf("eksctl create nodegroup --cluster %s --name %s --version %s   # same labels, taints and zones as %s", cl, green, s.To, s.Name)},
				{"kubectl", fmt.Sprintf("kubectl drain -l eks.amazonaws.com/nodegroup=%s --ignore-daemonsets --delete-emptydir-data", s.Name)},
				{"aws", fmt.Sprintf("aws eks delete-nodegroup --cluster-name %s --nodegroup-name %s", cl, s.Name)},
				{"terraform", fmt.Sprintf(`# add a %s group at "%s" beside %s and apply; after the drain, remove %s and apply`, green, s.To, s.Name, s.Name)},
			}, fmt.Sprintf("before %s is deleted: `kubectl uncordon -l eks.amazonaws.com/nodegroup=%s`, then delete %s; after, create %s again at %s",
				s.Name, s.Name, green, s.Name, s.From)
	case scenario.Drift:
		class := c.nodeClass(g)
		return []Command{
			{"kubectl", fmt.Sprintf(`kubectl patch ec2nodeclass %s --type merge -p '{"spec":{"amiSelectorTerms":[{"alias":"al2023@latest"}]}}'   # or the pinned alias for %s`, class, s.To)},
			{"kubectl", "kubectl get nodeclaims -w   # Karpenter replaces drifted nodes under the NodePool's disruption budgets"},
		}, fmt.Sprintf("patch EC2NodeClass %s's amiSelectorTerms back to the previous AMI: Karpenter drifts the nodes back under the same budgets", class)
	case scenario.InstanceRefresh:
		if sm := g.SelfManaged; sm != nil {
			param := c.amiParameter(sm.LaunchTemplate.ImageID, sm.InstanceType, s.To)
			prefs := refreshPreferences(g)
			return []Command{
					{"aws", fmt.Sprintf("aws ec2 create-launch-template-version --launch-template-name %s --source-version %s --launch-template-data \"ImageId=$(aws ssm get-parameter --name %s --query Parameter.Value --output text)\"", sm.LaunchTemplate.Name, sm.LaunchTemplate.Version, param)},
					{"aws", fmt.Sprintf("aws autoscaling start-instance-refresh --auto-scaling-group-name %s --desired-configuration '{\"LaunchTemplate\":{\"LaunchTemplateName\":\"%s\",\"Version\":\"$Latest\"}}' --preferences '%s'", s.Name, sm.LaunchTemplate.Name, prefs)},
					{"terraform", fmt.Sprintf(`image_id = data.aws_ssm_parameter.eks_%s.value   # %s, with instance_refresh { strategy = "Rolling" }; terraform apply`, strings.ReplaceAll(s.To, ".", "_"), param)},
				}, fmt.Sprintf("`aws autoscaling rollback-instance-refresh --auto-scaling-group-name %s` while it runs; after, a refresh to launch template %s version %s",
					s.Name, sm.LaunchTemplate.Name, sm.LaunchTemplate.Version)
		}
	case scenario.Ladder:
		if sm := g.SelfManaged; sm != nil {
			param := c.amiParameter(sm.LaunchTemplate.ImageID, sm.InstanceType, s.To)
			return []Command{
					{"aws", fmt.Sprintf("aws ec2 create-launch-template-version --launch-template-name %s --source-version %s --launch-template-data \"ImageId=$(aws ssm get-parameter --name %s --query Parameter.Value --output text)\"", sm.LaunchTemplate.Name, sm.LaunchTemplate.Version, param)},
					{"aws", fmt.Sprintf("aws autoscaling update-auto-scaling-group --auto-scaling-group-name %s --launch-template LaunchTemplateName=%s,Version='$Latest' && aws autoscaling set-desired-capacity --auto-scaling-group-name %s --desired-capacity %d", s.Name, sm.LaunchTemplate.Name, s.Name, min(2*sm.Desired, max(sm.Max, sm.Desired)))},
					{"kubectl", fmt.Sprintf("kubectl drain NODE --ignore-daemonsets --delete-emptydir-data   # each old node of -l alpha.eksctl.io/nodegroup-name=%s, as many at once as the PDBs allow", s.Name)},
					{"aws", "aws autoscaling terminate-instance-in-auto-scaling-group --instance-id INSTANCE --should-decrement-desired-capacity   # each drained node's instance"},
				}, fmt.Sprintf("before the old nodes are terminated: `kubectl uncordon` them and `aws autoscaling set-desired-capacity --auto-scaling-group-name %s --desired-capacity %d`; after, launch template %s version %s the same way",
					s.Name, sm.Desired, sm.LaunchTemplate.Name, sm.LaunchTemplate.Version)
		}
	case scenario.Restart:
		var cmds []Command
		if f := g.Fargate; f != nil {
			for _, sel := range f.Selectors {
				line := "kubectl rollout restart deployment,statefulset -n " + sel.Namespace
				var labels []string
				for _, k := range sortedKeys(sel.Labels) {
					labels = append(labels, k+"="+sel.Labels[k])
				}
				if len(labels) > 0 {
					line += " -l " + strings.Join(labels, ",")
				}
				cmds = append(cmds, Command{"kubectl", line})
			}
		}
		return cmds, "none: Fargate starts each pod at the control plane's version, and EKS cannot roll Fargate back (https://docs.aws.amazon.com/eks/latest/userguide/rollback-cluster.html)"
	}
	return nil, ""
}

// amiParameter is the SSM parameter of the recommended EKS-optimized AMI
// for minor, in the family and architecture of image (else of the
// instance type; AL2023 when unknown).
func (c commands) amiParameter(image, instanceType, minor string) string {
	family, arch := catalog.FamilyAL2023, catalog.ArchX8664
	if a, ok := catalog.LookupAMI(image); ok {
		family, arch = a.Family, a.Arch
	} else if t, ok := catalog.LookupInstanceType(instanceType); ok {
		if a, ok := catalog.AMIArch(t.Arch); ok {
			arch = a
		}
	}
	return catalog.RecommendedParameter(family, arch, minor)
}

// nodeClass is the EC2NodeClass a Karpenter group's NodePool names.
func (c commands) nodeClass(g scenario.NodeGroup) string {
	if g.Karpenter == nil {
		return "default"
	}
	for _, o := range c.sc.Objects {
		if np, ok := o.Object.(*karpv1.NodePool); ok && np.Name == g.Karpenter.NodePool && np.Spec.Template.Spec.NodeClassRef != nil {
			return np.Spec.Template.Spec.NodeClassRef.Name
		}
	}
	return "default"
}

// refreshPreferences is the StartInstanceRefresh preferences JSON of a
// group's scenario settings.
func refreshPreferences(g scenario.NodeGroup) string {
	var parts []string
	if g.Upgrade != nil && g.Upgrade.Refresh != nil {
		r := g.Upgrade.Refresh
		if r.MinHealthyPercentage != nil {
			parts = append(parts, fmt.Sprintf(`"MinHealthyPercentage":%d`, *r.MinHealthyPercentage))
		}
		if r.MaxHealthyPercentage != nil {
			parts = append(parts, fmt.Sprintf(`"MaxHealthyPercentage":%d`, *r.MaxHealthyPercentage))
		}
		if r.InstanceWarmup != nil {
			parts = append(parts, fmt.Sprintf(`"InstanceWarmup":%d`, int(r.InstanceWarmup.Seconds())))
		}
		if r.SkipMatching {
			parts = append(parts, `"SkipMatching":true`)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func firstType(types []string) string {
	if len(types) == 0 {
		return ""
	}
	return types[0]
}
