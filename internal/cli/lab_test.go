package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/lab"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// runLab runs `ladder lab ...` and returns the exit code, stdout and stderr.
func runLab(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"lab"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// Bad input is refused before anything is built or started: each case
// exits non-zero with one line naming the problem and its fix, and leaves
// no state behind. A cache directory without binaries proves no build ran
// (a build would take minutes, and write into it).
func TestLabBadInput(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	busy := strconv.Itoa(held.Addr().(*net.TCPAddr).Port)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown version", []string{"up", "--kubernetes", "1.20"}, `the lab cannot run Kubernetes "1.20": use one of 1.37, 1.36, 1.35`},
		{"unknown version to build", []string{"build", "--kubernetes", "2.0"}, `the lab cannot run Kubernetes "2.0"`},
		{"unknown scenario", []string{"up", "--scenario", "no-such-scenario"}, `"no-such-scenario" is neither a built-in scenario`},
		{"port out of range", []string{"up", "--port", "70000"}, "--port 70000 is not a TCP port: use 1-65535"},
		{"port in use", []string{"up", "--port", busy}, "kube-apiserver port " + busy + " on 127.0.0.1 is in use"},
		{"arguments", []string{"up", "extra"}, `unknown command "extra"`},
		{"time scale", []string{"up", "--scenario", "workshop", "--time-scale", "0"}, "--time-scale 0: give virtual seconds per wall-clock second, above 0"},
		{"time scale NaN", []string{"up", "--scenario", "workshop", "--time-scale", "NaN"}, "--time-scale NaN: give virtual seconds per wall-clock second, above 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, cache := t.TempDir(), t.TempDir()
			args := append(tc.args, "--cache-dir", cache)
			if tc.args[0] != "build" {
				args = append(args, "--dir", dir)
			}
			code, _, stderr := runLab(t, args...)
			if code == 0 {
				t.Fatalf("exit 0; want an error containing %q", tc.want)
			}
			if !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("stderr %q: want one line containing %q", stderr, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "lab.json")); !os.IsNotExist(err) {
				t.Errorf("lab.json written: %v", err)
			}
			if entries, _ := os.ReadDir(cache); len(entries) != 0 {
				t.Errorf("something was built into %s: %v", cache, entries)
			}
		})
	}
}

func TestLabStatusAndDownWithoutLab(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runLab(t, "status", "--dir", dir)
	if code != 1 || !strings.Contains(stderr, "no lab in "+dir+": start one with `ladder lab up --dir "+dir+"`") {
		t.Errorf("status: exit %d, %q", code, stderr)
	}
	code, stdout, stderr := runLab(t, "down", "--dir", dir)
	if code != 0 || !strings.Contains(stdout, "no lab in "+dir) || stderr != "" {
		t.Errorf("down: exit %d, %q, %q; want 0 and \"no lab in\"", code, stdout, stderr)
	}
}

// A lab whose processes are gone: status lists them as not running and
// says how to clean up; down cleans.
func TestLabStaleStatusAndDown(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` command:", err)
	}
	dir := t.TempDir()
	state := map[string]any{
		"kubernetes": "v1.37.2", "dir": dir, "server": "https://127.0.0.1:1",
		"kubeconfig": filepath.Join(dir, "kubeconfig"),
		"components": []map[string]any{
			{"name": "etcd", "pid": dead.Process.Pid, "binary": "/nonexistent/etcd", "ports": map[string]int{"client": 2379}},
			{"name": "kube-apiserver", "pid": dead.Process.Pid, "binary": "/nonexistent/kube-apiserver", "ports": map[string]int{"https": 6443}},
		},
	}
	data, _ := json.Marshal(state)
	if err := os.WriteFile(filepath.Join(dir, "lab.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runLab(t, "status", "--dir", dir)
	if code != 1 || !strings.Contains(stderr, "is stale: none of its processes runs; `ladder lab down --dir "+dir+"` cleans it") {
		t.Errorf("status: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"COMPONENT", "etcd", "client 2379", "kube-apiserver", "https 6443", "unhealthy: not running"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status output lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = runLab(t, "down", "--dir", dir)
	if code != 0 || !strings.Contains(stdout, "was stale") {
		t.Errorf("down: exit %d, %q, %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "lab.json")); !os.IsNotExist(err) {
		t.Errorf("lab.json left after down: %v", err)
	}
}

// The AWS endpoints of `lab up --scenario` get the scenario as the child,
// started in the lab's directory, finds it again: a built-in by name, a
// file by its absolute path; with the scenario's region and cluster.
func TestLabAWSOptions(t *testing.T) {
	sc := &scenario.Scenario{}
	sc.Spec.Cluster.Region, sc.Spec.Cluster.Name = "eu-west-1", "shop"
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"workshop":                  "workshop",
		"testdata/shop.yaml":        filepath.Join(wd, "testdata/shop.yaml"),
		filepath.Join(wd, "x.yaml"): filepath.Join(wd, "x.yaml"),
	} {
		got, err := labAWSOptions(arg, sc, 600)
		if err != nil {
			t.Fatal(err)
		}
		if *got != (lab.AWSOptions{Scenario: want, Region: "eu-west-1", Cluster: "shop", TimeScale: 600}) {
			t.Errorf("labAWSOptions(%q) = %+v, want scenario %s", arg, *got, want)
		}
	}
}
