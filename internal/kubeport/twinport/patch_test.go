package twinport

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// A kind the twin keeps as applied and serves no read of is patched from
// Options.Applied and applied to the twin; without Applied it is
// NotFound, as an object the API server does not have.
func TestPatchAppliedKinds(t *testing.T) {
	ctx := context.Background()
	c := kube.New(sim.New(t0, 1), kube.Options{})
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	gp3 := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wait}
	if err := c.Apply(gp3); err != nil {
		t.Fatal(err)
	}
	applied := map[string]metav1.Object{"StorageClass/gp3": gp3}
	p := New(c, Options{Applied: func(kind, namespace, name string) metav1.Object {
		if o, ok := applied[kind+"/"+name]; ok && namespace == "" {
			return o
		}
		return nil
	}})
	classes := storagev1.SchemeGroupVersion.WithResource("storageclasses")
	u, err := p.Patch(ctx, classes, "", "gp3", types.MergePatchType, []byte(`{"metadata":{"annotations":{"storageclass.kubernetes.io/is-default-class":"true"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != "StorageClass" || u.GetAnnotations()["storageclass.kubernetes.io/is-default-class"] != "true" || u.Object["provisioner"] != "ebs.csi.aws.com" {
		t.Fatalf("patched StorageClass: %v", u.Object)
	}
	if _, err := p.Patch(ctx, corev1.SchemeGroupVersion.WithResource("namespaces"), "", "shop", types.MergePatchType, []byte(`{}`)); !apierrors.IsNotFound(err) {
		t.Fatalf("patch of a Namespace never applied: %v, want NotFound", err)
	}
	if _, err := New(c, Options{}).Patch(ctx, classes, "", "gp3", types.MergePatchType, []byte(`{}`)); !apierrors.IsNotFound(err) {
		t.Fatalf("without Applied: %v, want NotFound", err)
	}
}
