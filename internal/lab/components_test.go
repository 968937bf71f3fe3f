package lab

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestControlPlaneFlags: kube-controller-manager and kube-scheduler each
// authenticate with their own kubeconfig and serve on their own port.
func TestControlPlaneFlags(t *testing.T) {
	l, p := layout{dir: "/lab"}, Ports{ControllerManager: 10257, Scheduler: 10259}
	for _, tc := range []struct {
		c    Component
		port string
	}{{ControllerManager, "10257"}, {Scheduler, "10259"}} {
		got := args(tc.c, l, p, nil)
		kc := filepath.Join("/lab", "pki", string(tc.c)+".kubeconfig")
		for _, want := range []string{"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc, "--secure-port=" + tc.port, "--leader-elect=false"} {
			if !slices.Contains(got, want) {
				t.Errorf("args(%s) = %v, missing %s", tc.c, got, want)
			}
		}
	}
	if got := args(ControllerManager, l, p, nil); !slices.Contains(got, "--use-service-account-credentials=true") {
		t.Errorf("args(ControllerManager) = %v, missing its own flags", got)
	}
}
