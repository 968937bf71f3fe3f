package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// AMIs finds an AMI by id: the catalog of EKS-optimized AMIs and the
// scenario's own (until EC2's DescribeImages has a port).
type AMIs interface {
	LookupAMI(id string) (catalog.AMI, bool)
}

// DriftNodePool is a Karpenter node group's hop (semantics.md §A.3): the
// NodePool's EC2NodeClass is pointed at the hop's AMIs — the family's
// @latest alias, which follows the control plane's version (amiMode
// "latest"), or the id of the family's newest AMI for the new version —
// with a merge patch, and the step waits until Karpenter's drift has
// replaced every node of the NodePool.
func (e *Executor) DriftNodePool(ctx context.Context, group, pool, amiMode string, to kubeversion.Minor) error {
	k := e.Ports.Kube
	np, err := k.GetNodePool(ctx, pool)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("NodePool %s not found", pool)
	} else if err != nil {
		return err
	}
	className := np.Spec.Template.Spec.NodeClassRef.Name
	nc, err := k.GetEC2NodeClass(ctx, className)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("EC2NodeClass %s (NodePool %s) not found", className, pool)
	} else if err != nil {
		return err
	}
	terms, err := e.amiTerms(ctx, nc, pool, amiMode, to)
	if err != nil {
		return fmt.Errorf("node group %s: %v", group, err)
	}
	if !sameTerms(nc.Spec.AMISelectorTerms, terms) {
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"amiSelectorTerms": terms}})
		e.Observer.Event("Normal", "Patched", fmt.Sprintf("EC2NodeClass %s: amiSelectorTerms %s", className, describeTerms(terms)))
		if _, err := k.PatchEC2NodeClass(ctx, className, types.MergePatchType, patch); err != nil {
			return err
		}
	}
	return e.WaitFor(ctx, kubeport.NodePoolReplaced{NodePool: pool, Minor: to})
}

// amiTerms are the amiSelectorTerms for a hop. The family comes from the
// EC2NodeClass's alias, or else from the AMI a NodeClaim of the NodePool
// launched (status.imageID).
func (e *Executor) amiTerms(ctx context.Context, nc *awsv1.EC2NodeClass, pool, mode string, to kubeversion.Minor) ([]awsv1.AMISelectorTerm, error) {
	family := ""
	for _, t := range nc.Spec.AMISelectorTerms {
		if t.Alias != "" {
			family, _, _ = strings.Cut(t.Alias, "@")
		}
	}
	if family == "" {
		claims, err := e.Ports.Kube.ListNodeClaims(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range claims {
			if c.Labels[karpv1.NodePoolLabelKey] != pool {
				continue
			}
			if a, ok := e.AMIs.LookupAMI(c.Status.ImageID); ok {
				family = a.Family
				break
			}
		}
	}
	if family == "" {
		return nil, fmt.Errorf("cannot tell the AMI family of EC2NodeClass %s: use an alias such as al2023@latest in amiSelectorTerms", nc.Name)
	}
	if mode == "latest" {
		return []awsv1.AMISelectorTerm{{Alias: family + "@latest"}}, nil
	}
	a, err := catalog.ResolveAlias(family+"@latest", to.String(), catalog.ArchX8664, e.Ports.Kube.Now())
	if err != nil {
		return nil, err
	}
	return []awsv1.AMISelectorTerm{{ID: a.ID}}, nil
}

func sameTerms(a, b []awsv1.AMISelectorTerm) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func describeTerms(terms []awsv1.AMISelectorTerm) string {
	var out []string
	for _, t := range terms {
		switch {
		case t.Alias != "":
			out = append(out, "alias "+t.Alias)
		case t.ID != "":
			out = append(out, "id "+t.ID)
		default:
			out = append(out, "name "+t.Name)
		}
	}
	return strings.Join(out, ", ")
}
