package twinport

import (
	"context"
	"fmt"
	"testing"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport/conformance"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
)

// karpenterHarness gives each case a twin cluster running the Karpenter
// twin, wired as a rehearsal wires it, at Kubernetes 1.30.
type karpenterHarness struct{}

func (karpenterHarness) KnownDifferences() map[string]string { return nil }

func (karpenterHarness) NewKarpenterEnv(t *testing.T) conformance.KarpenterEnv {
	base := twintest.New(t0, 1)
	eng, c := base.Eng, base.Kube
	const ns = "conformance"
	if err := c.Apply(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	k := karpenter.New(eng, c, base.Cloud, karpenter.Options{
		ClusterName:         "conformance",
		InstanceTypes:       catalog.InstanceTypes(),
		Timings:             karpenter.DefaultTimings,
		ControlPlaneVersion: func() string { return "1.30" },
	})
	return &karpenterEnv{twinEnv: &twinEnv{Port: New(c, Options{Karpenter: k}), ns: ns}, k: k}
}

type karpenterEnv struct {
	*twinEnv
	k *karpenter.Karpenter
}

func (e *karpenterEnv) Apply(_ context.Context, obj metav1.Object) error {
	switch o := obj.(type) {
	case *karpv1.NodePool:
		return e.k.ApplyNodePool(o)
	case *awsv1.EC2NodeClass:
		return e.k.ApplyNodeClass(o)
	}
	return fmt.Errorf("the twin harness does not apply %T", obj)
}

// AMIs are two al2023 x86_64 releases for 1.30 in the embedded catalog.
func (e *karpenterEnv) AMIs() [2]string {
	return [2]string{"ami-0f676a166352f02ab", "ami-494fc372f10fe30ec"}
}

// TestKarpenterConformance runs the port's Karpenter suite on the twin.
func TestKarpenterConformance(t *testing.T) {
	conformance.RunKarpenter(t, karpenterHarness{})
}

// Without the Karpenter twin the port is a cluster without Karpenter's
// CRDs: every call is the API server's 404 for an unknown resource.
func TestKarpenterNotInstalled(t *testing.T) {
	p := New(kube.New(sim.New(t0, 1), kube.Options{}), Options{})
	_, err := p.ListNodePools(context.Background())
	if want := "the server could not find the requested resource (get nodepools.karpenter.sh)"; err == nil || err.Error() != want {
		t.Fatalf("ListNodePools without Karpenter: %v, want %q", err, want)
	}
}
