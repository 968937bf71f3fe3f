package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// A Release is the set of upstream versions one lab runs: a Kubernetes
// patch release and the etcd and KWOK that go with it. Its Key names the
// cache directory of its binaries; releases with the same etcd or kwok
// share those binaries (hard-linked, see builder.shared).
type Release struct {
	// Minor is what the user types: "1.37".
	Minor string
	// Kubernetes is the k8s.io/kubernetes module version: "v1.37.2".
	Kubernetes string
	// Etcd is the go.etcd.io/etcd/server/v3 module version.
	Etcd string
	// Kwok is the sigs.k8s.io/kwok module version.
	Kwok string
}

// Releases are the Kubernetes minors a lab can run. 1.37 is the version
// Ladder itself is built against (k8s.io/* v0.37.2 in go.mod); 1.36 is the
// minor before it and 1.35 the one before that, so a lab can stand where an
// upgrade starts and take two hops. All use etcd 3.6 (supported by each)
// and the same KWOK, whose binaries the releases share in the cache.
var Releases = []Release{
	{Minor: "1.37", Kubernetes: "v1.37.2", Etcd: "v3.6.16", Kwok: "v0.8.0"},
	{Minor: "1.36", Kubernetes: "v1.36.3", Etcd: "v3.6.16", Kwok: "v0.8.0"},
	{Minor: "1.35", Kubernetes: "v1.35.4", Etcd: "v3.6.16", Kwok: "v0.8.0"},
}

// DefaultMinor is the Kubernetes minor a lab runs when none is asked for.
const DefaultMinor = "1.37"

// LookupRelease finds the release of a Kubernetes minor ("1.37", "v1.37"
// or "1.37.2" all name the same release).
func LookupRelease(version string) (Release, error) {
	v := strings.TrimPrefix(strings.TrimSpace(version), "v")
	if v == "" {
		v = DefaultMinor
	}
	var known []string
	for _, r := range Releases {
		known = append(known, r.Minor)
		if v == r.Minor || "v"+v == r.Kubernetes {
			return r, nil
		}
	}
	return Release{}, fmt.Errorf("the lab cannot run Kubernetes %q: use one of %s", version, strings.Join(known, ", "))
}

// Key names the release's binaries in the cache:
// "k8s-v1.37.2_etcd-v3.6.16_kwok-v0.8.0".
func (r Release) Key() string {
	return "k8s-" + r.Kubernetes + "_etcd-" + r.Etcd + "_kwok-" + r.Kwok
}

// stagingVersion is the version the staging modules (k8s.io/api,
// k8s.io/client-go, ...) are published at for this Kubernetes release:
// v1.37.2 → v0.37.2.
func (r Release) stagingVersion() string {
	return "v0" + strings.TrimPrefix(r.Kubernetes, "v1")
}

// goModFile is the part of `go mod edit -json` that stagingModules reads.
type goModFile struct {
	Require []struct{ Path, Version string }
	Replace []struct {
		Old struct{ Path string }
		New struct{ Path, Version string }
	}
}

// stagingModules lists the modules that k8s.io/kubernetes's go.mod requires
// at v0.0.0 and replaces with its ./staging directories. A module that
// depends on k8s.io/kubernetes must replace exactly these with their
// published versions, or `go mod tidy` cannot resolve v0.0.0. Deriving the
// list from the release's own go.mod (fetched from the module proxy, without
// the source zip) keeps it right for every release instead of a list copied
// by hand.
func stagingModules(ctx context.Context, goCmd string, env []string, dir string, r Release) ([]string, error) {
	var info struct{ GoMod, Error string }
	if err := runJSON(ctx, goCmd, env, dir, &info, "list", "-m", "-json", "k8s.io/kubernetes@"+r.Kubernetes); err != nil {
		return nil, fmt.Errorf("fetching the go.mod of k8s.io/kubernetes@%s from the module proxy: %w", r.Kubernetes, err)
	}
	if info.GoMod == "" {
		return nil, fmt.Errorf("fetching the go.mod of k8s.io/kubernetes@%s: %s", r.Kubernetes, info.Error)
	}
	var mod goModFile
	if err := runJSON(ctx, goCmd, env, dir, &mod, "mod", "edit", "-json", info.GoMod); err != nil {
		return nil, fmt.Errorf("reading %s: %w", info.GoMod, err)
	}
	return stagingFromGoMod(mod), nil
}

// stagingFromGoMod is stagingModules' rule on a parsed go.mod.
func stagingFromGoMod(mod goModFile) []string {
	atZero := map[string]bool{}
	for _, req := range mod.Require {
		if req.Version == "v0.0.0" {
			atZero[req.Path] = true
		}
	}
	var out []string
	for _, rep := range mod.Replace {
		if strings.HasPrefix(rep.New.Path, "./staging/") && atZero[rep.Old.Path] {
			out = append(out, rep.Old.Path)
		}
	}
	sort.Strings(out)
	return out
}

// runJSON runs a go command and decodes its JSON output into v.
func runJSON(ctx context.Context, goCmd string, env []string, dir string, v any, args ...string) error {
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		return fmt.Errorf("go %s printed what is not JSON: %w", strings.Join(args, " "), err)
	}
	return nil
}
