package materialize

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// karpenterCRDs are the CRDs Karpenter's AWS Helm chart installs, as the
// provider module embeds them (github.com/aws/karpenter-provider-aws
// pkg/apis, the version in go.mod): the NodePool and NodeClaim of
// karpenter.sh — with the AWS provider's restrictions on karpenter.k8s.aws
// labels — the EC2NodeClass, and the NodeOverlay.
func karpenterCRDs() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, raw := range [][]byte{awsapis.NodePoolCRD, awsapis.NodeClaimCRD, awsapis.EC2NodeClassCRD, awsapis.NodeOverlayCRD} {
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("the embedded Karpenter CRDs: %v", err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("the embedded Karpenter CRDs: %v", err)
		}
		out = append(out, u)
	}
	return out, nil
}

// installCRDs applies Karpenter's CRDs and waits until the API server
// serves them (condition Established), so NodePools and EC2NodeClasses
// apply.
func (c *client) installCRDs(ctx context.Context) error {
	t := time.Now()
	crds, err := karpenterCRDs()
	if err != nil {
		return err
	}
	var names []string
	for _, crd := range crds {
		_, err := c.dyn.Resource(crdResource).Apply(ctx, crd.GetName(), crd, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if err != nil {
			return fmt.Errorf("installing CRD %s: %v", crd.GetName(), apiReason(err))
		}
		names = append(names, crd.GetName())
	}
	pending := map[string]bool{}
	err = poll(ctx, crdTimeout, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			u, err := c.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Errorf("reading CRD %s: %v", name, apiReason(err))
			}
			pending[name] = !established(u)
		}
		return len(sortedTrue(pending)) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("CRDs not Established after %s: %s", crdTimeout, strings.Join(sortedTrue(pending), ", "))
	}
	// The API server now serves new kinds: forget what discovery said.
	c.mapper.Reset()
	sort.Strings(names)
	c.printf("  Karpenter CRDs established: %s (%s)\n", strings.Join(names, ", "), since(t))
	return nil
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
