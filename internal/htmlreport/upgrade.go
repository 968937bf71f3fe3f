package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/journal"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/timeline"
)

//go:embed upgrade.html.tmpl
var upgradeTemplate string

// upgradeView is what the upgrade's page renders.
type upgradeView struct {
	Steps          *report.Report
	Status         *journal.Status
	Comparison     *journal.Comparison
	CompareError   string
	LibraryVersion string
	Library        template.JS
	Script         template.JS
	Style          template.CSS
	Data           template.JS
}

// WriteUpgrade renders an upgrade as its journal recorded it — `ladder
// upgrade --report` and `ladder upgrade status --report`: its steps over
// wall-clock time (drawn as a rehearsal's are), the status table, the
// drains that paused it, and, for a finished upgrade, the comparison with
// the rehearsal it made when it began. now ends a step still running.
func WriteUpgrade(w io.Writer, rec *journal.Record, where string, now time.Time) error {
	steps := rec.Steps(now)
	v := upgradeView{Steps: steps, Status: rec.Status(where, now),
		Library: template.JS(echartsJS), LibraryVersion: strings.TrimSpace(echartsVersion),
		Script: template.JS(pageJS), Style: template.CSS(pageCSS)}
	if c, err := rec.Compare(); err != nil {
		v.CompareError = err.Error()
	} else {
		v.Comparison = c
	}
	data, err := json.Marshal(struct {
		Report   Steps              `json:"report"`
		Timeline *timeline.Timeline `json:"timeline"`
		Clock    string             `json:"clock"`
	}{
		Report: Steps{Scenario: steps.Scenario, Status: steps.Status, Hops: steps.Hops, Phases: steps.Phases},
		// The journal has no node lives: the page draws only the steps.
		Timeline: &timeline.Timeline{End: steps.MakespanSeconds, Versions: []string{}, Groups: []timeline.Group{},
			Nodes: []timeline.NodeLife{}, Workloads: []timeline.Workload{}, PDBs: []timeline.PDB{}, NodePools: []timeline.NodePool{}},
		Clock: "wall-clock time",
	})
	if err != nil {
		return err
	}
	v.Data = template.JS(data)
	var buf bytes.Buffer
	if err := upgradePage.Execute(&buf, v); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

var upgradePage = template.Must(template.New("upgrade").Funcs(template.FuncMap{
	"duration":    report.Duration,
	"secs":        func(p *float64) string { return report.Duration(*p) },
	"stepsHeight": func(r *report.Report) int { return RangeHeight(len(r.Phases)) },
	"verdict":     func(c *journal.Comparison) string { return c.Verdict() },
	"ratio":       func(r *float64) string { return fmt.Sprintf("%.2f", *r) },
	"kubelets":    journal.KubeletList,
	"addons": func(a map[string]string) string {
		var parts []string
		for _, n := range slices.Sorted(maps.Keys(a)) {
			parts = append(parts, n+" "+a[n])
		}
		return strings.Join(parts, ", ")
	},
}).Parse(upgradeTemplate))
