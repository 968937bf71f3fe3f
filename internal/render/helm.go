package render

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/getter"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// HelmOptions are the `helm template` flags a chart is rendered with.
type HelmOptions struct {
	ValuesFiles []string // --values, merged in order over the chart's values.yaml
	Set         []string // --set key=value, applied after the files (Helm's strvals syntax)
	KubeVersion string   // --kube-version: .Capabilities.KubeVersion, e.g. "1.32"; Helm's default when empty
	ReleaseName string   // "release-name" when empty, as `helm template`
	Namespace   string   // "default" when empty, as `helm template` without a kubeconfig
	// APIVersions are .Capabilities.APIVersions, exactly: "group/version"
	// and "group/version/Kind" entries, as a cluster's discovery gives
	// them; Helm's default set when nil.
	APIVersions []string
}

// renderHelm renders the chart in dir as `helm template` does
// (helm.sh/helm/v4/pkg/cmd/template.go): Helm's install action in
// client-only dry-run mode, Helm's default capabilities with KubeVersion and
// APIVersions (when given) replaced by the target's (installWithCapabilities),
// release name "release-name", no cluster, no repository, no network.
//
// Docs are the release manifest then its hooks, in Helm's order, except test
// hooks (`helm.sh/hook: test`, or Helm 2's test-success): they run only
// under `helm test`, are never part of the release's workloads, and would be
// judged as workloads otherwise. Each Doc's File is the template it came from
// (Helm's "# Source:" line) under dir.
//
// A chart that does not load, a missing dependency and a template that does
// not execute are Problems; Literals then hold the literal apiVersion/kind
// pairs of every template, and on a successful render those of the
// templates that produced no object (disabled by values, or a version branch
// not taken), so a removed API in the sources is still found.
func renderHelm(dir string, opts HelmOptions) (Result, error) {
	chartFile := filepath.Join(dir, "Chart.yaml")
	if !isRegular(chartFile) {
		return Result{}, fmt.Errorf("%s: no Chart.yaml", dir)
	}
	vals, err := helmValues(opts)
	if err != nil {
		return Result{}, err
	}
	var kubeVersion *common.KubeVersion
	if opts.KubeVersion != "" {
		if kubeVersion, err = common.ParseKubeVersion(opts.KubeVersion); err != nil {
			return Result{}, fmt.Errorf("--kube-version %q: %w (want a version like 1.32)", opts.KubeVersion, err)
		}
	}

	tree, problem := scanChart(dir)
	caps := targetCapabilities(kubeVersion, opts.APIVersions)
	if kubeVersion != nil {
		tree.decide = capabilityDecider(caps)
	}
	out := Result{Consumed: tree.consumed.sorted()}
	if problem != nil {
		out.Problems = []Problem{*problem}
		out.Literals = tree.literals(nil)
		return out, nil
	}

	ch, err := loadChart(tree.files)
	if err != nil {
		out.Problems = []Problem{{File: chartFile, Line: 1,
			Message: "helm cannot load the chart: " + oneLine(err.Error()),
			Fix:     fmt.Sprintf("make `helm template %s` succeed", dir)}}
		out.Literals = tree.literals(nil)
		return out, nil
	}
	ac, err := chart.NewAccessor(ch)
	if err != nil {
		return Result{}, err
	}
	if t, _ := ac.MetadataAsMap()["Type"].(string); t != "" && t != "application" {
		// A library chart only defines templates for other charts; Helm
		// refuses to install it (cmd/install.go checkIfInstallable).
		return out, nil
	}
	if deps := ac.MetaDependencies(); len(deps) > 0 {
		if err := action.CheckDependencies(ch, deps); err != nil {
			out.Problems = []Problem{{File: chartFile, Line: missingDependencyLine(chartFile, err.Error()),
				Message: "helm template not run: " + oneLine(err.Error()) + " (ladder fetches no chart repository)",
				Fix:     fmt.Sprintf("run `helm dependency build %s` to fetch them into charts/, then check again", dir),
				Warning: true}}
			out.Literals = tree.literals(nil)
			return out, nil
		}
	}

	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.DiscardHandler)
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = orDefault(opts.ReleaseName, "release-name")
	install.Namespace = orDefault(opts.Namespace, "default")
	install.Replace = true // `helm template` skips the name check
	install.KubeVersion = kubeVersion
	if p, ok := schemaNotFetched(dir, ch); ok {
		install.SkipSchemaValidation = true
		out.Problems = append(out.Problems, p)
	}
	rel, err := installWithCapabilities(context.Background(), install, ch, vals, caps)
	if err != nil {
		out.Problems = []Problem{templateProblem(dir, chartFile, err)}
		out.Literals = tree.literals(nil)
		return out, nil
	}
	r, ok := rel.(*release.Release)
	if !ok {
		return Result{}, fmt.Errorf("helm returned a %T, not a release", rel)
	}
	rendered := helmDocs(dir, r)
	out.Docs = rendered.docs
	out.Literals = tree.literals(rendered.sources)
	return out, nil
}

// helmValues merges the values files and --set values as `helm template`
// does (cli/values.Options.MergeValues), after checking that each file is
// local, regular and under MaxFileBytes; no getter is offered, so nothing is
// fetched.
func helmValues(opts HelmOptions) (map[string]any, error) {
	for _, f := range opts.ValuesFiles {
		if strings.TrimSpace(f) == "-" || strings.Contains(f, "://") {
			return nil, fmt.Errorf("--values %s: ladder reads values files from disk only; save it to a file", f)
		}
		if _, err := readCapped(f); err != nil {
			return nil, fmt.Errorf("--values %s: %w", f, err)
		}
	}
	v := values.Options{ValueFiles: opts.ValuesFiles, Values: opts.Set}
	vals, err := v.MergeValues(getter.Providers{})
	if err != nil {
		return nil, fmt.Errorf("helm values: %w", err)
	}
	return vals, nil
}

// isTestHook is `helm template`'s own test (cmd/template.go isTestHook):
// Helm parsed the hook annotation into Events, mapping Helm 2's
// "test-success" to "test" (release/v1/util/manifest_sorter.go).
func isTestHook(h *release.Hook) bool {
	return slices.Contains(h.Events, release.HookTest)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const maxLen = 400
	if len(s) > maxLen {
		s = s[:maxLen] + "…"
	}
	return s
}

// missingDependencyLine is the line of Chart.yaml naming the last dependency
// Helm's error names ("missing in charts/ directory: a, b"), or the line of
// "dependencies:".
func missingDependencyLine(chartFile, msg string) int {
	_, names, ok := strings.Cut(msg, "directory: ")
	if ok {
		for _, n := range strings.Split(names, ",") {
			if l := lineContaining(chartFile, "name: "+strings.TrimSpace(n)); l > 1 {
				return l
			}
		}
	}
	return lineContaining(chartFile, "dependencies:")
}
