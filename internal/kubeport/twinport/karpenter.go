package twinport

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// Karpenter's objects come from the Karpenter twin (Options.Karpenter).
// Patched NodePools and EC2NodeClasses are applied to it as a kubectl
// apply would, so a changed AMI selector or template drifts NodeClaims
// exactly as in a rehearsal. NodeClaims are the twin's own; a patch may
// change their labels and annotations, which the port keeps beside them
// (the twin's Karpenter reads none of a NodeClaim's labels or annotations,
// as upstream reads its do-not-disrupt from Nodes and pods).

var (
	nodePoolKind  = schema.GroupKind{Group: kubeport.NodePools.Group, Kind: "NodePool"}
	nodeClassKind = schema.GroupKind{Group: kubeport.EC2NodeClasses.Group, Kind: "EC2NodeClass"}
	nodeClaimKind = schema.GroupKind{Group: kubeport.NodeClaims.Group, Kind: "NodeClaim"}
)

// claimMeta is a patch's change to a NodeClaim's labels and annotations: a
// nil value removes the key.
type claimMeta struct {
	labels, annotations map[string]*string
}

// karpenterCheck is the 404 of a cluster without Karpenter's CRDs. verb is
// the HTTP method as client-go names it in the message: a list is a GET.
func (p *Port) karpenterCheck(verb string, gvr schema.GroupVersionResource) error {
	if p.opts.Karpenter == nil {
		return kubeport.NotInstalled(verb, gvr)
	}
	return nil
}

// GetNodePool implements kubeport.Port.
func (p *Port) GetNodePool(_ context.Context, name string) (*karpv1.NodePool, error) {
	if err := p.karpenterCheck("get", kubeport.NodePools); err != nil {
		return nil, err
	}
	np := p.opts.Karpenter.NodePool(name)
	if np == nil {
		return nil, apierrors.NewNotFound(kubeport.NodePools.GroupResource(), name)
	}
	return np.DeepCopy(), nil
}

// ListNodePools implements kubeport.Port.
func (p *Port) ListNodePools(context.Context) ([]karpv1.NodePool, error) {
	if err := p.karpenterCheck("get", kubeport.NodePools); err != nil {
		return nil, err
	}
	return p.opts.Karpenter.NodePoolObjects(), nil
}

// PatchNodePool implements kubeport.Port: the patched NodePool is applied
// to the twin, which defaults and validates it as the CRD does.
func (p *Port) PatchNodePool(ctx context.Context, name string, pt types.PatchType, data []byte) (*karpv1.NodePool, error) {
	old, err := p.GetNodePool(ctx, name)
	if err != nil {
		return nil, err
	}
	np := &karpv1.NodePool{}
	if err := kubeport.PatchCustomResource(name, pt, data, old, np); err != nil {
		return nil, err
	}
	np.Status = old.Status // the status subresource is not written by a patch
	if err := p.opts.Karpenter.ApplyNodePool(np); err != nil {
		return nil, invalid(nodePoolKind, name, err)
	}
	return p.GetNodePool(ctx, name)
}

// GetEC2NodeClass implements kubeport.Port.
func (p *Port) GetEC2NodeClass(_ context.Context, name string) (*awsv1.EC2NodeClass, error) {
	if err := p.karpenterCheck("get", kubeport.EC2NodeClasses); err != nil {
		return nil, err
	}
	nc := p.opts.Karpenter.NodeClassObject(name)
	if nc == nil {
		return nil, apierrors.NewNotFound(kubeport.EC2NodeClasses.GroupResource(), name)
	}
	return nc, nil
}

// ListEC2NodeClasses implements kubeport.Port.
func (p *Port) ListEC2NodeClasses(context.Context) ([]awsv1.EC2NodeClass, error) {
	if err := p.karpenterCheck("get", kubeport.EC2NodeClasses); err != nil {
		return nil, err
	}
	return p.opts.Karpenter.NodeClassObjects(), nil
}

// PatchEC2NodeClass implements kubeport.Port: the patched EC2NodeClass is
// applied to the twin, whose nodeclass controller resolves its AMIs at once.
func (p *Port) PatchEC2NodeClass(ctx context.Context, name string, pt types.PatchType, data []byte) (*awsv1.EC2NodeClass, error) {
	old, err := p.GetEC2NodeClass(ctx, name)
	if err != nil {
		return nil, err
	}
	nc := &awsv1.EC2NodeClass{}
	if err := kubeport.PatchCustomResource(name, pt, data, old, nc); err != nil {
		return nil, err
	}
	nc.Status = awsv1.EC2NodeClassStatus{} // the controller's to write
	if err := p.opts.Karpenter.ApplyNodeClass(nc); err != nil {
		return nil, invalid(nodeClassKind, name, err)
	}
	return p.GetEC2NodeClass(ctx, name)
}

// GetNodeClaim implements kubeport.Port.
func (p *Port) GetNodeClaim(_ context.Context, name string) (*karpv1.NodeClaim, error) {
	if err := p.karpenterCheck("get", kubeport.NodeClaims); err != nil {
		return nil, err
	}
	nc := p.opts.Karpenter.NodeClaimObject(name)
	if nc == nil {
		return nil, apierrors.NewNotFound(kubeport.NodeClaims.GroupResource(), name)
	}
	p.withClaimMeta(nc)
	return nc, nil
}

// ListNodeClaims implements kubeport.Port.
func (p *Port) ListNodeClaims(context.Context) ([]karpv1.NodeClaim, error) {
	if err := p.karpenterCheck("get", kubeport.NodeClaims); err != nil {
		return nil, err
	}
	claims := p.opts.Karpenter.NodeClaimObjects()
	for i := range claims {
		p.withClaimMeta(&claims[i])
	}
	return claims, nil
}

// PatchNodeClaim implements kubeport.Port. A NodeClaim's spec is
// immutable (upstream's CEL rule "spec is immutable"); its status is
// Karpenter's.
func (p *Port) PatchNodeClaim(ctx context.Context, name string, pt types.PatchType, data []byte) (*karpv1.NodeClaim, error) {
	old, err := p.GetNodeClaim(ctx, name)
	if err != nil {
		return nil, err
	}
	nc := &karpv1.NodeClaim{}
	if err := kubeport.PatchCustomResource(name, pt, data, old, nc); err != nil {
		return nil, err
	}
	if !sameJSON(nc.Spec, old.Spec) {
		return nil, apierrors.NewInvalid(nodeClaimKind, name, field.ErrorList{field.Invalid(field.NewPath("spec"), "object", "spec is immutable")})
	}
	if p.claimMeta == nil {
		p.claimMeta = map[string]claimMeta{}
	}
	m := p.claimMeta[name]
	m.labels = mapChange(m.labels, old.Labels, nc.Labels)
	m.annotations = mapChange(m.annotations, old.Annotations, nc.Annotations)
	p.claimMeta[name] = m
	return p.GetNodeClaim(ctx, name)
}

// sameJSON compares two values as the API server compares a patched
// object's fields: by their serialization (a JSON round trip may turn an
// empty list into none).
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// withClaimMeta applies the labels and annotations patches changed.
func (p *Port) withClaimMeta(nc *karpv1.NodeClaim) {
	m, ok := p.claimMeta[nc.Name]
	if !ok {
		return
	}
	nc.Labels = kubeport.ApplyMap(maps.Clone(nc.Labels), m.labels)
	nc.Annotations = kubeport.ApplyMap(maps.Clone(nc.Annotations), m.annotations)
}

// mapChange adds to change what turns before into after.
func mapChange(change map[string]*string, before, after map[string]string) map[string]*string {
	if change == nil {
		change = map[string]*string{}
	}
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			change[k] = &v
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			change[k] = nil
		}
	}
	return change
}

// invalid is the 422 the API server returns when validation (the CRD's
// schema and CEL rules, Karpenter's webhooks) refuses an object.
func invalid(kind schema.GroupKind, name string, err error) error {
	return apierrors.NewInvalid(kind, name, field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())})
}
