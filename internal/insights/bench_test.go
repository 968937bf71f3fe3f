package insights

import (
	"github.com/ladder-eks/ladder/internal/manifest"

	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// benchCorpus renders n objects as one multi-document YAML stream, a mix
// like a real manifest repository: per app a Deployment (some with an HPA,
// some single-replica, some without probes or spread), its Service,
// ConfigMap, ServiceAccount and PodDisruptionBudget, an Ingress (some still
// networking.k8s.io/v1beta1), a custom resource, and now and then a
// StatefulSet, a CronJob, RBAC, a StorageClass, a NodePool and an
// EC2NodeClass.
func benchCorpus(n int) []byte {
	var b strings.Builder
	count := 0
	emit := func(s string) bool {
		if count == n {
			return false
		}
		if count > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(s)
		count++
		return true
	}
	for app := 0; count < n; app++ {
		ns := fmt.Sprintf("team-%d", app%50)
		name := fmt.Sprintf("app-%d", app)
		replicas := 1 + app%4
		extra := ""
		if app%3 == 0 {
			extra = "      annotations: {prometheus.io/scrape: \"true\"}\n"
		}
		docs := []string{
			deployment(ns, name, replicas, extra),
			fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  selector: {app: %s}\n  ports:\n    - {name: http, port: 80, targetPort: 8080}\n", name, ns, name),
			fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  LOG_LEVEL: info\n  ENDPOINT: http://%s.%s.svc:80\n", name, ns, name, ns),
			fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns),
		}
		if app%2 == 0 {
			docs = append(docs, pdb(ns, name, "{app: "+name+"}", "maxUnavailable: 1"))
		} else if app%7 == 0 {
			docs = append(docs, pdb(ns, name, "{app: "+name+"}", fmt.Sprintf("minAvailable: %d", replicas)))
		}
		if app%5 == 0 {
			docs = append(docs, strings.ReplaceAll(strings.ReplaceAll(hpaWeb, "shop", ns), "web", name))
		}
		if app%4 == 0 {
			gv := "networking.k8s.io/v1"
			if app%8 == 0 {
				gv = "networking.k8s.io/v1beta1"
			}
			docs = append(docs, strings.ReplaceAll(strings.ReplaceAll(strings.Replace(ingressV1, "networking.k8s.io/v1", gv, 1), "shop", ns), "web", name))
		}
		if app%6 == 0 {
			docs = append(docs, strings.ReplaceAll(strings.ReplaceAll(certManagerCR, "shop", ns), "web", name))
		}
		if app%25 == 0 {
			docs = append(docs, strings.ReplaceAll(statefulSetNoProbe, "orders", ns), flowSchemaV1beta3,
				fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: %s\n  namespace: %s\nrules:\n  - apiGroups: [\"\"]\n    resources: [configmaps]\n    verbs: [get, list, watch]\n", name, ns))
		}
		if app%100 == 0 {
			docs = append(docs,
				"apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gp3-"+name+"\nprovisioner: ebs.csi.aws.com\nvolumeBindingMode: Immediate\n",
				strings.Replace(nodePool("pool-"+name, "  disruption:\n    budgets:\n      - nodes: \"0\"\n        reasons: [Drifted]\n", ""), "name: default", "name: nc-"+name, 1),
				nodeClass("nc-"+name, "    - alias: al2023@v20240807\n"))
		}
		for _, d := range docs {
			if !emit(d) {
				break
			}
		}
	}
	return []byte(b.String())
}

// BenchmarkScan100kObjects decodes 100,000 manifest objects (YAML, as one
// stream) and runs every check over them. objects/s is the figure to watch;
// the goal is 100,000 objects/s on 2 cores.
func BenchmarkScan100kObjects(b *testing.B) {
	const n = 100_000
	data := benchCorpus(n)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		objs, problems := Decode("corpus.yaml", data)
		if len(objs) != n || len(problems) != 0 {
			b.Fatalf("%d objects, %d problems", len(objs), len(problems))
		}
		rep := Run(&Input{Target: mustMinor("1.32"), Now: testNow, Objects: objs, Problems: problems}, nil)
		if rep.Summary()[Error] == 0 {
			b.Fatal("no findings")
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}

// BenchmarkChecks100kObjects runs every check over 100,000 objects already
// decoded, as a live cluster source delivers them.
func BenchmarkChecks100kObjects(b *testing.B) {
	const n = 100_000
	objs, problems := Decode("corpus.yaml", benchCorpus(n))
	b.ResetTimer()
	for b.Loop() {
		Run(&Input{Target: mustMinor("1.32"), Now: testNow, Objects: objs, Problems: problems}, nil)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}

// benchJSONList renders the corpus as one JSON List, indented the way
// kubectl get -o json prints it.
func benchJSONList(b *testing.B, n int) []byte {
	var items []string
	for _, d := range manifest.SplitDocuments(benchCorpus(n)) {
		js, err := yaml.YAMLToJSON(d.Body)
		if err != nil {
			b.Fatal(err)
		}
		items = append(items, string(js))
	}
	raw := `{"apiVersion":"v1","kind":"List","items":[` + strings.Join(items, ",") + `]}`
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(raw), "", "    "); err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// BenchmarkScan100kObjectsJSON is BenchmarkScan100kObjects for one JSON
// List, as kubectl get -A -o json writes it.
func BenchmarkScan100kObjectsJSON(b *testing.B) {
	const n = 100_000
	data := benchJSONList(b, n)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		objs, problems := Decode("list.json", data)
		if len(objs) != n || len(problems) != 0 {
			b.Fatalf("%d objects, %d problems", len(objs), len(problems))
		}
		Run(&Input{Target: mustMinor("1.32"), Now: testNow, Objects: objs, Problems: problems}, nil)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}

// writeManifestTree writes the benchmark corpus as a repository of many
// small files: docs documents in files files (one document each, two in
// the first docs-files), a thousand files to a directory.
func writeManifestTree(b testing.TB, dir string, files, docs int) {
	corpus := manifest.SplitDocuments(benchCorpus(docs))
	next := 0
	for f := range files {
		sub := filepath.Join(dir, fmt.Sprintf("team-%03d", f/1000))
		if f%1000 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		n := 1
		if f < docs-files {
			n = 2
		}
		var data []byte
		for i := range n {
			if i > 0 {
				data = append(data, "---\n"...)
			}
			data = append(data, corpus[next].Body...)
			next++
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("app-%06d.yaml", f)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadTree20kFiles reads a repository of 20,000 small files
// (21,000 documents) with ReadPaths — the walk, the stream of documents and
// their decoding — and runs every check, as ladder check -f DIR does.
// docs/s is the figure to watch; the goal is 50,000 documents/s on 2 cores.
// held-B/doc is the heap the objects read hold, per document, once read.
func BenchmarkReadTree20kFiles(b *testing.B) {
	const files, docs = 20_000, 21_000
	dir := b.TempDir()
	writeManifestTree(b, dir, files, docs)
	var held int64
	b.ResetTimer()
	for b.Loop() {
		var before, after runtime.MemStats
		if held == 0 {
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.StartTimer()
		}
		m, err := ReadPaths([]string{dir}, nil)
		if err != nil || len(m.Objects) != docs || len(m.Problems) != 0 {
			b.Fatalf("%v: %d objects, %d problems", err, len(m.Objects), len(m.Problems))
		}
		if held == 0 {
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			held = int64(after.HeapAlloc) - int64(before.HeapAlloc)
			b.StartTimer()
		}
		Run(&Input{Target: mustMinor("1.32"), Now: testNow, Objects: m.Objects, Problems: m.Problems}, nil)
	}
	b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64(held)/docs, "held-B/doc")
}
