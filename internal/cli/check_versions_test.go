package cli

import (
	"strings"
	"testing"
)

// TestCheckAdditionalVersions: a pluto versions file grades custom
// resources by the component version it names; a bad file is one line
// naming file:line, the field and the fix, and exit 1.
func TestCheckAdditionalVersions(t *testing.T) {
	dir := t.TempDir()
	nodePool := writeCheckFile(t, dir, "nodepool.yaml", "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: default}\n")
	good := writeCheckFile(t, dir, "versions.yaml", "target-versions:\n  karpenter: v1.1.0\n")
	bad := writeCheckFile(t, dir, "bad.yaml", "target-versions:\n  karpenter: v1.1.0\ndeprecated-versions:\n  - version: karpenter.sh/v1beta1\n    kind: NodePool\n    removed-in: soon\n    component: karpenter\n")

	code, stdout, stderr := runLadder("check", "-f", nodePool, "--target", "1.31")
	if code != 0 || !strings.Contains(stdout, "WARNING") || !strings.Contains(stdout, "served only by Karpenter < v1.1.0") {
		t.Errorf("without a file: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runLadder("check", "-f", nodePool, "--target", "1.31", "--additional-versions", good)
	if code != 2 || !strings.Contains(stdout, "no longer served from Karpenter v1.1.0") {
		t.Errorf("with karpenter v1.1.0: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runLadder("check", "-f", nodePool, "--target", "1.31", "--additional-versions", bad)
	want := "error: --additional-versions " + bad + `:6: deprecated-versions[0].removed-in: "soon" is not a version; write it as v1.1.0 (or "" for none)` + "\n"
	if code != 1 || stderr != want {
		t.Errorf("bad file: exit %d, stderr %q; want %q", code, stderr, want)
	}
}
