package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

func describe(p Plan) string {
	var b strings.Builder
	for _, h := range p.Hops {
		fmt.Fprintf(&b, "hop %s→%s:", h.From, h.To)
		for _, s := range h.Steps {
			switch s.Kind {
			case PreChecks, ControlPlane:
				fmt.Fprintf(&b, " %s", s.Kind)
			case AddonUpdate:
				fmt.Fprintf(&b, " %s %s→%s", s.Name, s.From, s.To)
			case NodeGroup:
				fmt.Fprintf(&b, " %s(%s)", s.Name, s.Strategy)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestMake: one hop per minor, each with pre-checks, the control plane, the
// add-ons that change and every node group with its strategy, in the given
// order then inventory order (workshop §4-§7; semantics.md §E: one minor at
// a time). Add-on targets come from the embedded table (kube-proxy 1.31:
// v1.31.14-eksbuild.20, 1.32: v1.32.13-eksbuild.16) or the scenario's pins;
// vpc-cni is at its 1.30-1.33 latest already, so it has no step.
func TestMake(t *testing.T) {
	inv := Inventory{
		ControlPlane: kubeversion.MustParse("1.30"),
		Addons: []Addon{
			{Name: "kube-proxy", Version: "v1.30.14-eksbuild.28"},
			{Name: "vpc-cni", Version: "v1.20.1-eksbuild.3"},
			{Name: "aws-ebs-csi-driver", Version: "v1.35.0-eksbuild.1", Pins: map[string]string{"1.31": "v1.37.0-eksbuild.1"}},
		},
		Groups: []Group{
			{Name: "initial", Type: "managed", Strategy: "in-place"},
			{Name: "blue-mng", Type: "managed", Strategy: "blue-green"},
			{Name: "default", Type: "karpenter", Strategy: "drift"},
			{Name: "legacy", Type: "managed", Strategy: None},
		},
	}
	p, err := Make(inv, kubeversion.MustParse("1.32"), []string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	want := "hop 1.30→1.31: pre-checks control-plane kube-proxy v1.30.14-eksbuild.28→v1.31.14-eksbuild.20 aws-ebs-csi-driver v1.35.0-eksbuild.1→v1.37.0-eksbuild.1 default(drift) initial(in-place) blue-mng(blue-green)\n" +
		"hop 1.31→1.32: pre-checks control-plane kube-proxy v1.31.14-eksbuild.20→v1.32.13-eksbuild.16 aws-ebs-csi-driver v1.37.0-eksbuild.1→v1.37.0-eksbuild.1 default(drift) initial(in-place) blue-mng(blue-green)\n"
	if got := describe(p); got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
	// The EBS CSI driver has no table and no 1.32 pin: the step says so.
	var note string
	for _, s := range p.Hops[1].Steps {
		if s.Name == "aws-ebs-csi-driver" {
			note = s.Note
		}
	}
	if !strings.Contains(note, "has no aws-ebs-csi-driver version for Kubernetes 1.32; pin one in spec.addons[].versions") {
		t.Errorf("note = %q", note)
	}
}

func TestMakeRefuses(t *testing.T) {
	inv := Inventory{ControlPlane: kubeversion.MustParse("1.31"), Groups: []Group{{Name: "a", Strategy: "in-place"}}}
	cases := []struct {
		target string
		order  []string
		want   string
	}{
		{"1.31", nil, "target 1.31 is not newer than the control plane's 1.31"},
		{"1.30", nil, "not newer"},
		{"1.32", []string{"b"}, `order names "b", which is not a node group`},
		{"1.32", []string{"a", "a"}, `order names "a" twice`},
	}
	for _, tc := range cases {
		if _, err := Make(inv, kubeversion.MustParse(tc.target), tc.order); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Make(%s, %v) err = %v, want %q", tc.target, tc.order, err, tc.want)
		}
	}
}
