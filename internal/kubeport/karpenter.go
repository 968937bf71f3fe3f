package kubeport

import (
	"context"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Karpenter is the part of the port that reads and changes Karpenter's
// objects: NodePools and NodeClaims (karpenter.sh/v1) and EC2NodeClasses
// (karpenter.k8s.aws/v1), all cluster-scoped custom resources. Objects are
// the upstream Go types, returned as copies the caller owns; a missing
// object is a NotFound StatusError, as is every call on a cluster where
// Karpenter's CRDs are not installed (the API server knows no such
// resource).
//
// Patches are what the API server accepts for a custom resource: a JSON
// merge patch (types.MergePatchType) or a JSON patch (types.JSONPatchType);
// a strategic merge patch is refused with 415 UnsupportedMediaType, since
// CRDs carry no patch strategy. A patch changes the object, not its status
// (the status subresource is Karpenter's to write). What Karpenter's
// validation refuses comes back as 422 Invalid.
type Karpenter interface {
	GetNodePool(ctx context.Context, name string) (*karpv1.NodePool, error)
	// ListNodePools returns every NodePool, sorted by name.
	ListNodePools(ctx context.Context) ([]karpv1.NodePool, error)
	PatchNodePool(ctx context.Context, name string, pt types.PatchType, data []byte) (*karpv1.NodePool, error)

	GetEC2NodeClass(ctx context.Context, name string) (*awsv1.EC2NodeClass, error)
	// ListEC2NodeClasses returns every EC2NodeClass, sorted by name.
	ListEC2NodeClasses(ctx context.Context) ([]awsv1.EC2NodeClass, error)
	PatchEC2NodeClass(ctx context.Context, name string, pt types.PatchType, data []byte) (*awsv1.EC2NodeClass, error)

	GetNodeClaim(ctx context.Context, name string) (*karpv1.NodeClaim, error)
	// ListNodeClaims returns every NodeClaim, sorted by name. A NodeClaim
	// carries the hash annotations Karpenter stamps at launch
	// (karpenter.sh/nodepool-hash, karpenter.k8s.aws/ec2nodeclass-hash) and
	// its Drifted condition once drift is found.
	ListNodeClaims(ctx context.Context) ([]karpv1.NodeClaim, error)
	// PatchNodeClaim changes a NodeClaim's labels and annotations; its spec
	// is immutable (422 Invalid).
	PatchNodeClaim(ctx context.Context, name string, pt types.PatchType, data []byte) (*karpv1.NodeClaim, error)
}

// The resources of Karpenter's objects, for NotFound errors and dynamic
// clients.
var (
	NodePools      = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	NodeClaims     = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	EC2NodeClasses = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
)
