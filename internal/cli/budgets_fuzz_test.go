package cli

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/scenario"
)

// FuzzNodePoolBudgets runs `ladder budgets` on any NodePool manifest, at
// an instant and over a week's window (the changes walk every cron hit in
// it): each input is answered or refused with an error naming what is
// wrong, never a panic or a hang. Seeds: this package's NodePools, the
// built-in scenarios' karpenter.yaml files, and hostile budgets.
func FuzzNodePoolBudgets(f *testing.F) {
	f.Add([]byte(seedNodePool))
	f.Add([]byte(businessHoursNodePool))
	for _, name := range scenario.Builtins() {
		dir, err := scenario.BuiltinDir(name)
		if err != nil {
			f.Fatal(err)
		}
		if b, err := fs.ReadFile(dir, "manifests/karpenter.yaml"); err == nil {
			f.Add(b)
		}
	}
	for _, budgets := range []string{
		`[{nodes: "1", schedule: "@daily", duration: 1d}]`,
		`[{nodes: "150%"}, {nodes: "-1"}, {nodes: "abc", reasons: [Nope]}]`,
		`[{nodes: "0", schedule: "* * * * *", duration: 1m}, {nodes: "99999999999999999999"}]`,
		`[{nodes: "1", schedule: "0 0 31 2 *", duration: 8760h}]`,
	} {
		f.Add([]byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n  disruption:\n    budgets: " + budgets + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		var out, errOut bytes.Buffer
		root, _ := newRootCommand(&out, &errOut)
		root.SetIn(bytes.NewReader(data))
		root.SetArgs([]string{"budgets", "-f", "-", "--nodes", "10", "--disrupting", "1", "--at", "2024-01-01T00:00:00Z", "--window", "7d", "-o", "json"})
		if err := root.Execute(); err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("an empty error: %#v", err)
		}
	})
}
