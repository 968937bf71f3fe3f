// Package htmlreport writes a rehearsal as one self-contained HTML file
// (ladder rehearse --report FILE.html): the report's summary as tables that
// match the text report, and charts of the timeline (internal/timeline)
// drawn in the browser by Apache ECharts, which the file carries inline
// with the run's JSON, so that it opens offline. docs/report-html.md says
// what it shows.
package htmlreport

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/timeline"
)

// The charting library, vendored by scripts/vendor-charts.sh: its sha256
// is checked by TestVendoredChartsMatchChecksum.
//
//go:embed assets/echarts.min.js
var echartsJS string

//go:embed assets/echarts.VERSION
var echartsVersion string

// The page's own script and style, and the template that puts the page
// together.
var (
	//go:embed assets/report.js
	pageJS string
	//go:embed assets/report.css
	pageCSS string
	//go:embed report.html.tmpl
	pageTemplate string
)

// MaxNodeRows and MaxEventRows bound the tables of a large run: the nodes
// at the end are listed one by one up to MaxNodeRows (else counted per
// group and version), and the Warning events of the timeline up to
// MaxEventRows.
const (
	MaxNodeRows  = timeline.MaxNodeLives
	MaxEventRows = 200
)

// Data is what the page's script reads: of the report, what the steps
// chart draws, and the timeline without its blocked drains (the page's
// table lists them). The rest of the report is in the page's tables: the
// data holds nothing twice, and no address of anything.
type Data struct {
	Report   Steps              `json:"report"`
	Timeline *timeline.Timeline `json:"timeline"`
}

// Steps is the report's part the steps chart draws.
type Steps struct {
	Scenario string         `json:"scenario"`
	Seed     uint64         `json:"seed"`
	Status   string         `json:"status"`
	Hops     []report.Hop   `json:"hops"`
	Phases   []report.Phase `json:"phases"`
	Probe    *report.Probe  `json:"probe"`
}

// MaxTableRows bounds the workload, blocked, PodDisruptionBudget,
// violation and drop tables of a large run; the text and JSON reports list
// every row. MaxFindings bounds the violations, and the spans below a
// floor, listed under the status line (as the text report does).
//
// MaxQuietPDBRows bounds, in the PodDisruptionBudget table, the budgets
// that never went below their floor, lost no pod below it and do not fail
// safe: a large run has thousands, and the table lists every other one
// first (up to MaxTableRows).
const (
	MaxTableRows    = 1000
	MaxFindings     = 20
	MaxQuietPDBRows = 200
)

// Write renders the rehearsal as one HTML page. The same report and
// timeline always give the same bytes.
func Write(w io.Writer, rep *report.Report, tl *timeline.Timeline) error {
	lean := *tl
	lean.Blocked = nil
	data, err := json.Marshal(Data{
		Report:   Steps{Scenario: rep.Scenario, Seed: rep.Seed, Status: rep.Status, Hops: rep.Hops, Phases: rep.Phases, Probe: rep.Probe},
		Timeline: &lean,
	})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, view{
		Report: rep, Timeline: tl,
		Library: template.JS(echartsJS), LibraryVersion: strings.TrimSpace(echartsVersion),
		Script: template.JS(pageJS), Style: template.CSS(pageCSS),
		// json.Marshal escapes <, > and &, so the data cannot close its
		// script element.
		Data: template.JS(data),
	}); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"clock":    report.Clock,
	"duration": report.Duration,
	"dash":     dash,
	// age is kubectl get nodes' AGE, as the text report prints it.
	"age": func(s float64) string {
		return duration.HumanDuration(time.Duration(s * float64(time.Second)))
	},
	"hop": func(r *report.Report, i int) string {
		if i < len(r.Hops) {
			return r.Hops[i].To
		}
		return "-"
	},
	"probePercent": func(p *report.Probe) string {
		pct := 100.0
		if p.Seconds > 0 {
			pct = 100 * (p.Seconds - p.FailedSeconds) / p.Seconds
		}
		return fmt.Sprintf("%.2f%%", pct)
	},
	"join":           strings.Join,
	"subtract":       func(a, b float64) float64 { return a - b },
	"warnings":       warnings,
	"nodesByVersion": nodesByVersion,
	"nodeStatus": func(n report.Node) string {
		s := "Ready"
		if !n.Ready {
			s = "NotReady"
		}
		if !n.Schedulable {
			s += ",SchedulingDisabled"
		}
		return s
	},
	"maxNodeRows": func() int { return MaxNodeRows },
	"workloadOf":  workloadOf,
	// rows is at most MaxTableRows of a table's rows, and how many more.
	"rows": func(n int) (out struct{ Shown, More int }) {
		out.Shown = min(n, MaxTableRows)
		out.More = n - out.Shown
		return out
	},
	"less": func(i, n int) bool { return i < n },
	// limit is at most most of n rows, and how many more.
	"limit": func(n, most int) (out struct{ Shown, More int }) {
		out.Shown = min(n, most)
		out.More = n - out.Shown
		return out
	},
	"maxFindings":  func() int { return MaxFindings },
	"pdbOf":        pdbOf,
	"pdbID":        pdbID,
	"pdbHref":      pdbHref,
	"pdbSpec":      pdbSpec,
	"dropCounts":   dropCounts,
	"drops":        drops,
	"allowedAtEnd": allowedAtEnd,
	"pdbRows":      pdbRows,
	// ownPDBs are the PDBs whose floor the workload's chart draws.
	"ownPDBs": func(w timeline.Workload) []string {
		var out []string
		for _, p := range w.PDBs {
			if !slices.Contains(w.SharedPDBs, p) {
				out = append(out, p)
			}
		}
		return out
	},
	"step": func(hop, kind, name string) string {
		var parts []string
		for _, s := range []string{hop, kind, name} {
			if s != "" {
				parts = append(parts, s)
			}
		}
		return dash(strings.Join(parts, " "))
	},
	"stepsHeight": func(r *report.Report) int {
		rows := len(r.Phases)
		if r.Probe != nil {
			rows++
		}
		return RangeHeight(rows)
	},
	// groupHeight is the height of a group's node lives, 0 when the
	// timeline counts its nodes instead.
	"groupHeight": func(tl *timeline.Timeline, group string) int {
		rows := 0
		for _, n := range tl.Nodes {
			if n.Group == group {
				rows++
			}
		}
		if rows == 0 {
			return 0
		}
		return RangeHeight(rows)
	},
}).Parse(pageTemplate))

// view is what the template renders.
type view struct {
	Report         *report.Report
	Timeline       *timeline.Timeline
	Library        template.JS
	LibraryVersion string
	Script         template.JS
	Style          template.CSS
	Data           template.JS
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// warnings are the Warning events of the timeline, at most MaxEventRows,
// and how many more there were.
func warnings(events []report.Event) (out struct {
	Events []report.Event
	More   int
}) {
	for _, e := range events {
		if e.Type != "Warning" {
			continue
		}
		if len(out.Events) == MaxEventRows {
			out.More++
			continue
		}
		out.Events = append(out.Events, e)
	}
	return out
}

// RangeHeight is the height in pixels of a range chart of rows rows (the
// steps, a group's node lives): its place is sized before it is drawn.
func RangeHeight(rows int) int { return rows*24 + 80 }

// workloadOf is the report's line of a plotted workload.
func workloadOf(r *report.Report, w timeline.Workload) *report.Workload {
	for i, rw := range r.Workloads {
		if rw.Namespace == w.Namespace && rw.Name == w.Name && rw.Kind == w.Kind {
			return &r.Workloads[i]
		}
	}
	return nil
}

// groupVersion is one row of a large run's node table: the nodes of a
// group at one kubelet version at the end.
type groupVersion struct {
	Group, Version  string
	Nodes, NotReady int
	Unschedulable   int
}

// nodesByVersion counts the nodes at the end per group and version, in the
// order of the report's nodes.
func nodesByVersion(nodes []report.Node) []groupVersion {
	var out []groupVersion
	index := map[[2]string]int{}
	for _, n := range nodes {
		k := [2]string{n.Group, n.Version}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, groupVersion{Group: n.Group, Version: n.Version})
		}
		out[i].Nodes++
		if !n.Ready {
			out[i].NotReady++
		}
		if !n.Schedulable {
			out[i].Unschedulable++
		}
	}
	return out
}

// pdbOf is the report's PodDisruptionBudget namespace/name, nil when the
// report has none of that name.
func pdbOf(r *report.Report, name string) *report.PDB {
	for i, p := range r.PDBs {
		if p.Namespace+"/"+p.Name == name {
			return &r.PDBs[i]
		}
	}
	return nil
}

// pdbID is the id of a PodDisruptionBudget's chart: a namespace holds no
// dot, so namespace.name names one budget.
func pdbID(namespace, name string) string { return "pdb-" + namespace + "." + name }

// pdbHref links to a budget's chart when it is drawn, else to the table.
func pdbHref(tl *timeline.Timeline, namespace, name string) string {
	for _, p := range tl.PDBs {
		if p.Namespace == namespace && p.Name == name {
			return "#" + pdbID(namespace, name)
		}
	}
	return "#pdb-table"
}

// pdbSpec is the budget's minAvailable or maxUnavailable, as written.
func pdbSpec(p *report.PDB) string {
	switch {
	case p.MinAvailable != "":
		return "minAvailable " + p.MinAvailable
	case p.MaxUnavailable != "":
		return "maxUnavailable " + p.MaxUnavailable
	}
	return "no minAvailable or maxUnavailable"
}

// dropCounts says how many pods were taken below the budget's floor, by
// cause in the order they first happened.
func dropCounts(p *report.PDB) string {
	if len(p.Drops) == 0 {
		return "no pod taken below it"
	}
	var causes []string
	n := map[string]int{}
	for _, d := range p.Drops {
		if n[d.Cause] == 0 {
			causes = append(causes, d.Cause)
		}
		n[d.Cause]++
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = fmt.Sprintf("%d %s", n[c], c)
	}
	pods := "pods"
	if len(p.Drops) == 1 {
		pods = "pod"
	}
	return fmt.Sprintf("%d %s taken below it (%s)", len(p.Drops), pods, strings.Join(parts, ", "))
}

// dropRow is a drop with its budget's namespace/name.
type dropRow struct {
	report.Drop
	PDB string
}

// drops are every budget's drops in time order (a budget's own in its
// order, the budgets' in the report's at the same instant).
func drops(r *report.Report) []dropRow {
	var out []dropRow
	for _, p := range r.PDBs {
		for _, d := range p.Drops {
			out = append(out, dropRow{Drop: d, PDB: p.Namespace + "/" + p.Name})
		}
	}
	slices.SortStableFunc(out, func(a, b dropRow) int { return cmp.Compare(a.T, b.T) })
	return out
}

// allowedAtEnd is the budget's disruptionsAllowed at the end.
func allowedAtEnd(p *report.PDB) string {
	n := len(p.Series.Allowed)
	switch {
	case p.SyncError != "":
		return "0 (fails safe)"
	case n == 0:
		return "-"
	}
	return fmt.Sprint(p.Series.Allowed[n-1])
}

// pdbRows are the budgets the PodDisruptionBudget table lists, in the
// report's order: every one that went below its floor, lost a pod below
// it or fails safe, and at most MaxQuietPDBRows of the others (at most
// MaxTableRows in all); More counts those left out, LoudMore those of
// them that are not quiet.
func pdbRows(r *report.Report) (out struct {
	Rows           []report.PDB
	More, LoudMore int
}) {
	quiet := 0
	for _, p := range r.PDBs {
		loud := len(p.Drops) > 0 || p.BelowFloorSeconds > 0 || p.SyncError != ""
		if len(out.Rows) == MaxTableRows || (!loud && quiet == MaxQuietPDBRows) {
			out.More++
			if loud {
				out.LoudMore++
			}
			continue
		}
		if !loud {
			quiet++
		}
		out.Rows = append(out.Rows, p)
	}
	return out
}
