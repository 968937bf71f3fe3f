package htmlreport_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/htmlreport"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/timeline"
)

// dbManifests: two StatefulSets of two pods under one PodDisruptionBudget,
// maxUnavailable 1 over the four: a floor of 3 for both together.
const dbManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: db}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db-a, namespace: db}
spec:
  replicas: 2
  serviceName: db-a
  selector: {matchLabels: {app: db, shard: a}}
  template:
    metadata: {labels: {app: db, shard: a}}
    spec:
      nodeSelector: {node.kubernetes.io/lifecycle: self-managed}
      containers:
        - name: db
          image: mysql:8
          resources: {requests: {cpu: 100m, memory: 256Mi}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db-b, namespace: db}
spec:
  replicas: 2
  serviceName: db-b
  selector: {matchLabels: {app: db, shard: b}}
  template:
    metadata: {labels: {app: db, shard: b}}
    spec:
      nodeSelector: {node.kubernetes.io/lifecycle: self-managed}
      containers:
        - name: db
          image: mysql:8
          resources: {requests: {cpu: 100m, memory: 256Mi}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: db}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: db}}
`

// spanningRehearsal is no-lifecycle-hook (an instance refresh that takes
// nodes away with their pods, no drain) with the db StatefulSets.
func spanningRehearsal(t *testing.T) (*report.Report, *timeline.Timeline) {
	t.Helper()
	sc, err := scenario.LoadBuiltin("no-lifecycle-hook")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Decode("db.yaml", []byte(dbManifests))
	if err != nil {
		t.Fatal(err)
	}
	sc.Objects = append(sc.Objects, objs...)
	rep, tl, err := rehearse.RunTimeline(sc, rehearse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, tl
}

func writePage(t *testing.T, rep *report.Report, tl *timeline.Timeline) string {
	t.Helper()
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, tl); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func pageData(t *testing.T, html string) htmlreport.Data {
	t.Helper()
	var data htmlreport.Data
	if err := json.Unmarshal([]byte(between(html, `<script type="application/json" id="ladder-data">`, `</script>`)), &data); err != nil {
		t.Fatalf("the page's data: %v", err)
	}
	return data
}

// A PodDisruptionBudget over two StatefulSets is one chart, the budget's,
// naming both, with the pod its node took below the floor (the instance
// refresh removes nodes without a drain); neither StatefulSet's chart draws
// a floor of its own (before, each drew the floor the budget would give
// its two pods alone: 1, where the budget's is 3 of the four), both refer
// to the budget's chart. The drop is in the data, the violation and drop
// tables, and the availability counts the budget below its floor.
func TestPDBSpanningTwoStatefulSets(t *testing.T) {
	rep, tl := spanningRehearsal(t)
	html := writePage(t, rep, tl)
	if again := writePage(t, rep, tl); again != html {
		t.Fatal("the same report and timeline wrote different pages")
	}
	var db *report.PDB
	for i, p := range rep.PDBs {
		if p.Namespace == "db" && p.Name == "db" {
			db = &rep.PDBs[i]
		}
	}
	if db == nil || len(db.Drops) == 0 || !slices.Equal(db.Workloads, []string{"StatefulSet/db-a", "StatefulSet/db-b"}) {
		t.Fatalf("the fixture: PDB db/db %+v, want both StatefulSets and a drop", db)
	}
	drop := db.Drops[0]
	if drop.Cause != report.CauseNodeRemoved || drop.Node == "" || drop.Step != "node-group" {
		t.Fatalf("the fixture: drop %+v, want node-removed in the node-group step", drop)
	}

	figure := between(html, `<figure class="small" id="pdb-db.db">`, `</figure>`)
	if figure == "" {
		t.Fatalf("no chart of PDB db/db:\n%s", between(html, `<section id="pdbs"`, `</section>`))
	}
	for _, want := range []string{
		`<h3>PodDisruptionBudget db/db</h3>`,
		`maxUnavailable 1 over the pods of 2 workloads together, one floor for all: StatefulSet/db-a, StatefulSet/db-b`,
		`1 pod taken below it (1 node-removed)`,
		`data-chart="pdb"`,
	} {
		if !strings.Contains(figure, want) {
			t.Errorf("db/db's chart lacks %q:\n%s", want, figure)
		}
	}
	if n := strings.Count(html, `id="pdb-db.db"`); n != 1 {
		t.Errorf("%d charts of db/db, want one", n)
	}
	for _, name := range []string{"db-a", "db-b"} {
		caption := between(html, `<h3>StatefulSet db/`+name+`</h3>`, `</figcaption>`)
		if !strings.Contains(caption, `PDB <a href="#pdb-db.db">db/db</a> spans StatefulSet/db-a, StatefulSet/db-b: its floor counts their pods together, so none is drawn here.`) {
			t.Errorf("%s's caption does not refer to db/db's chart: %s", name, caption)
		}
	}

	data := pageData(t, html)
	for _, w := range data.Timeline.Workloads {
		if w.Namespace == "db" && (w.Floor != nil || !slices.Equal(w.SharedPDBs, []string{"db/db"})) {
			t.Errorf("%s: floor %v shared %v, want no floor and db/db shared", w.Name, w.Floor, w.SharedPDBs)
		}
	}
	var plotted *timeline.PDB
	for i, p := range data.Timeline.PDBs {
		if p.Namespace == "db" && p.Name == "db" {
			plotted = &data.Timeline.PDBs[i]
		}
	}
	if plotted == nil || len(plotted.Drops) != len(db.Drops) || !slices.Equal(plotted.Workloads, db.Workloads) {
		t.Fatalf("the page's data: db/db %+v, want its workloads and %d drops", plotted, len(db.Drops))
	}
	if d := plotted.Drops[0]; d.Pod != drop.Pod || d.Node != drop.Node || d.By != drop.By || d.Cause != drop.Cause || d.Step != drop.Hop+" node-group default-selfmng" {
		t.Errorf("the page's drop %+v, the report's %+v", d, drop)
	}
	below := false
	for i, tt := range data.Timeline.Availability.T {
		if tt == drop.T && data.Timeline.Availability.BelowFloor[i] >= 1 {
			below = true
		}
	}
	if !below {
		t.Errorf("availability %+v: no PDB below its floor at the drop (%v)", data.Timeline.Availability, drop.T)
	}

	row := fmt.Sprintf(`<tr><td class="t">%s</td><td>db/db</td><td>%s</td><td>StatefulSet/db-b</td><td>%s</td><td>node-removed</td><td>%s</td><td>%s node-group default-selfmng</td></tr>`,
		report.Clock(drop.T), drop.Pod, drop.Node, drop.By, drop.Hop)
	if !strings.Contains(between(html, `<table id="drop-table">`, `</table>`), row) {
		t.Errorf("the drop table lacks %s:\n%s", row, between(html, `<table id="drop-table">`, `</table>`))
	}
	if !strings.Contains(between(html, `<table id="violation-table">`, `</table>`), "<td>"+drop.Pod+"</td>") {
		t.Errorf("the violation table lacks %s", drop.Pod)
	}
	if !strings.Contains(between(html, `<table id="pdb-table">`, `</table>`), `<tr><td>db</td><td>db</td><td>-</td><td>1</td><td>`) {
		t.Errorf("the PDB table lacks db/db")
	}
}

// hostile is a name no cluster would allow, as a report could still
// carry it: every place the page shows it must keep it text. (It does not
// call alert: a dialog would hang the browser test instead of failing it.)
const hostile = `<img src=x onerror="document.body.dataset.pwned=1">&'`

// inertReport is a run whose PodDisruptionBudget, pod, node, workload,
// who took it and sync error all carry hostile.
func inertReport() (*report.Report, *timeline.Timeline) {
	rep := &report.Report{Scenario: "inert", Status: report.Violated, MakespanSeconds: 100,
		Hops: []report.Hop{{From: "1.30", To: "1.31"}}, Phases: []report.Phase{{Kind: "node-group", Name: "g", End: 100, Status: report.Violated}},
		PDBs: []report.PDB{{
			Namespace: "ns", Name: hostile, MaxUnavailable: "1", Workloads: []string{"StatefulSet/" + hostile, "StatefulSet/b"},
			SyncError: "cannot " + hostile, MinHealthy: 1, BelowFloorSeconds: 10,
			Series: report.PDBSeries{T: []float64{0, 50, 60}, Healthy: []int32{3, 1, 3}, Desired: []int32{2, 2, 2}, Expected: []int32{3, 3, 3}, Allowed: []int32{0, 0, 0}},
			Drops: []report.Drop{{T: 50, Pod: "ns/" + hostile, Node: "node-" + hostile, Workload: "StatefulSet/" + hostile, Cause: report.CauseDeleted, By: "kubectl " + hostile},
				{T: 50, Pod: "ns/b-0", Cause: report.CauseRollout, By: "StatefulSet ns/b"}},
		}},
		Violations:         []report.Violation{{T: 50, Pod: "ns/" + hostile, Node: "node-" + hostile, PDB: "ns/" + hostile, Mechanism: "deleted", By: "kubectl " + hostile}},
		RolloutsBelowFloor: []report.RolloutBelowFloor{{PDB: "ns/" + hostile, Workload: "StatefulSet/ns/b", Cause: "rollout", Start: 50, End: 60, Seconds: 10, Pods: 1, MinHealthy: 1, Desired: 2}},
	}
	b := timeline.NewBuilder()
	b.Workload(0, timeline.WorkloadSample{Namespace: "ns", Name: hostile, Kind: "StatefulSet", Ready: 2, Desired: 2, Floor: 1, PDBs: []string{"ns/" + hostile}})
	tl := b.Build(100, nil, rehearse.TimelinePDBs(rep.PDBs))
	return rep, tl
}

// The names a page shows from the report — a PodDisruptionBudget's, a
// pod's, a node's, who took it, its sync error — stay inert: escaped in
// the tables, captions and attributes, and in the page's data (which the
// script puts into tooltips through its own escaping, checked by the
// browser test).
func TestPDBNamesAreInert(t *testing.T) {
	rep, tl := inertReport()
	html := writePage(t, rep, tl)
	lib, err := os.ReadFile("assets/echarts.min.js")
	if err != nil {
		t.Fatal(err)
	}
	own := strings.Replace(html, string(lib), "", 1)
	for _, bad := range []string{`<img`, `onerror="`} {
		if i := strings.Index(own, bad); i >= 0 {
			t.Errorf("the page holds %q unescaped: …%s…", bad, own[max(0, i-120):min(len(own), i+80)])
		}
	}
	escaped := `&lt;img src=x onerror=&#34;document.body.dataset.pwned=1&#34;&gt;&amp;&#39;`
	for _, where := range []string{
		`<h3>PodDisruptionBudget ns/` + escaped + `</h3>`,
		`<strong>The disruption controller cannot compute this budget and allows no disruption:</strong> cannot ` + escaped,
		`<td>ns/` + escaped + `</td>`,
		`<td>kubectl ` + escaped + `</td>`,
	} {
		if !strings.Contains(html, where) {
			t.Errorf("the page lacks %q", where)
		}
	}
	data := pageData(t, html)
	if len(data.Timeline.PDBs) != 1 || data.Timeline.PDBs[0].Name != hostile || data.Timeline.PDBs[0].Drops[0].By != "kubectl "+hostile {
		t.Errorf("the page's data does not carry the names as they are: %+v", data.Timeline.PDBs)
	}
	if w := data.Timeline.Workloads; len(w) != 1 || w[0].Floor != nil || !slices.Equal(w[0].SharedPDBs, []string{"ns/" + hostile}) {
		t.Errorf("workloads %+v: a budget failing safe (and spanning two) gives no floor", w)
	}
}

// Above MaxPDBs the page draws those that suffered most and says how many
// more there are; the PDB table lists every budget that went below its
// floor or lost a pod below it, and MaxQuietPDBRows of the others.
func TestPDBChartsAreCapped(t *testing.T) {
	rep := &report.Report{Scenario: "many", Status: report.Succeeded, MakespanSeconds: 100}
	n := htmlreport.MaxQuietPDBRows + 10
	for i := range n {
		p := report.PDB{Namespace: "ns", Name: fmt.Sprintf("pdb-%03d", i), MinAvailable: "2", Workloads: []string{}, MinHealthy: 2,
			Series: report.PDBSeries{T: []float64{0}, Healthy: []int32{2}, Desired: []int32{2}, Expected: []int32{2}, Allowed: []int32{0}}}
		switch i {
		case 5: // below its floor
			p.Series.Healthy[0], p.MinHealthy, p.BelowFloorSeconds = 1, 1, 100
		case n - 1: // a pod taken below it, past the quiet rows
			p.Drops = []report.Drop{{T: 0, Pod: "ns/p-0", Cause: report.CauseUnready, By: "kubelet"}}
		}
		rep.PDBs = append(rep.PDBs, p)
	}
	tl := timeline.NewBuilder().Build(100, nil, rehearse.TimelinePDBs(rep.PDBs))
	html := writePage(t, rep, tl)
	if n := strings.Count(html, `data-chart="pdb"`); n != timeline.MaxPDBs {
		t.Errorf("%d PDB charts, want %d", n, timeline.MaxPDBs)
	}
	if !strings.Contains(html, fmt.Sprintf(`The %d that suffered most are drawn; the %d others are in <a href="#pdb-table">the table</a>`, timeline.MaxPDBs, n-timeline.MaxPDBs)) {
		t.Errorf("the page does not say how many PDBs were left out")
	}
	for _, id := range []string{`id="pdb-ns.pdb-005"`, fmt.Sprintf(`id="pdb-ns.pdb-%03d"`, n-1)} {
		if !strings.Contains(html, id) {
			t.Errorf("the PDB that suffered is not drawn: no %s", id)
		}
	}
	table := between(html, `<table id="pdb-table">`, `</table>`)
	if got := strings.Count(table, "<tr><td>ns</td>"); got != htmlreport.MaxQuietPDBRows+2 {
		t.Errorf("the PDB table has %d rows, want the %d quiet ones and the 2 that were not", got, htmlreport.MaxQuietPDBRows)
	}
	if !strings.Contains(table, fmt.Sprintf(`<tr><td>ns</td><td>pdb-%03d</td>`, n-1)) || !strings.Contains(table, "… and 8 more that never went below their floor") {
		t.Errorf("the PDB table lacks the last budget, which lost a pod, or the count of the others:\n%s", table[len(table)-600:])
	}
}
