package render

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests below build charts the way an attacker would: links and
// dependencies that reach for files outside the chart, and templates that
// never end, print without end, allocate without end or recurse without
// end. Each must cost ladder a Problem naming the budget or the link, and
// the test process (the parent) must survive to check the next chart.

// withBudget shrinks the render budgets for one test.
func withBudget(t *testing.T, change func(*budget)) {
	t.Helper()
	saved := budgets
	change(&budgets)
	t.Cleanup(func() { budgets = saved })
}

// secretOutside writes a file outside any chart, the way /etc/passwd is,
// and returns its path and content.
func secretOutside(t *testing.T) (string, string) {
	t.Helper()
	secret := "s3cr3t-" + t.Name()
	path := filepath.Join(t.TempDir(), "secret")
	write(t, path, secret+"\n")
	return path, secret
}

// leakChart is a chart whose one template prints the file at name through
// .Files.Get and every file .Files.Glob finds.
func leakChart(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "leak")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "Chart.yaml"), "apiVersion: v2\nname: leak\nversion: 0.1.0\n")
	write(t, filepath.Join(dir, "templates", "cm.yaml"), fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: leak
data:
  get: {{ .Files.Get %q | quote }}
  {{- range $path, $_ := .Files.Glob "**" }}
  {{ $path | sha256sum | trunc 8 }}: {{ $.Files.Get $path | quote }}
  {{- end }}
`, name))
	return dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
}

// leaked reports whether any rendered object holds secret.
func leaked(res Result, secret string) bool {
	for _, d := range res.Docs {
		if strings.Contains(string(d.Body), secret) {
			return true
		}
	}
	return false
}

func TestHelmReadsOnlyTheChartDirectory(t *testing.T) {
	t.Run("a file linked from outside the chart is refused", func(t *testing.T) {
		path, secret := secretOutside(t)
		dir := leakChart(t, "files/passwd")
		symlink(t, path, filepath.Join(dir, "files", "passwd"))
		res, err := Helm(dir, HelmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if leaked(res, secret) {
			t.Fatal("the chart printed a file from outside its directory")
		}
		if len(res.Problems) != 1 || res.Problems[0].File != filepath.Join(dir, "files", "passwd") ||
			!strings.Contains(res.Problems[0].Message, "outside the chart") {
			t.Fatalf("problems = %v, want one at the link saying it leads outside the chart", res.Problems)
		}
	})
	t.Run("/etc/passwd linked into the chart is refused", func(t *testing.T) {
		if _, err := os.Stat("/etc/passwd"); err != nil {
			t.Skip(err)
		}
		dir := leakChart(t, "passwd")
		symlink(t, "/etc/passwd", filepath.Join(dir, "passwd"))
		res, err := Helm(dir, HelmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if leaked(res, "root:") || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "/etc/passwd") {
			t.Fatalf("problems = %v, docs %d: want the link refused", res.Problems, len(res.Docs))
		}
	})
	t.Run("a directory linked from outside the chart is refused", func(t *testing.T) {
		path, secret := secretOutside(t)
		dir := leakChart(t, "files/secret")
		symlink(t, filepath.Dir(path), filepath.Join(dir, "files"))
		res, _ := Helm(dir, HelmOptions{})
		if leaked(res, secret) || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "outside the chart") {
			t.Fatalf("problems = %v: want the linked directory refused", res.Problems)
		}
	})
	t.Run(".Files.Get of a path above the chart reads nothing", func(t *testing.T) {
		path, secret := secretOutside(t)
		dir := leakChart(t, "")
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "templates", "cm.yaml"), fmt.Sprintf(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leak\ndata:\n  a: {{ .Files.Get %q | quote }}\n  b: {{ .Files.Get %q | quote }}\n", rel, path))
		res, err := Helm(dir, HelmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 0 || len(res.Docs) != 1 || leaked(res, secret) {
			t.Fatalf("problems %v, docs %d, leaked %v: want the ConfigMap rendered with empty data", res.Problems, len(res.Docs), leaked(res, secret))
		}
	})
	t.Run("a subchart linked into charts/ from outside is refused", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other")
		write2(t, filepath.Join(other, "Chart.yaml"), "apiVersion: v2\nname: other\nversion: 0.1.0\n")
		write2(t, filepath.Join(other, "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-outside\n")
		dir := leakChart(t, "")
		symlink(t, other, filepath.Join(dir, "charts", "other"))
		res, _ := Helm(dir, HelmOptions{})
		if leaked(res, "from-outside") || len(res.Problems) != 1 || res.Problems[0].File != filepath.Join(dir, "charts", "other") ||
			!strings.Contains(res.Problems[0].Fix, "charts/") {
			t.Fatalf("problems = %v: want the linked subchart refused", res.Problems)
		}
	})
	t.Run("a file:// dependency outside the chart is not read", func(t *testing.T) {
		parent := t.TempDir()
		write2(t, filepath.Join(parent, "other", "Chart.yaml"), "apiVersion: v2\nname: other\nversion: 0.1.0\n")
		write2(t, filepath.Join(parent, "other", "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-outside\n")
		dir := filepath.Join(parent, "app")
		write2(t, filepath.Join(dir, "Chart.yaml"), "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: other\n  version: 0.1.0\n  repository: file://../other\n")
		write2(t, filepath.Join(dir, "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n")
		res, _ := Helm(dir, HelmOptions{})
		if leaked(res, "from-outside") || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Fix, "helm dependency build") {
			t.Fatalf("problems = %v: want the dependency missing from charts/", res.Problems)
		}
	})
	t.Run("links inside the chart, and ignored links, are followed as Helm follows them", func(t *testing.T) {
		path, secret := secretOutside(t)
		dir := leakChart(t, "files/alias")
		write2(t, filepath.Join(dir, "files", "real"), "inside-the-chart\n")
		symlink(t, "real", filepath.Join(dir, "files", "alias"))
		symlink(t, path, filepath.Join(dir, "ignored", "secret"))
		write(t, filepath.Join(dir, ".helmignore"), "ignored/\n")
		res, err := Helm(dir, HelmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 0 || !leaked(res, "inside-the-chart") || leaked(res, secret) {
			t.Fatalf("problems = %v, docs %d: want the link inside the chart read, the ignored one not", res.Problems, len(res.Docs))
		}
	})
}

func write2(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, path, data)
}

// hostileChart is a chart with one template and the given values.yaml.
func hostileChart(t *testing.T, template, values string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hostile")
	write2(t, filepath.Join(dir, "Chart.yaml"), "apiVersion: v2\nname: hostile\nversion: 0.1.0\n")
	write2(t, filepath.Join(dir, "values.yaml"), values)
	write2(t, filepath.Join(dir, "templates", "cm.yaml"), template)
	return dir
}

func TestHelmRenderBudgets(t *testing.T) {
	for _, tc := range []struct {
		name, template, values string
		budget                 func(*budget)
		want                   string
	}{{
		name:     "endless range",
		template: "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}",
		budget:   func(b *budget) { b.Time = 2 * time.Second },
		want:     "ladder's 2s time budget",
	}, {
		name:     "output without end",
		template: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n{{ range $i := until 20000 }}  k{{ $i }}: {{ repeat 100 \"x\" }}\n{{ end }}",
		budget:   func(b *budget) { b.Output = 1 << 20 },
		want:     "over ladder's 1 MiB budget of output",
	}, {
		name:     "a list without end",
		template: "{{ $x := until 400000000 }}{{ len $x }}",
		budget:   func(b *budget) { b.Memory = 256 << 20 },
		want:     "over ladder's 256 MiB memory budget",
	}, {
		name:     "tpl recursion through a value",
		template: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: {{ tpl .Values.loop . | quote }}\n",
		values:   "loop: '{{ tpl .Values.loop . }}'\n",
		budget:   func(b *budget) {},
		want:     "stack budget",
	}, {
		name:     "tpl recursion built inside a template",
		template: "{{ $s := \"{{ tpl $.Values.t $ }}\" }}{{ $_ := set .Values \"t\" $s }}{{ tpl $s . }}",
		budget:   func(b *budget) {},
		want:     "stack budget",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			withBudget(t, tc.budget)
			dir := hostileChart(t, tc.template, tc.values)
			res, err := Helm(dir, HelmOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != 1 || res.Problems[0].File != filepath.Join(dir, "Chart.yaml") ||
				!strings.Contains(res.Problems[0].Message, tc.want) || len(res.Docs) != 0 {
				t.Fatalf("problems = %v, docs %d: want one at Chart.yaml saying %q", res.Problems, len(res.Docs), tc.want)
			}
			if !strings.Contains(res.Problems[0].String(), dir) {
				t.Errorf("problem %q does not name the chart", res.Problems[0])
			}
			// The process that ran out of its budget was the render's:
			// this one goes on and renders the next chart.
			next, err := Helm(filepath.Join("testdata", "helm", "legacy"), HelmOptions{})
			if err != nil || len(next.Problems) != 0 || len(next.Docs) == 0 {
				t.Fatalf("the next chart: %v %v", err, next.Problems)
			}
		})
	}
}

// Text that looks like a template call in a chart's prose — a subchart's
// README, a value that documents `tpl` — is not a template: the chart
// renders.
func TestHelmRendersChartsThatMentionTpl(t *testing.T) {
	dir := copyChart(t, filepath.Join("testdata", "helm", "legacy"))
	write(t, filepath.Join(dir, "README.md"), "Set `extra` and the chart renders it with `{{ tpl .Values.extra . }}`.\n")
	write(t, filepath.Join(dir, "charts", "cache", "README.md"), "Values may call {{ tpl .Values.x . }}.\n")
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "values.yaml"), string(values)+"# help: '{{ tpl .Values.help . }}' is how a value is templated\nhelp: 'write {{ tpl .Values.x . }} in a template'\n")
	res, err := Helm(dir, HelmOptions{KubeVersion: "1.32"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 || len(res.Docs) != 4 {
		t.Fatalf("problems = %v, docs %d: want the chart rendered", res.Problems, len(res.Docs))
	}
}

// kustomize's own root-only loader (api/internal/loader.RestrictionRootOnly,
// which kubectl's options keep) already refuses these: the tests hold
// ladder to it.
func TestKustomizeReadsOnlyItsRoot(t *testing.T) {
	path, secret := secretOutside(t)
	other := t.TempDir()
	write(t, filepath.Join(other, "kustomization.yaml"), "resources:\n- cm.yaml\n")
	write(t, filepath.Join(other, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-outside\ndata:\n  k: "+secret+"\n")
	for _, tc := range []struct {
		name, kustomization, link, want string
	}{
		{"a resource linked from outside", "resources:\n- leak.yaml\n", "leak.yaml", "is not in or below"},
		{"a resource at an absolute path", "resources:\n- " + path + "\n", "", "is not in or below"},
		{"a base at an absolute path", "resources:\n- " + other + "\n", "", "cannot be absolute"},
		{"a generator file outside", "configMapGenerator:\n- name: x\n  files:\n  - " + path + "\n", "", "is not in or below"},
		{"a generator file linked from outside", "configMapGenerator:\n- name: x\n  files:\n  - leak\n", "leak", "is not in or below"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "kustomization.yaml"), tc.kustomization)
			if tc.link != "" {
				symlink(t, path, filepath.Join(dir, tc.link))
			}
			res, err := Kustomize(dir)
			if err != nil {
				t.Fatal(err)
			}
			if leaked(res, secret) || leaked(res, "from-outside") || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, tc.want) {
				t.Fatalf("problems = %v, docs %d: want the build refused (%q)", res.Problems, len(res.Docs), tc.want)
			}
		})
	}
}

// billionLaughs is a ConfigMap of a kilobyte whose YAML aliases expand to
// 10^9 strings: kustomize expands them.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  a0: &a0 lol\nx:\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	return b.String()
}

func TestKustomizeBuildBudgets(t *testing.T) {
	var replacements, configMaps strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&configMaps, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\ndata:\n  k: v\n", i)
	}
	for i := range 100 {
		fmt.Fprintf(&replacements, "- source: {kind: ConfigMap, name: c%d, fieldPath: data.k}\n  targets:\n  - select: {kind: ConfigMap}\n    fieldPaths: [data.k]\n", i)
	}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		budget func(*budget)
		want   string
	}{{
		name: "replacements over thousands of objects",
		files: map[string]string{
			"kustomization.yaml": "resources:\n- cms.yaml\nreplacements:\n" + replacements.String(),
			"cms.yaml":           configMaps.String(),
		},
		budget: func(b *budget) { b.Time = time.Second },
		want:   "ladder's 1s time budget",
	}, {
		name: "a billion laughs",
		files: map[string]string{
			"kustomization.yaml": "resources:\n- lol.yaml\n",
			"lol.yaml":           billionLaughs(),
		},
		budget: func(b *budget) { b.Memory = 256 << 20 },
		want:   "over ladder's 256 MiB memory budget",
	}, {
		name: "a generated ConfigMap over the output budget",
		files: map[string]string{
			"kustomization.yaml": "configMapGenerator:\n- name: big\n  files:\n  - big.txt\n",
			"big.txt":            strings.Repeat(strings.Repeat("x", 99)+"\n", 20000),
		},
		budget: func(b *budget) { b.Output = 1 << 20 },
		want:   "over ladder's 1 MiB budget of output",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			withBudget(t, tc.budget)
			dir := t.TempDir()
			for name, data := range tc.files {
				write(t, filepath.Join(dir, name), data)
			}
			res, err := Kustomize(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != 1 || res.Problems[0].File != filepath.Join(dir, "kustomization.yaml") ||
				!strings.Contains(res.Problems[0].Message, tc.want) || len(res.Docs) != 0 {
				t.Fatalf("problems = %v, docs %d: want one at the kustomization saying %q", res.Problems, len(res.Docs), tc.want)
			}
			if !slices.Contains(res.Consumed, filepath.Join(dir, "kustomization.yaml")) {
				t.Errorf("consumed = %q, want the kustomization", res.Consumed)
			}
			next, err := Kustomize(filepath.Join("testdata", "kustomize", "hello", "overlays", "staging"))
			if err != nil || len(next.Problems) != 0 || len(next.Docs) == 0 {
				t.Fatalf("the next kustomization: %v %v", err, next.Problems)
			}
		})
	}
}

// TestRenderFollowsTheCallersWorkingDirectory: a render process is kept
// for the next render, so a relative chart directory and values file must
// be read from where the caller is when it asks, not from where the
// process was started (`ladder check -f chart` after a chdir, as the docs'
// examples run).
func TestRenderFollowsTheCallersWorkingDirectory(t *testing.T) {
	legacy, err := filepath.Abs(filepath.Join("testdata", "helm", "legacy"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Helm(legacy, HelmOptions{KubeVersion: "1.32"}); err != nil {
		t.Fatal(err) // starts the render process here
	}
	other := t.TempDir()
	dir := copyChart(t, legacy)
	if err := os.Rename(dir, filepath.Join(other, "chart")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(other, "values-extra.yaml"), "{}\n")
	t.Chdir(other)
	res, err := Helm("chart", HelmOptions{KubeVersion: "1.32", ValuesFiles: []string{"values-extra.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 || len(res.Docs) == 0 {
		t.Fatalf("problems %v, %d docs: want chart/ under the new working directory rendered", res.Problems, len(res.Docs))
	}
	if f := res.Docs[0].File; !strings.HasPrefix(f, "chart"+string(filepath.Separator)) {
		t.Errorf("doc file %q, want it under the relative chart", f)
	}
}
