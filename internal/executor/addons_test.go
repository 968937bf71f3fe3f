package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// TestUpdateAddon: coredns v1.11.1-eksbuild.8 → v1.11.3-eksbuild.1. The
// executor names the image the version brings, calls UpdateAddon (which
// here sets it on the Deployment, as EKS does) and ends the step when
// kubectl rollout status would say the Deployment rolled out — 15 s later:
// a surge of one pod (25% of 2, rounded up) and none unavailable, so the
// two new pods start one after the other and the last old one terminates —
// and only then is the add-on at its new version. An add-on whose workload is missing is
// refused before UpdateAddon.
func TestUpdateAddon(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	ex, api := executor(t, rec, time.Hour)
	c := ex.Ports.Kube.(interface{ Cluster() *kube.Cluster }).Cluster()
	if err := c.Apply(coredns("v1.11.1-eksbuild.8")); err != nil {
		t.Fatal(err)
	}
	dns := kubeport.RolloutsComplete{Workloads: []kubeport.Workload{{Kind: "Deployment", Namespace: "kube-system", Name: "coredns"}}}
	rolledOut := dns.Condition(ex.Ports.Kube)
	if err := ex.Ports.Kube.Wait(ctx, time.Minute, rolledOut); err != nil {
		t.Fatal(err)
	}
	api.applyAddon = func(version string) error { return c.Apply(coredns(version)) }
	rec.start, rec.lines = ex.Ports.Kube.Now(), nil

	err := ex.UpdateAddon(ctx, plan.Step{Kind: plan.AddonUpdate, Name: "coredns", From: "v1.11.1-eksbuild.8", To: "v1.11.3-eksbuild.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"  0s event Normal AddonUpdating: add-on coredns: v1.11.1-eksbuild.8 → v1.11.3-eksbuild.1 (UpdateAddon; images " + corednsImage + "v1.11.3-eksbuild.1)",
		" 15s add-on coredns at v1.11.3-eksbuild.1 ()",
		" 15s event Normal AddonUpdated: add-on coredns is v1.11.3-eksbuild.1: deployment kube-system/coredns rolled out",
	}
	if got := strings.Join(rec.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if done, err := rolledOut(ctx); !done || err != nil {
		t.Errorf("after the step, kubectl's rollout rules on the Deployment's status say done=%v (%v), want done", done, err)
	}

	err = ex.UpdateAddon(ctx, plan.Step{Kind: plan.AddonUpdate, Name: "vpc-cni", From: "v1.19.0-eksbuild.1", To: "v1.19.2-eksbuild.1"})
	if want := "add-on vpc-cni: DaemonSet kube-system/aws-node was not applied"; fmt.Sprint(err) != want {
		t.Errorf("vpc-cni without aws-node: %v, want %s", err, want)
	}
}
