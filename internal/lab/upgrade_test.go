//go:build unix

package lab

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRelease lays the fake binaries out in cacheDir as Build lays out a
// release's, and returns them.
func fakeRelease(t *testing.T, cacheDir, minor string) *Binaries {
	t.Helper()
	r, err := LookupRelease(minor)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeLab(t)
	b := &Binaries{Release: r, Dir: filepath.Join(cacheDir, r.Key(), "bin")}
	if err := os.MkdirAll(filepath.Dir(b.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fake.Dir, b.Dir); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUpgradeControlPlane(t *testing.T) {
	cache := t.TempDir()
	from := fakeRelease(t, cache, "1.36")
	to := fakeRelease(t, cache, "1.37")
	lb, _, err := up(t, Options{Binaries: from})
	if err != nil {
		t.Fatal(err)
	}
	dir := lb.Dir()
	before := lb.State
	var out bytes.Buffer
	if err := UpgradeControlPlane(context.Background(), dir, "1.37", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	st, err := readState(layout{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kubernetes != "v1.37.2" || st.Binaries != to.Dir {
		t.Errorf("lab.json says Kubernetes %s from %s, want v1.37.2 from %s", st.Kubernetes, st.Binaries, to.Dir)
	}
	if len(running(st)) != len(Components) {
		t.Errorf("%d of %d components run after the upgrade:\n%s", len(running(st)), len(Components), out.String())
	}
	for i, p := range st.Components {
		was := before.Components[i]
		if p.Name != was.Name {
			t.Errorf("component %d is %s, was %s: the start order changed", i, p.Name, was.Name)
		}
		replaced := p.Name == APIServer || p.Name == ControllerManager || p.Name == Scheduler
		if replaced == (p.PID == was.PID) {
			t.Errorf("%s: pid %d before, %d after; want a new process only for the control plane", p.Name, was.PID, p.PID)
		}
		if !maps.Equal(p.Ports, was.Ports) {
			t.Errorf("%s listens on %v, was %v", p.Name, p.Ports, was.Ports)
		}
	}
	if st.Server != before.Server {
		t.Errorf("the server moved from %s to %s", before.Server, st.Server)
	}
	// A second hop has no release to go to.
	if err := UpgradeControlPlane(context.Background(), dir, "1.38", nil); err == nil {
		t.Error("an upgrade to an unknown minor was accepted")
	}
}

func TestUpgradeControlPlaneRefusals(t *testing.T) {
	cache := t.TempDir()
	from := fakeRelease(t, cache, "1.36")
	lb, _, err := up(t, Options{Binaries: from})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, version, want string
	}{
		{"not built", lb.Dir(), "1.37", "the lab binaries of Kubernetes v1.37.2 are not built (missing etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, kwok-stages.yaml): run `ladder lab build --kubernetes 1.37`"},
		{"same minor", lb.Dir(), "1.36", "a control plane upgrades one minor at a time: the next is 1.37, not 1.36"},
		{"two minors", lb.Dir(), "1.35", "the next is 1.37, not 1.35"},
		{"unknown", lb.Dir(), "1.99", `the lab cannot run Kubernetes "1.99"`},
		{"no lab", t.TempDir(), "1.37", "no lab runs in "},
		{"no directory", filepath.Join(t.TempDir(), "none"), "1.37", "no lab runs in "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := UpgradeControlPlane(context.Background(), tc.dir, tc.version, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line with %q", err, tc.want)
			}
		})
	}
	// A lab whose processes are gone is not upgraded.
	if err := Down(context.Background(), DownOptions{Dir: lb.Dir()}); err != nil {
		t.Fatal(err)
	}
	st := lb.State
	if err := writeState(layout{dir: lb.Dir()}, &st); err != nil {
		t.Fatal(err)
	}
	fakeRelease(t, cache, "1.37")
	err = UpgradeControlPlane(context.Background(), lb.Dir(), "1.37", nil)
	if err == nil || !strings.Contains(err.Error(), "is not running (5 of its 5 processes are gone)") {
		t.Errorf("got %v for a stopped lab", err)
	}
}
