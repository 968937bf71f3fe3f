package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/rules/addon"
)

// AddonAPI is EKS's UpdateAddon (awsport.EKS).
type AddonAPI interface {
	UpdateAddon(ctx context.Context, params *eks.UpdateAddonInput, optFns ...func(*eks.Options)) (*eks.UpdateAddonOutput, error)
}

// UpdateAddon is one add-on step (semantics.md §E): an add-on with nothing
// newer to go to stays, and says why; otherwise the update is checked
// against EKS's rules (one add-on minor at a time, no downgrade, kube-proxy
// within the kubelets' skew), UpdateAddon is called, and the step waits
// until kubectl rollout status says each of the add-on's workloads has
// rolled out its new images.
func (e *Executor) UpdateAddon(ctx context.Context, st plan.Step) error {
	name, from, to := st.Name, st.From, st.To
	if to == from {
		e.Observer.AddonVersion(name, from, st.Note)
		e.Observer.Event("Normal", "AddonUnchanged", fmt.Sprintf("add-on %s stays at %s: %s", name, from, st.Note))
		return nil
	}
	cluster, err := e.describeCluster(ctx)
	if err != nil {
		return err
	}
	cp, err := kubeversion.Parse(aws.ToString(cluster.Version))
	if err != nil {
		return fmt.Errorf("DescribeCluster: version %q: %v", aws.ToString(cluster.Version), err)
	}
	if f, err1 := addon.ParseVersion(from); err1 == nil {
		if t, err2 := addon.ParseVersion(to); err2 == nil && t.Compare(f) < 0 {
			note := fmt.Sprintf("the table's %s for %s is older than the installed %s, which stays", to, cp, from)
			e.Observer.AddonVersion(name, from, note)
			e.Observer.Event("Normal", "AddonUnchanged", fmt.Sprintf("add-on %s: %s", name, note))
			return nil
		}
	}
	kubelets, err := e.kubelets(ctx)
	if err != nil {
		return err
	}
	if err := addon.CheckUpdate(name, from, to, cp, kubelets); err != nil {
		return err
	}
	v, _ := addon.ParseVersion(to)
	var refs []kubeport.Workload
	for _, w := range addon.Workloads(name) {
		refs = append(refs, kubeport.Workload{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name})
	}
	// Which images change is read before the update: a resumed run, whose
	// workloads may run the new images already, does not read it again.
	if _, _, err := e.once("UpdateAddon", func(token *string) (string, error) {
		var images []string
		for _, ref := range refs {
			t, err := kubeport.PodTemplate(ctx, e.Ports.Kube, ref)
			if err != nil {
				return "", err
			}
			if t == nil {
				return "", fmt.Errorf("add-on %s: %s %s/%s was not applied", name, ref.Kind, ref.Namespace, ref.Name)
			}
			for _, list := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
				for _, c := range list {
					if img, own := addon.Image(name, c.Image, v); own && img != c.Image {
						images = append(images, img)
					}
				}
			}
		}
		if len(images) == 0 {
			return "", fmt.Errorf("add-on %s: none of its workloads (%s) runs an image of the add-on to update", name, describeWorkloads(refs))
		}
		up, err := e.Ports.EKS.UpdateAddon(ctx, &eks.UpdateAddonInput{ClusterName: aws.String(e.Cluster), AddonName: aws.String(name), AddonVersion: aws.String(to), ClientRequestToken: token})
		if err != nil {
			return "", apiError(err)
		}
		e.Observer.Event("Normal", "AddonUpdating", fmt.Sprintf("add-on %s: %s → %s (UpdateAddon; images %s)", name, from, to, strings.Join(images, ", ")))
		if up.Update == nil {
			return "", nil
		}
		return aws.ToString(up.Update.Id), nil
	}); err != nil {
		return err
	}
	if err := e.WaitFor(ctx, kubeport.RolloutsComplete{Workloads: refs}); err != nil {
		return err
	}
	e.Observer.AddonVersion(name, to, "")
	e.Observer.Event("Normal", "AddonUpdated", fmt.Sprintf("add-on %s is %s: %s rolled out", name, to, describeWorkloads(refs)))
	return nil
}

// kubelets is every node's kubelet version by node name.
func (e *Executor) kubelets(ctx context.Context) (map[string]string, error) {
	nodes, err := e.Ports.Kube.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(nodes))
	for _, n := range nodes {
		out[n.Name] = n.Status.NodeInfo.KubeletVersion
	}
	return out, nil
}

func describeWorkloads(refs []kubeport.Workload) string {
	var out []string
	for _, w := range refs {
		out = append(out, w.String())
	}
	return strings.Join(out, ", ")
}
