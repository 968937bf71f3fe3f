package twinport

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// Patch by resource, as kubectl patch sends it through the dynamic client.
// Workloads and Karpenter's objects go through their own patches; every
// other kind the twin stores is read from the twin (or, for the kinds it
// keeps as applied and serves no read of, from Options.Applied), patched
// as the API server patches it (kubeport.PatchObject), stripped of the
// status a patch does not write and applied to the twin as the API server
// stores an update.

// Patch implements kubeport.Port.
func (p *Port) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	var obj runtime.Object
	var err error
	kind := ""
	switch gvr {
	case appsv1.SchemeGroupVersion.WithResource("deployments"):
		kind = "Deployment"
		obj, err = p.PatchDeployment(ctx, namespace, name, pt, data)
	case appsv1.SchemeGroupVersion.WithResource("statefulsets"):
		kind = "StatefulSet"
		obj, err = p.PatchStatefulSet(ctx, namespace, name, pt, data)
	case appsv1.SchemeGroupVersion.WithResource("daemonsets"):
		kind = "DaemonSet"
		obj, err = p.PatchDaemonSet(ctx, namespace, name, pt, data)
	case kubeport.NodePools:
		kind = nodePoolKind.Kind
		obj, err = p.PatchNodePool(ctx, name, pt, data)
	case kubeport.EC2NodeClasses:
		kind = nodeClassKind.Kind
		obj, err = p.PatchEC2NodeClass(ctx, name, pt, data)
	case kubeport.NodeClaims:
		kind = nodeClaimKind.Kind
		obj, err = p.PatchNodeClaim(ctx, name, pt, data)
	default:
		sk, ok := storedKinds[gvr]
		if !ok {
			return nil, kubeport.NotInstalled("patch", gvr)
		}
		kind = sk.kind
		obj, err = p.patchStored(sk, gvr, namespace, name, pt, data)
	}
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	return u, nil
}

// patchStored patches an object of a kind the twin stores as applied, and
// reads it back.
func (p *Port) patchStored(sk storedKind, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (runtime.Object, error) {
	old := sk.get(p, namespace, name)
	if old == nil {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	patched := sk.new()
	if err := kubeport.PatchObject(name, pt, data, old, patched); err != nil {
		return nil, err
	}
	if patched.GetNamespace() != namespace {
		return nil, apierrors.NewBadRequest("the namespace of the object (" + patched.GetNamespace() + ") does not match the namespace on the URL (" + namespace + ")")
	}
	if sk.clearStatus != nil {
		sk.clearStatus(patched)
	}
	if err := p.c.Apply(patched); err != nil {
		return nil, invalid(schema.GroupKind{Group: gvr.Group, Kind: sk.kind}, name, err)
	}
	if !sk.asApplied {
		if got := sk.get(p, namespace, name); got != nil {
			return got.(runtime.Object), nil
		}
	}
	return patched.(runtime.Object), nil
}
