package scenario

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// The fuzz targets of the scenario input paths. Each is seeded with the
// repository's own files (the built-in scenarios and their manifests) and
// hostile cases; `make test` runs each briefly. Neither Parse nor Validate
// runs the twin, and inputs are bounded in size, so no input can take long.

// maxFuzzInput bounds one input: larger ones test the YAML parser's speed,
// not Ladder.
const maxFuzzInput = 1 << 20

// builtinFiles returns every file of the built-in scenarios whose path
// matches keep.
func builtinFiles(t testing.TB, keep func(path string) bool) [][]byte {
	var out [][]byte
	err := fs.WalkDir(builtinFS, "builtin", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !keep(p) {
			return err
		}
		b, err := builtinFS.ReadFile(p)
		out = append(out, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzScenarioFile parses and validates a scenario document, its manifests
// read from the workshop's directory: every input is either accepted or
// refused with errors, never a panic.
func FuzzScenarioFile(f *testing.F) {
	for _, b := range builtinFiles(f, func(p string) bool { return strings.HasSuffix(p, "/scenario.yaml") }) {
		f.Add(b)
	}
	for _, s := range []string{
		"apiVersion: ladder.dev/v1alpha1\nkind: Scenario\n---\nkind: Scenario\n",
		"spec:\n  nodeGroups:\n    - {name: a, type: karpenter, karpenter: {nodePool: default, nodes: [{instanceType: m5.large, zone: us-west-2a, count: 100000000}]}}\n",
		"spec:\n  manifests: [{file: ../../etc/passwd}, {file: /etc/passwd}, {inline: \"kind: List\\nitems: [[]]\"}]\n",
		"spec:\n  timeLimit: 1000000h\n  actions: [{wait: {for: 1000000h}}, {patch: {kind: NodePool, name: default, type: json, patch: {}}}]\n",
		"spec:\n  seed: 1\n  seed: 1\n  seed: 1\n",
	} {
		f.Add([]byte(s))
	}
	dir, err := BuiltinDir("workshop")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzInput {
			return
		}
		sc, err := Parse("fuzz.yaml", data, dir)
		if err != nil {
			oneLineEach(t, err)
			return
		}
		if _, err := sc.Validate(); err != nil {
			oneLineEach(t, err)
		}
	})
}

// FuzzScenarioManifests decodes a manifest file and validates it inside a
// scenario that names it: every document is decoded strictly and checked as
// the API server and the twin would, without a panic.
func FuzzScenarioManifests(f *testing.F) {
	for _, b := range builtinFiles(f, func(p string) bool { return strings.Contains(p, "/manifests/") }) {
		f.Add(b)
	}
	for _, s := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: -3, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: a, resources: {requests: {cpu: 1zz}}}]}}}\n",
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: a}\nspec: {minAvailable: \"150%\", maxUnavailable: -1}\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: [{}]\n",
		"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec: {disruption: {budgets: [{nodes: \"1\", schedule: \"@daily\", duration: 1d}]}}\n",
	} {
		f.Add([]byte(s))
	}
	base, err := BuiltinSource("karpenter-drift")
	if err != nil {
		f.Fatal(err)
	}
	dir, err := BuiltinDir("karpenter-drift")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzInput {
			return
		}
		objs, err := manifest.Decode("fuzz.yaml", data)
		if err != nil {
			oneLineEach(t, err)
		}
		for _, o := range objs {
			if err := manifest.ValidateSpec(o); err != nil {
				oneLineEach(t, err)
			}
		}
		// The same file as a fourth manifest of the karpenter-drift scenario.
		files := fstest.MapFS{"fuzz.yaml": {Data: data}}
		for _, name := range []string{"manifests/kube-system.yaml", "manifests/checkout.yaml", "manifests/karpenter.yaml"} {
			b, _ := fs.ReadFile(dir, name)
			files[name] = &fstest.MapFile{Data: b}
		}
		src := strings.Replace(string(base), "  manifests:\n", "  manifests:\n    - file: fuzz.yaml\n", 1)
		sc, err := Parse("fuzz-scenario.yaml", []byte(src), files)
		if err != nil {
			oneLineEach(t, err)
			return
		}
		if _, err := sc.Validate(); err != nil {
			oneLineEach(t, err)
		}
	})
}

// oneLineEach fails on an error that says nothing: every refusal names
// what is wrong.
func oneLineEach(t *testing.T, err error) {
	t.Helper()
	if strings.TrimSpace(err.Error()) == "" {
		t.Fatalf("an empty error: %#v", err)
	}
}
