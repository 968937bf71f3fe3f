//go:build lab

package labserve

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ladder-eks/ladder/internal/twin/fargate"
)

// The workshop's Fargate step on the lab (workshop §6.5): with the control
// plane at 1.31, `kubectl rollout restart deployment/assets -n assets`; the
// restarted pod gets a new node of its own from the lab's Fargate
// scheduler — named fargate-ip-…, labelled with its profile and
// compute-type fargate, tainted, at the control plane's v1.31 kubelet —
// and is bound to it and Running; the old pod's node goes with it.
func TestFargateRestartOnTheLab(t *testing.T) {
	w := workshop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w.controlPlane131(ctx, t)
	sel := fargate.LabelComputeType + "=" + fargate.ComputeTypeFargate
	old := w.nodes(ctx, t, sel)
	if len(old) == 0 {
		t.Fatal("the workshop has no Fargate node on the lab")
	}
	began := time.Now()
	restart := `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"` + began.UTC().Format(time.RFC3339) + `"}}}}}`
	if _, err := w.cs.AppsV1().Deployments("assets").Patch(ctx, "assets", types.StrategicMergePatchType, []byte(restart), metav1.PatchOptions{}); err != nil {
		t.Fatalf("rollout restart: %v", err)
	}
	var pods []corev1.Pod
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := w.cs.CoreV1().Pods("assets").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pods = list.Items
		for _, p := range pods {
			if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || old[p.Spec.NodeName] != nil || p.Spec.NodeName == "" {
				return false, nil
			}
		}
		for name := range old {
			if _, err := w.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err == nil {
				return false, nil
			}
		}
		return len(pods) > 0, nil
	})
	if err != nil {
		t.Fatalf("the restarted assets pods never all ran on new Fargate nodes with the old ones gone: %v (%d pods)", err, len(pods))
	}
	t.Logf("assets restarted onto Fargate in %s", time.Since(began).Round(time.Millisecond))
	for _, p := range pods {
		n, err := w.cs.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %s's node %s: %v", p.Name, p.Spec.NodeName, err)
		}
		if !strings.HasPrefix(n.Name, "fargate-ip-") || n.Labels[fargate.LabelComputeType] != fargate.ComputeTypeFargate || n.Labels[fargate.LabelFargateProfile] == "" {
			t.Errorf("pod %s runs on %s with labels %v, want a Fargate node of its profile", p.Name, n.Name, n.Labels)
		}
		if v := n.Status.NodeInfo.KubeletVersion; !strings.HasPrefix(v, "v1.31.") {
			t.Errorf("Fargate node %s: kubelet %s, want the control plane's v1.31", n.Name, v)
		}
		tainted := false
		for _, taint := range n.Spec.Taints {
			tainted = tainted || taint.Key == fargate.LabelComputeType && taint.Effect == corev1.TaintEffectNoSchedule
		}
		if !tainted {
			t.Errorf("Fargate node %s lacks the compute-type NoSchedule taint: %v", n.Name, n.Spec.Taints)
		}
	}
}
