//go:build lab

package cli

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ladder-eks/ladder/internal/lab"
)

// `ladder lab up --scenario workshop` runs the real Karpenter as a lab
// component. The seed's Karpenter step, through the lab's own endpoints:
// aws-sdk-go-v2 updates the control plane to 1.31 (DescribeUpdate until
// Successful), then the EC2NodeClass's pinned alias is patched to
// al2023@latest — which Karpenter's EC2NodeClass controller resolves at
// the version the lab's EKS now reports — and Karpenter's own disruption
// controller drifts the NodePool's nodes: every original node replaced by
// one on the 1.31 AMI's kubelet, one at a time under the NodePool's
// default budget (10%: one node), no PodDisruptionBudget below its floor.
// `lab down` stops Karpenter with the rest.
func TestLabKarpenterDriftsAfterTheControlPlane(t *testing.T) {
	dir, st, _ := labWithAWS(t)
	var karpenterPID int
	var karpenterStarted time.Time
	for _, c := range st.Components {
		if c.Name == lab.Karpenter {
			karpenterPID, karpenterStarted = c.PID, c.Started
		}
	}
	if karpenterPID == 0 {
		t.Fatalf("no %s component in the lab: %+v", lab.Karpenter, st.Components)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	pool := metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"}
	nodes, err := cs.CoreV1().Nodes().List(ctx, pool)
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("the workshop's Karpenter nodes: %v, %v", nodes, err)
	}
	original := map[string]bool{}
	for _, n := range nodes.Items {
		original[n.Name] = true
		if v := n.Status.NodeInfo.KubeletVersion; !strings.HasPrefix(v, "v1.30.") {
			t.Fatalf("node %s starts at %s, want 1.30", n.Name, v)
		}
		// The scenario's node, materialized before Karpenter started: one
		// Karpenter launched since replaced it with nothing to drift for.
		if n.CreationTimestamp.After(karpenterStarted) {
			t.Errorf("node %s was created at %s, after Karpenter started (%s): Karpenter replaced the scenario's node before any change", n.Name, n.CreationTimestamp.UTC(), karpenterStarted)
		}
	}

	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	api := eks.NewFromConfig(awsCfg)
	cluster := st.Lab.AWS.Cluster
	up, err := api.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: &cluster, Version: aws.String("1.31")})
	if err != nil {
		t.Fatalf("UpdateClusterVersion: %v", err)
	}
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		u, err := api.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: &cluster, UpdateId: up.Update.Id})
		return err == nil && u.Update.Status == ekstypes.UpdateStatusSuccessful, nil
	}); err != nil {
		t.Fatalf("the control-plane update never succeeded: %v", err)
	}
	// Pinned, the class does not drift with the control plane: the seed
	// moves it to @latest for the upgrade.
	nodeClasses := dyn.Resource(schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"})
	if _, err := nodeClasses.Patch(ctx, "default", types.MergePatchType,
		[]byte(`{"spec":{"amiSelectorTerms":[{"alias":"al2023@latest"}]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching the EC2NodeClass: %v", err)
	}

	began := time.Now()
	mostDisrupting, replacements := 0, map[string]bool{}
	var below, early []string
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, pool)
		if err != nil {
			return false, nil
		}
		disrupting, left, newer := 0, 0, 0
		for _, n := range nodes.Items {
			if disrupted(n) {
				disrupting++
			}
			if original[n.Name] {
				left++
			} else {
				replacements[n.Name] = true
				switch v := n.Status.NodeInfo.KubeletVersion; {
				case strings.HasPrefix(v, "v1.31."):
					newer++
				case v != "" && !slices.Contains(early, n.Name):
					// Only the drift to 1.31 replaces nodes.
					early = append(early, n.Name)
				}
			}
		}
		mostDisrupting = max(mostDisrupting, disrupting)
		if pdbs, err := cs.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{}); err == nil {
			for _, p := range pdbs.Items {
				if p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy < p.Status.DesiredHealthy && p.Status.DisruptionsAllowed < 0 {
					below = append(below, p.Namespace+"/"+p.Name)
				}
			}
		}
		return left == 0 && newer == len(nodes.Items) && newer > 0, nil
	})
	t.Logf("Karpenter drifted %d nodes to %d replacements in %s, at most %d disrupting at once", len(original), len(replacements), time.Since(began).Round(time.Millisecond), mostDisrupting)
	if err != nil {
		t.Fatalf("the NodePool's nodes were not all replaced at 1.31: %v", err)
	}
	if mostDisrupting > 1 {
		t.Errorf("%d nodes disrupting at once, want one (the NodePool's default budget, 10%% of %d)", mostDisrupting, len(original))
	}
	if len(early) > 0 {
		t.Errorf("Karpenter replaced nodes with ones not at 1.31 (a drift before the control-plane update): %v", early)
	}
	if len(below) > 0 {
		t.Errorf("PodDisruptionBudgets exceeded: %v", below)
	}

	if code, stdout, stderr := runLab(t, "down", "--dir", dir); code != 0 || !strings.Contains(stdout, "stopped "+string(lab.Karpenter)) {
		t.Errorf("lab down: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// disrupted reports whether Karpenter has tainted the node for disruption.
func disrupted(n corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == "karpenter.sh/disrupted" {
			return true
		}
	}
	return false
}
