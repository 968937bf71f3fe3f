package insights

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/ladder-eks/ladder/internal/manifest"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func problemLines(dir string, ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, strings.TrimPrefix(p.Error(), dir+string(filepath.Separator)))
	}
	return out
}

const configMapA = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"

// TestReadPathsSkipsFilesThatAreNotManifests: a repository's other YAML
// and JSON — chart metadata, values, compose and CI files, JSON schemas and
// dashboards, kustomizations, raw Helm templates — and its special files
// are counted, not reported; a document without kind among manifests, and
// malformed YAML, still are.
func TestReadPathsSkipsFilesThatAreNotManifests(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"chart/Chart.yaml":                "apiVersion: v2\nname: shop\nversion: 1.2.3\n",
		"chart/values.yaml":               "replicaCount: 1\nimage:\n  repository: nginx\n",
		"chart/values.schema.json":        `{"$schema": "https://json-schema.org/draft-07/schema#", "type": "object"}`,
		"chart/templates/deployment.yaml": "{{- if .Values.enabled }}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n",
		"chart/templates/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"chart/templates/NOTES.yaml":      "", // empty
		"docker-compose.yml":              "services:\n  web:\n    image: nginx\n",
		"dashboards/board.json":           `{"title": "board", "panels": []}`,
		"list.json":                       `[1, 2, 3]`,
		"base/kustomization.yaml":         "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [cm.yaml]\n",
		"base/cm.yaml":                    configMapA,
		"mixed.yaml":                      configMapA + "---\nname: b\n",
		"broken.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c\n",
	})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(dir, "socket.yaml"), syscall.S_IFSOCK|0o600, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "pipe.yaml"), filepath.Join(dir, "link-to-pipe.yaml")); err != nil {
		t.Fatal(err)
	}

	// Plain: the chart and the kustomization are read as files, not
	// built (TestReadRendersChartsAndKustomizations builds them).
	m, err := Read([]string{dir}, nil, ReadOptions{Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	var objs []string
	for _, o := range m.Objects {
		rel, _ := filepath.Rel(dir, o.Source.File)
		objs = append(objs, o.Kind+"/"+o.Name+"@"+rel)
	}
	if got, want := strings.Join(objs, " "), "ConfigMap/a@base/cm.yaml ConfigMap/a@mixed.yaml"; got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
	wantProblems := []string{
		"broken.yaml:3: ConfigMap c: malformed YAML: did not find expected ',' or '}'; the document was not checked (fix the YAML syntax)",
		"mixed.yaml:5: missing apiVersion or kind; the document was not checked (every document needs apiVersion and kind, e.g. apiVersion: apps/v1, kind: Deployment)",
	}
	if got := problemLines(dir, m.Problems); !reflect.DeepEqual(got, wantProblems) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantProblems, "\n"))
	}
	// Chart.yaml, values.yaml, values.schema.json, NOTES.yaml, compose,
	// dashboard, list.json, kustomization.yaml; two templates; a pipe, a
	// socket and a link to the pipe.
	if want := (SkippedFiles{NotManifests: 8, Templates: 2, Special: 3}); m.Skipped != want {
		t.Errorf("skipped %+v, want %+v", m.Skipped, want)
	}
}

// TestReadPathsNamedTemplate: a template named on the command line is the
// user's choice, so it is reported — as a template, in one short line.
func TestReadPathsNamedTemplate(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"key.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    {{ include \"labels\" . }}\n",
		"value.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n",
		"if.yaml":    "{{- if .Values.enabled }}\napiVersion: v1\nkind: ConfigMap\n{{- end }}\n",
	})
	for _, name := range []string{"key.yaml", "value.yaml", "if.yaml"} {
		m, err := ReadPaths([]string{filepath.Join(dir, name)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Problems) != 1 || m.Skipped.Total() != 0 {
			t.Fatalf("%s: problems %v, skipped %+v", name, m.Problems, m.Skipped)
		}
		msg := m.Problems[0].Message
		if !strings.HasPrefix(msg, "unrendered Helm/Go template: ") || strings.Contains(msg, "interface {}") || m.Problems[0].Severity != Error {
			t.Errorf("%s: %s %s", name, m.Problems[0].Severity, msg)
		}
	}
}

// TestReadPathsRefusesSpecialFiles: a named pipe or a device given by name
// is refused with one line before anything is opened (opening a pipe
// without a writer blocks; reading /dev/zero never ends).
func TestReadPathsRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        "-f " + fifo + ": not a regular file but a named pipe; give a file or a directory, or pipe it to standard input: ... | ladder check -f -",
		"/dev/zero": "-f /dev/zero: not a regular file but a character device; give a file or a directory, or pipe it to standard input: ... | ladder check -f -",
	} {
		if _, err := os.Stat(path); err != nil {
			t.Skip(path, err)
		}
		if _, err := ReadPaths([]string{path}, nil); err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

// zeros is an endless input, as /dev/zero on standard input.
type zeros struct{ read int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

// TestReadPathsCapsInput: standard input past manifest.MaxInputSize, and a
// file over it, are one line; in a directory such a file is one problem.
func TestReadPathsCapsInput(t *testing.T) {
	z := &zeros{}
	_, err := ReadPaths([]string{"-"}, z)
	if err == nil || err.Error() != "-f -: standard input is larger than the 64 MiB limit; split it, e.g. into files in a directory, and check that" {
		t.Errorf("stdin: %v", err)
	}
	if z.read > manifest.MaxInputSize+1<<20 {
		t.Errorf("read %d bytes of an endless input", z.read)
	}

	dir := writeTree(t, map[string]string{"ok.yaml": configMapA})
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, manifest.MaxInputSize+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	if _, err := ReadPaths([]string{big}, nil); err == nil || err.Error() != "-f "+big+": the file is larger than the 64 MiB limit (it is 64 MiB); split it into smaller files" {
		t.Errorf("file: %v", err)
	}
	m, err := ReadPaths([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"big.yaml: not read: the file is larger than the 64 MiB limit (it is 64 MiB); its manifests were not checked (split it into smaller files, or leave it out)"}
	if got := problemLines(dir, m.Problems); !reflect.DeepEqual(got, want) || len(m.Objects) != 1 {
		t.Errorf("got %d objects, problems %q", len(m.Objects), got)
	}
}

// TestReadPathsStreamsInOrder holds the stream (files read ahead, documents
// decoded by several workers, chunks of large files) to decoding each file
// in turn: the same objects and problems, in the same order, whatever the
// scheduling.
func TestReadPathsStreamsInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	files := map[string]string{}
	var names []string
	corpus := manifest.SplitDocuments(benchCorpus(600))
	for i := 0; i < len(corpus); {
		n := 1 + i%3
		if i%50 == 0 {
			n = 3*chunkDocs + 5 // a file of several chunks
		}
		var docs []string
		for j := i; j < min(i+n, len(corpus)); j++ {
			docs = append(docs, string(corpus[j].Body))
		}
		if i%7 == 0 {
			docs = append(docs, "kind: ConfigMap\nmetadata: {name: no-version}\n", "a: [b\n")
		}
		name := fmt.Sprintf("d%d/f%04d.yaml", i%5, i)
		files[name] = strings.Join(docs, "---\n")
		names = append(names, name)
		i += n
	}
	dir := writeTree(t, files)
	m, err := ReadPaths([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want Manifests
	paths := make([]string, 0, len(names))
	for _, name := range names {
		paths = append(paths, filepath.Join(dir, name))
	}
	for _, p := range sortedCopy(paths) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		objs, problems := Decode(p, data)
		releaseDocs(objs) // read from a file on disk: the text is not held
		want.Objects = append(want.Objects, objs...)
		want.Problems = append(want.Problems, problems...)
	}
	if len(m.Objects) != len(want.Objects) || len(m.Objects) < 600 {
		t.Fatalf("%d objects, want %d", len(m.Objects), len(want.Objects))
	}
	for i := range m.Objects {
		if !reflect.DeepEqual(m.Objects[i], want.Objects[i]) {
			t.Fatalf("object %d: got %v at %v, want %v at %v", i, m.Objects[i], m.Objects[i].Source, want.Objects[i], want.Objects[i].Source)
		}
	}
	if got, want := fmt.Sprint(m.Problems), fmt.Sprint(want.Problems); got != want {
		t.Errorf("problems differ:\n got %s\nwant %s", got, want)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sortStrings(out)
	return out
}

// TestDuplicateKeysAreAWarning: a document with a duplicate key is still
// checked, with the last value (as kubectl reads it), and the duplicate is
// one WARNING at its line — one, however many duplicates there are.
func TestDuplicateKeysAreAWarning(t *testing.T) {
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: 1\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx}]\n"
	// The flow mapping sends the document past the fast path to the strict converter.
	flow := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, name: d}\n"
	many := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n" + strings.Repeat("  a: \"1\"\n", 100_000)
	objs, problems := Decode("dup.yaml", []byte(deploy+"---\n"+flow+"---\n"+many))
	var got []string
	for _, p := range problems {
		got = append(got, string(p.Severity)+" "+p.Error())
	}
	want := []string{
		`WARNING dup.yaml:8: Deployment shop/web: duplicate key "replicas"; the last value is used, the document was checked (keep one of the two; the API server's strict field validation rejects duplicate fields)`,
		`WARNING dup.yaml:17: ConfigMap d: duplicate key "name"; the last value is used, the document was checked (keep one of the two; the API server's strict field validation rejects duplicate fields)`,
		`WARNING dup.yaml:25: ConfigMap x: duplicate key "a"; the last value is used, the document was checked (keep one of the two; the API server's strict field validation rejects duplicate fields)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(objs) != 3 {
		t.Fatalf("%d objects", len(objs))
	}
	if d, ok := objs[0].Typed.(*workloadSummary); !ok || objs[0].Name != "web" || d.replicas != 3 {
		t.Errorf("deployment not decoded with the last value: %#v", objs[0].Typed)
	}
}

// TestProblemMessagesAreCapped: however long the key or value a parser
// quotes, a problem is one short line that names the field.
func TestProblemMessagesAreCapped(t *testing.T) {
	long := strings.Repeat("k", 1<<20)
	// Explicit keys ("? key"), as YAML allows no implicit key over 1024 characters.
	head := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  ? " + long + "\n  : 1\n"
	_, problems := Decode("long.yaml", []byte(head+"---\n"+head+"  ? "+long+"\n  : 2\n"))
	if len(problems) != 3 || !strings.Contains(problems[0].Message, "unknown field") || !strings.Contains(problems[1].Message, "duplicate key") {
		t.Fatalf("problems %.500v", problems)
	}
	for _, p := range problems {
		if line := p.Error(); len(line) > 2*maxMessage+2*maxNameInMessage || !strings.Contains(line, "kkk") {
			t.Errorf("%d bytes: %.300s", len(line), line)
		}
	}
}

// TestReadPathsDoesNotHoldDocuments: what a tree costs in memory once read
// is its objects, not its text. Each document here carries 16 KiB of
// comments; the objects read from it are a few KiB.
func TestReadPathsDoesNotHoldDocuments(t *testing.T) {
	const files = 1000
	padding := strings.Repeat("# "+strings.Repeat("x", 62)+"\n", 256) // 16 KiB
	tree := map[string]string{}
	for i := range files {
		d := deployment("shop", fmt.Sprintf("web-%d", i), 2, "")
		// The comments go inside the document, after its first line.
		first, rest, _ := strings.Cut(d, "\n")
		tree[fmt.Sprintf("d%d/web-%04d.yaml", i%10, i)] = first + "\n" + padding + rest
	}
	dir := writeTree(t, tree)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := ReadPaths([]string{dir}, nil)
	if err != nil || len(m.Objects) != files {
		t.Fatalf("%v: %d objects", err, len(m.Objects))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perDoc := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / files
	if perDoc > 8<<10 {
		t.Errorf("%d bytes held per document of 16 KiB: its text is held", perDoc)
	}
	runtime.KeepAlive(m)
}
