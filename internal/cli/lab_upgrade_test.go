package cli

import (
	"strings"
	"testing"
)

// upgrade-control-plane refuses, in one line, what it cannot do; the lab
// package tests the upgrade itself.
func TestLabUpgradeControlPlaneRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", dir}, "--to is required: the minor to upgrade to, one of 1.37 (v1.37.2), 1.36 (v1.36.3), 1.35 (v1.35.4)"},
		{[]string{"--dir", dir, "--to", "1.37"}, "no lab runs in " + dir + ": start one with `ladder lab up`"},
	} {
		code, _, stderr := runLab(t, append([]string{"upgrade-control-plane"}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
