//go:build unix

package lab

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/progress"
)

// fakeGo is a go command for Build's tests: it answers `go list -m` from
// the environment, hands `go mod edit -json` to the real go command, and
// "builds" a binary by writing a file, except the package named by
// FAKE_GO_FAIL, which fails as a compile error does. It logs every call.
const fakeGo = `#!/bin/sh
echo "$*" >> "$FAKE_GO_LOG"
case "$1 $2" in
"list -m")
	case "$4" in
	k8s.io/kubernetes@*) echo "{\"GoMod\": \"$FAKE_GOMOD\"}" ;;
	sigs.k8s.io/kwok) echo "{\"Dir\": \"$FAKE_KWOK_DIR\", \"Version\": \"v0.8.0\"}" ;;
	*) echo "unexpected go list $4" >&2; exit 1 ;;
	esac ;;
"mod edit") exec go mod edit -json "$4" ;;
"mod tidy") echo "go: finding module for package" ;;
"build -ldflags")
	out=$5; pkg=$6
	if [ "$pkg" = "$FAKE_GO_FAIL" ]; then
		echo "# $pkg"
		echo "vendor/thing/thing.go:12:3: undefined: Bar"
		echo "vendor/thing/thing.go:13:3: too many errors"
		exit 1
	fi
	echo "binary of $pkg built with $3" > "$out" ;;
*) echo "unexpected go $*" >&2; exit 1 ;;
esac
`

// kubernetesGoMod is the shape of k8s.io/kubernetes's go.mod: staging
// modules required at v0.0.0 and replaced by ./staging directories, one
// staging module it does not require, and ordinary requirements.
const kubernetesGoMod = `module k8s.io/kubernetes

go 1.26.0

require (
	github.com/spf13/cobra v1.10.0
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
	k8s.io/kubectl v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/kubectl => ./staging/src/k8s.io/kubectl
	k8s.io/sample-cli-plugin => ./staging/src/k8s.io/sample-cli-plugin
)
`

type fakeGoEnv struct {
	goCmd, cache, log string
}

func newFakeGo(t *testing.T) fakeGoEnv {
	t.Helper()
	dir := t.TempDir()
	env := fakeGoEnv{goCmd: filepath.Join(dir, "go"), cache: filepath.Join(dir, "cache"), log: filepath.Join(dir, "go.log")}
	if err := os.WriteFile(env.goCmd, []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	gomod := filepath.Join(dir, "kubernetes.mod")
	if err := os.WriteFile(gomod, []byte(kubernetesGoMod), 0o644); err != nil {
		t.Fatal(err)
	}
	kwok := filepath.Join(dir, "kwok")
	for i, f := range kwokStageFiles {
		path := filepath.Join(kwok, "kustomize", "stage", f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("---\nkind: Stage\nmetadata:\n  name: stage-"+string(rune('a'+i))+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("FAKE_GO_LOG", env.log)
	t.Setenv("FAKE_GOMOD", gomod)
	t.Setenv("FAKE_KWOK_DIR", kwok)
	return env
}

func (e fakeGoEnv) calls(t *testing.T) string {
	data, err := os.ReadFile(e.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// A failed build names the binary, shows the compiler's last lines and
// the full log; the binaries built before it are kept, and the next Build
// builds only what is missing; a complete cache runs no go command at all.
func TestBuild(t *testing.T) {
	env := newFakeGo(t)
	r := Releases[0]
	opts := BuildOptions{Release: r, CacheDir: env.cache, Go: env.goCmd}

	t.Setenv("FAKE_GO_FAIL", "k8s.io/kubernetes/cmd/kube-controller-manager")
	var out bytes.Buffer
	opts.Out = &out
	_, err := Build(context.Background(), opts)
	var be *BuildError
	if !errors.As(err, &be) || be.Step != string(ControllerManager) {
		t.Fatalf("Build: %v; want a BuildError of kube-controller-manager", err)
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	if !strings.HasPrefix(first, "building kube-controller-manager failed (exit status 1); full log: ") {
		t.Errorf("first line %q", first)
	}
	if !strings.Contains(err.Error(), "undefined: Bar") || !strings.Contains(err.Error(), "too many errors") {
		t.Errorf("error does not show the compiler's output:\n%v", err)
	}
	if log, _ := os.ReadFile(be.Log); !bytes.Contains(log, []byte("undefined: Bar")) {
		t.Errorf("the full log %s lacks the compiler output: %q", be.Log, log)
	}
	root := filepath.Join(env.cache, r.Key())
	b, missing, _ := Built(r, env.cache)
	if want := "kube-controller-manager kube-scheduler kwok kwok-stages.yaml"; strings.Join(missing, " ") != want {
		t.Errorf("missing after the failure: %v; want %s (etcd and kube-apiserver kept)", missing, want)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(root, "tmp-*")); len(leftovers) != 0 {
		t.Errorf("temporary build directories left: %v", leftovers)
	}

	// The wrapper module: the staging modules the release requires at
	// v0.0.0 pinned to v0.37.2, and nothing else replaced.
	gomod, err := os.ReadFile(filepath.Join(root, "src", "kubernetes", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	wantMod := `module ladder-lab/kubernetes

go 1.26.0

require k8s.io/kubernetes v1.37.2

replace (
	k8s.io/api => k8s.io/api v0.37.2
	k8s.io/client-go => k8s.io/client-go v0.37.2
	k8s.io/kubectl => k8s.io/kubectl v0.37.2
)
`
	if _, body, _ := strings.Cut(string(gomod), "Safe to delete.\n"); body != wantMod {
		t.Errorf("wrapper go.mod:\n%s\nwant:\n%s", gomod, wantMod)
	}
	tools, _ := os.ReadFile(filepath.Join(root, "src", "kubernetes", "tools.go"))
	for _, imp := range []string{`_ "k8s.io/kubernetes/cmd/kube-apiserver"`, `_ "k8s.io/kubernetes/cmd/kube-scheduler"`, "//go:build tools"} {
		if !bytes.Contains(tools, []byte(imp)) {
			t.Errorf("tools.go lacks %s:\n%s", imp, tools)
		}
	}
	apiserver, _ := os.ReadFile(b.Path(APIServer))
	for _, flag := range []string{"-s -w", "k8s.io/component-base/version.gitVersion=v1.37.2", "k8s.io/client-go/pkg/version.gitMinor=37"} {
		if !bytes.Contains(apiserver, []byte(flag)) {
			t.Errorf("kube-apiserver was not built with %s: %s", flag, apiserver)
		}
	}

	// The next build resumes, and clears what a killed build left.
	killed := filepath.Join(root, "tmp-killed")
	if err := os.MkdirAll(killed, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_GO_FAIL", "")
	before := env.calls(t)
	out.Reset()
	b, err = Build(context.Background(), opts)
	if err != nil {
		t.Fatalf("second Build: %v", err)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("the temporary directory of a killed build is still there: %v", err)
	}
	calls := strings.TrimPrefix(env.calls(t), before)
	if strings.Contains(calls, "go.etcd.io") || strings.Contains(calls, "cmd/kube-apiserver") {
		t.Errorf("the second build rebuilt what was there:\n%s", calls)
	}
	for _, c := range []Component{ControllerManager, Scheduler, Kwok} {
		if !strings.Contains(out.String(), "built "+string(c)+" in ") {
			t.Errorf("progress lacks %s:\n%s", c, out.String())
		}
	}
	if !strings.Contains(out.String(), "etcd v3.6.16: already built") {
		t.Errorf("progress does not say etcd was already built:\n%s", out.String())
	}
	stages, err := os.ReadFile(b.Stages())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sigs.k8s.io/kwok@v0.8.0", "Apache License 2.0", "# node/fast/node-initialize.yaml", "name: stage-a", "name: stage-e"} {
		if !bytes.Contains(stages, []byte(want)) {
			t.Errorf("stages file lacks %q:\n%s", want, stages)
		}
	}
	if n := bytes.Count(stages, []byte("\n---\n")); n != len(kwokStageFiles)-1 {
		t.Errorf("stages file has %d separators between documents, want %d:\n%s", n, len(kwokStageFiles)-1, stages)
	}

	// Complete: no go command runs, nothing is printed.
	before = env.calls(t)
	out.Reset()
	if _, err := Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if after := env.calls(t); after != before || out.Len() != 0 {
		t.Errorf("a complete cache ran go (%q) or printed %q", strings.TrimPrefix(after, before), out.String())
	}
}

// heartbeatSeen creates a file when the build says it is still running.
type heartbeatSeen struct {
	bytes.Buffer
	mark string
}

func (w *heartbeatSeen) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("still building kube-apiserver: ")) {
		os.WriteFile(w.mark, nil, 0o644)
	}
	return w.Buffer.Write(p)
}

func TestBuildHeartbeat(t *testing.T) {
	env := newFakeGo(t)
	// A kube-apiserver build that lasts until the heartbeat reports it
	// (or 20 seconds pass, and the test fails).
	mark := filepath.Join(t.TempDir(), "heartbeat")
	slow := env.goCmd + "-slow"
	script := `#!/bin/sh
case "$*" in *cmd/kube-apiserver*)
	i=0
	while [ ! -f "` + mark + `" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done ;;
esac
exec ` + env.goCmd + ` "$@"
`
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := &heartbeatSeen{mark: mark}
	_, err := Build(context.Background(), BuildOptions{Release: Releases[0], CacheDir: env.cache, Go: slow, Out: out, Heartbeat: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("no heartbeat while kube-apiserver built:\n%s", out.String())
	}
}

func TestBuildWithoutGo(t *testing.T) {
	_, err := Build(context.Background(), BuildOptions{Release: Releases[0], CacheDir: t.TempDir(), Go: "/nonexistent/go"})
	if err == nil || !strings.Contains(err.Error(), "needs the go command") {
		t.Errorf("Build: %v; want it to say the go command is needed", err)
	}
}

func TestStagingFromGoMod(t *testing.T) {
	var mod goModFile
	mod.Require = append(mod.Require,
		struct{ Path, Version string }{"k8s.io/api", "v0.0.0"},
		struct{ Path, Version string }{"k8s.io/utils", "v0.0.0-2026"},
		struct{ Path, Version string }{"k8s.io/other", "v0.0.0"}, // required but not staged
	)
	add := func(old, new string) {
		r := mod.Replace
		r = append(r, struct {
			Old struct{ Path string }
			New struct{ Path, Version string }
		}{})
		r[len(r)-1].Old.Path, r[len(r)-1].New.Path = old, new
		mod.Replace = r
	}
	add("k8s.io/api", "./staging/src/k8s.io/api")
	add("k8s.io/sample-cli-plugin", "./staging/src/k8s.io/sample-cli-plugin") // staged, not required
	add("github.com/x/y", "github.com/x/z")
	if got := strings.Join(stagingFromGoMod(mod), " "); got != "k8s.io/api" {
		t.Errorf("stagingFromGoMod = %q, want k8s.io/api", got)
	}
}

// A second Kubernetes minor reuses the etcd, kwok and KWOK stages of a
// release already in the cache with the same versions, in that release's
// own directory, and builds the Kubernetes binaries itself.
func TestBuildSharesEtcdAndKwok(t *testing.T) {
	cache := t.TempDir()
	r37, _ := LookupRelease("1.37")
	r36, _ := LookupRelease("1.36")
	old := filepath.Join(cache, r37.Key(), "bin")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{string(Etcd), string(Kwok), StagesFile, string(APIServer)} {
		if err := os.WriteFile(filepath.Join(old, f), []byte(f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bl := &builder{root: filepath.Join(cache, r36.Key()), release: r36}
	for _, f := range []string{string(Etcd), string(Kwok), StagesFile} {
		from := bl.shared(f)
		if from != filepath.Join(old, f) {
			t.Fatalf("shared(%s) = %q, want the 1.37 release's", f, from)
		}
		to := filepath.Join(bl.root, "bin", f)
		os.MkdirAll(filepath.Dir(to), 0o755)
		if err := linkOrCopy(from, to); err != nil {
			t.Fatal(err)
		}
		a, _ := os.Stat(from)
		b, err := os.Stat(to)
		if err != nil || !os.SameFile(a, b) {
			t.Errorf("%s is not hard-linked from the 1.37 release (%v)", f, err)
		}
	}
	if from := bl.shared(string(APIServer)); from != "" {
		t.Errorf("kube-apiserver of another Kubernetes version was reused: %s", from)
	}
	other := r36
	other.Etcd, other.Kwok = "v3.5.0", "v0.7.0"
	bl = &builder{root: filepath.Join(cache, other.Key()), release: other}
	if from := bl.shared(string(Etcd)) + bl.shared(string(Kwok)); from != "" {
		t.Errorf("a release with other etcd and kwok versions reused %s", from)
	}
	// The 1.37 release's directory is where it was: its binaries are found.
	if _, missing, _ := Built(r37, cache); strings.Join(missing, " ") != "kube-controller-manager kube-scheduler" {
		t.Errorf("the 1.37 release misses %v, want only the two it never had", missing)
	}
}

// TestBuildProgress: each module resolution and binary build is a step
// of the progress reporter, started and ended (failed with the build's
// error), in build order.
func TestBuildProgress(t *testing.T) {
	env := newFakeGo(t)
	r := Releases[0]
	t.Setenv("FAKE_GO_FAIL", "k8s.io/kubernetes/cmd/kube-controller-manager")
	var lines bytes.Buffer
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	rep := progress.New(progress.Options{Mode: progress.Plain, Out: &lines, Now: func() time.Time { return at }})
	if _, err := Build(context.Background(), BuildOptions{Release: r, CacheDir: env.cache, Go: env.goCmd, Progress: rep}); err == nil {
		t.Fatal("the build did not fail")
	}
	want := []string{
		"10:00:00  go mod tidy go.etcd.io/etcd/server/v3@" + r.Etcd + " started",
		"10:00:00  go mod tidy go.etcd.io/etcd/server/v3@" + r.Etcd + " done in 0s",
		"10:00:00  [1/5] go build etcd " + r.Etcd + " started",
		"10:00:00  [1/5] go build etcd " + r.Etcd + " done (0.0 MB) in 0s",
		"10:00:00  go mod tidy k8s.io/kubernetes@" + r.Kubernetes + " started",
		"10:00:00  go mod tidy k8s.io/kubernetes@" + r.Kubernetes + " done in 0s",
		"10:00:00  [2/5] go build kube-apiserver " + r.Kubernetes + " started",
		"10:00:00  [2/5] go build kube-apiserver " + r.Kubernetes + " done (0.0 MB) in 0s",
		"10:00:00  [3/5] go build kube-controller-manager " + r.Kubernetes + " started",
		"10:00:00  [3/5] go build kube-controller-manager " + r.Kubernetes + " failed after 0s: building kube-controller-manager failed (exit status 1); full log: ",
	}
	got := strings.Split(lines.String(), "\n")
	if len(got) < len(want) {
		t.Fatalf("progress:\n%s", lines.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("line %d: %q, want %q…", i+1, got[i], w)
		}
	}
}
