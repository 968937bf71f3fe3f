//go:build browser

package htmlreport_test

// The browser tests load the HTML report in headless Chromium (Debian's
// chromium package, driven by chromedp) from a server on 127.0.0.1 and
// check what a reader sees: the nodes, the versions, charts drawn with
// their data, nothing fetched, no script error, the time to load. They
// save screenshots in the test's artifact directory (go test -artifacts),
// and with LADDER_SCREENSHOTS=DIR in DIR too (make browser-screenshots
// writes the README's into docs/img). Run them with make browser-test;
// scripts/ensure-chromium.sh installs Chromium when it is missing.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ladder-eks/ladder/internal/browsertest"
	"github.com/ladder-eks/ladder/internal/htmlreport"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/timeline"
)

// loadLimit is the bound on opening the report, for the workshop
// and for 5,000 nodes.
const loadLimit = 2 * time.Second

// seen is what the page showed, read by pageProbe.
type seen struct {
	Charts        int      `json:"charts"`
	DrawMs        float64  `json:"drawMs"`
	NodeRows      int      `json:"nodeRows"`
	CountSeries   []string `json:"countSeries"`
	VersionLabels []string `json:"versionLabels"`
	StepItems     int      `json:"stepItems"`
	StepDrawn     int      `json:"stepDrawn"`
	WorkloadLines int      `json:"workloadLines"`
	WorkloadDrawn int      `json:"workloadDrawn"`
	PDBLines      int      `json:"pdbLines"`
	PoolPoints    int      `json:"poolPoints"`
	Legend        string   `json:"legend"`
	NodesSummary  string   `json:"nodesSummary"`
	Status        string   `json:"status"`
	AriaLabels    int      `json:"ariaLabels"`
}

// pageProbe draws the charts not drawn yet (those below the first
// screen wait to be scrolled to) and reads them back from ECharts' own
// instances: the data each holds and how many elements it drew.
const pageProbe = `(function () {
  var started = performance.now();
  var out = { charts: window.ladderReport.drawAll(), drawMs: performance.now() - started, nodeRows: 0, countSeries: [], versionLabels: [],
    workloadLines: 0, workloadDrawn: 0, pdbLines: 0, poolPoints: 0, ariaLabels: 0 };
  function inst(el) { return echarts.getInstanceByDom(el); }
  function drawn(c) { return c.getZr().storage.getDisplayList().length; }
  document.querySelectorAll('[data-chart="group"]').forEach(function (el) {
    var o = inst(el).getOption();
    if (o.yAxis[0].type === 'category') {
      out.nodeRows += o.yAxis[0].data.length;
      o.series[0].data.forEach(function (d) { if (d.value[3]) { out.versionLabels.push(d.value[3]); } });
    } else {
      o.series.forEach(function (s) { if (s.data.some(function (p) { return p[1] > 0; })) { out.countSeries.push(s.name); } });
    }
  });
  var steps = inst(document.getElementById('chart-steps'));
  out.stepItems = steps.getOption().series[0].data.length;
  out.stepDrawn = drawn(steps);
  document.querySelectorAll('[data-chart="workload"]').forEach(function (el) {
    var c = inst(el);
    out.workloadLines += c.getOption().series.length;
    out.workloadDrawn += drawn(c);
  });
  document.querySelectorAll('[data-chart="pdb"]').forEach(function (el) {
    out.pdbLines += inst(el).getOption().series.filter(function (s) { return s.type === 'line'; }).length;
  });
  document.querySelectorAll('[data-chart="nodepool"]').forEach(function (el) {
    out.poolPoints += inst(el).getOption().series[0].data.length;
  });
  document.querySelectorAll('[data-chart]').forEach(function (el) { if (el.getAttribute('aria-label')) { out.ariaLabels++; } });
  function text(id) { var el = document.getElementById(id); return el ? el.textContent : ''; }
  out.legend = text('legend');
  out.nodesSummary = text('nodes-summary');
  out.status = document.getElementById('status-line').textContent;
  return out;
})()`

// load serves the page on 127.0.0.1, opens it and reads what it shows.
// Any request but the page's own (and the browser's favicon) fails the
// test, and so does a script error.
func load(t *testing.T, ctx context.Context, html []byte) seen {
	t.Helper()
	var mu sync.Mutex
	var requests, exceptions []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/report.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(html)
		case "/favicon.ico": // the browser's, not the page's
			http.NotFound(w, r)
		default:
			mu.Lock()
			requests = append(requests, r.URL.String())
			mu.Unlock()
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	pageURL := srv.URL + "/report.html"
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; u != pageURL && u != srv.URL+"/favicon.ico" && !strings.HasPrefix(u, "data:") {
				requests = append(requests, u)
			}
		case *runtime.EventExceptionThrown:
			exceptions = append(exceptions, (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
		}
	}); err != nil {
		t.Fatal(err)
	}
	// The time to ready is the best of up to three loads: the machine's
	// other work slows a load down, never speeds it up.
	var readyMs, scriptMs float64
	var wall time.Duration
	for attempt := 1; attempt <= 3; attempt++ {
		started := time.Now()
		if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
			t.Fatalf("loading the report: %v", err)
		}
		// When the page had drawn its first screen of charts, since the
		// navigation began, by the browser's clock.
		ready, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`+document.body.getAttribute('data-ready-ms')`))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		script, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`+document.body.getAttribute('data-script-ms')`))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		if attempt == 1 || ready < readyMs {
			readyMs, scriptMs, wall = ready, script, time.Since(started)
		}
		if readyMs <= float64(loadLimit.Milliseconds()) {
			break
		}
		t.Logf("load %d: ready in %.0f ms", attempt, ready)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[seen](pageProbe))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	t.Logf("%d bytes: ready to read in %.0f ms, its script begun at %.0f ms (%s wall with the driver); the other charts (%d in all) drawn in %.0f ms", len(html), readyMs, scriptMs, wall.Round(time.Millisecond), got.Charts, got.DrawMs)
	mu.Lock()
	defer mu.Unlock()
	if len(requests) > 0 {
		t.Errorf("the page fetched %v: it must open offline", requests)
	}
	if len(exceptions) > 0 {
		t.Errorf("script errors: %v", exceptions)
	}
	if readyMs <= 0 || readyMs > float64(loadLimit.Milliseconds()) {
		t.Errorf("the page took %.0f ms to load and draw its first screen, want at most %s", readyMs, loadLimit)
	}
	return got
}

// screenshot saves the whole page in the test's artifact directory, and
// each named section there and in $LADDER_SCREENSHOTS (as
// report-PREFIX-SECTION.png).
func screenshot(t *testing.T, ctx context.Context, prefix string, sections ...string) {
	t.Helper()
	art := t.ArtifactDir()
	// A very long page (thousands of table rows) is beyond what the
	// browser captures in one image: the sections still are.
	if full, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		t.Logf("no screenshot of the whole page: %v", err)
	} else if err := os.WriteFile(filepath.Join(art, prefix+".png"), full, 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := []string{art}
	if d := os.Getenv("LADDER_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for _, s := range sections {
		png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#"+s)))
		if err != nil {
			t.Fatalf("screenshot of #%s: %v", s, err)
		}
		for _, d := range dirs {
			if err := os.WriteFile(filepath.Join(d, "report-"+prefix+"-"+s+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("screenshots in %s", strings.Join(dirs, ", "))
}

func write(t *testing.T, rep *report.Report, tl *timeline.Timeline) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, tl); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The workshop's report as a reader sees it: every node over the
// rehearsal on a row, 1.30 and 1.31 on the bars, the steps and the probe's
// outages drawn, each workload's lines drawn.
func TestBrowserWorkshopReport(t *testing.T) {
	ctx := browsertest.Browser(t)
	rep, tl := rehearsal(t, "workshop")
	got := load(t, ctx, write(t, rep, tl))

	wantCharts := 1 + len(tl.Groups) + 1 + len(tl.Workloads) + len(tl.PDBs) + len(tl.NodePools)
	if got.Charts != wantCharts {
		t.Errorf("%d charts drawn, want %d", got.Charts, wantCharts)
	}
	if got.NodeRows != tl.NodesSeen || tl.NodesSeen == 0 {
		t.Errorf("%d node rows, want the %d nodes of the rehearsal", got.NodeRows, tl.NodesSeen)
	}
	if want := fmt.Sprintf("%d nodes over the rehearsal, %d at the end", tl.NodesSeen, len(rep.Nodes)); !strings.Contains(got.NodesSummary, want) {
		t.Errorf("nodes summary %q, want %q", got.NodesSummary, want)
	}
	for _, v := range []string{"1.30", "1.31"} {
		if !strings.Contains(got.Legend, "kubelet v"+v+".") {
			t.Errorf("legend %q lacks kubelet %s", got.Legend, v)
		}
		if !contains(got.VersionLabels, v) {
			t.Errorf("no node bar labelled %s: %v", v, got.VersionLabels)
		}
	}
	if want := len(rep.Phases) + len(rep.Probe.Outages); got.StepItems != want || got.StepDrawn < want {
		t.Errorf("steps chart: %d items, %d elements drawn; want %d items, each drawn", got.StepItems, got.StepDrawn, want)
	}
	if got.WorkloadLines < 2*len(tl.Workloads) || got.WorkloadDrawn < got.WorkloadLines {
		t.Errorf("workload charts: %d lines, %d elements drawn for %d workloads", got.WorkloadLines, got.WorkloadDrawn, len(tl.Workloads))
	}
	if got.PoolPoints < 2 {
		t.Errorf("NodePool chart has %d points", got.PoolPoints)
	}
	if got.AriaLabels != got.Charts {
		t.Errorf("%d of %d charts have an aria-label describing them", got.AriaLabels, got.Charts)
	}
	if !strings.Contains(got.Status, "Scenario workshop (seed 1): succeeded after ") {
		t.Errorf("status line %q", got.Status)
	}
	if got.PDBLines != 3*len(tl.PDBs) || len(tl.PDBs) != len(rep.PDBs) {
		t.Errorf("PDB charts: %d lines for %d charts (%d PDBs): want healthy, floor and allowed each", got.PDBLines, len(tl.PDBs), len(rep.PDBs))
	}
	screenshot(t, ctx, "workshop", "steps", "nodes", "workloads")
}

// pdbProbe draws every chart and reads the first PodDisruptionBudget chart
// with a drop back from ECharts: its series, the spans shaded below the
// floor and the marks; then it shows the tooltip at the first mark.
const pdbProbe = `(function () {
  window.ladderReport.drawAll();
  var out = { series: [], below: 0, marks: [] };
  var el = Array.prototype.slice.call(document.querySelectorAll('[data-chart="pdb"]')).filter(function (el) {
    return echarts.getInstanceByDom(el).getOption().series.some(function (s) { return s.type === 'scatter'; });
  })[0];
  if (!el) { return out; }
  el.scrollIntoView();
  window.ladderTip = el;
  var c = echarts.getInstanceByDom(el);
  var o = c.getOption();
  out.below = o.series[0].markArea.data.length;
  var first = -1;
  o.series.forEach(function (s, i) {
    out.series.push(s.name);
    if (s.type === 'scatter') {
      if (first < 0) { first = i; }
      s.data.forEach(function (d) { out.marks.push(s.name + ' ' + d.value[0] + ' ' + d.value[1]); });
    }
  });
  c.dispatchAction({ type: 'showTip', seriesIndex: first, dataIndex: 0 });
  return out;
})()`

type pdbSeen struct {
	Series []string `json:"series"`
	Below  int      `json:"below"`
	Marks  []string `json:"marks"`
}

// tip reads the tooltip shown in the chart pdbProbe chose: its text and
// how many elements of the page's own it holds (an <img> or a <script>
// would be a name that escaped).
func tip(t *testing.T, ctx context.Context) (text string, injected int) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.ladderTip.textContent`))
	if err != nil {
		t.Fatal(err)
	}
	injected, err = chromedp.Run(ctx, chromedp.Evaluate[int](`window.ladderTip.querySelectorAll('img, script, iframe').length`))
	if err != nil {
		t.Fatal(err)
	}
	return text, injected
}

// The PodDisruptionBudget over two StatefulSets (TestPDBSpanningTwoStatefulSets)
// as a reader sees it: healthy, floor and allowed drawn, the span below the
// floor shaded, the pod its node took marked as node removed at the healthy
// count it fell to, and pointing at it names the pod, its node, who took it
// and the step.
func TestBrowserPDBReport(t *testing.T) {
	ctx := browsertest.Browser(t)
	rep, tl := spanningRehearsal(t)
	load(t, ctx, write(t, rep, tl))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[pdbSeen](pdbProbe))
	if err != nil {
		t.Fatal(err)
	}
	var drop report.Drop
	spans := 0 // below the floor: while its pods start, and from the drop
	for _, p := range rep.PDBs {
		if p.Name == "db" {
			drop = p.Drops[0]
			s := p.Series
			for i := range s.T {
				if s.Healthy[i] < s.Desired[i] && (i == 0 || s.Healthy[i-1] >= s.Desired[i-1]) {
					spans++
				}
			}
		}
	}
	if want := []string{"healthy", "floor", "allowed", "node removed"}; !slices.Equal(got.Series, want) || got.Below != spans || spans < 1 ||
		len(got.Marks) != 1 || got.Marks[0] != fmt.Sprintf("node removed %v 2", drop.T) {
		t.Errorf("db/db's chart: series %v, %d spans below the floor, marks %v; want %v, %d spans, a node removed at %v with 2 healthy",
			got.Series, got.Below, got.Marks, want, spans, drop.T)
	}
	text, injected := tip(t, ctx)
	for _, want := range []string{drop.Pod + " (node-removed) on " + drop.Node, "by " + drop.By, "step " + drop.Hop + " node-group default-selfmng", "2 healthy, floor 3, 0 allowed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the tooltip %q lacks %q", text, want)
		}
	}
	if injected != 0 {
		t.Errorf("the tooltip holds %d elements", injected)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`echarts.getInstanceByDom(window.ladderTip).dispatchAction({ type: 'hideTip' }), true`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "pdb", "pdbs")
}

// A name the tooltip shows stays text: the page's script escapes what it
// puts into ECharts' HTML tooltips.
func TestBrowserPDBNamesAreInert(t *testing.T) {
	ctx := browsertest.Browser(t)
	rep, tl := inertReport()
	load(t, ctx, write(t, rep, tl))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[pdbSeen](pdbProbe)); err != nil {
		t.Fatal(err)
	}
	text, injected := tip(t, ctx)
	if injected != 0 || !strings.Contains(text, "ns/"+hostile) || !strings.Contains(text, "by kubectl "+hostile) {
		t.Errorf("the tooltip holds %d elements and reads %q; want the names as text", injected, text)
	}
}

// The workshop upgraded by the executor on the twin with its journal, as
// ladder upgrade --report draws it: a bar per step recorded, the verdict
// of its comparison with the rehearsal, no request beyond the page.
func TestBrowserUpgradeReport(t *testing.T) {
	ctx := browsertest.Browser(t)
	rec := upgraded(t, "workshop")
	var buf bytes.Buffer
	if err := htmlreport.WriteUpgrade(&buf, rec, "journal.json", time.Time{}); err != nil {
		t.Fatal(err)
	}
	got := load(t, ctx, buf.Bytes())
	phases := len(rec.Steps(time.Time{}).Phases)
	if got.Charts != 1 || got.StepItems != phases || got.StepDrawn < phases || phases < 10 {
		t.Errorf("%d charts, steps chart %d items, %d drawn; want 1 chart with the %d steps", got.Charts, got.StepItems, got.StepDrawn, phases)
	}
	if !strings.Contains(got.Status, "Journal journal.json: succeeded after ") {
		t.Errorf("status line %q", got.Status)
	}
	verdict, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('verdict').textContent`))
	if err != nil || !strings.Contains(verdict, "agreed on every step") {
		t.Errorf("verdict %q, %v", verdict, err)
	}
	screenshot(t, ctx, "upgrade", "steps", "compare")
}

// A run above timeline.MaxNodeLives nodes draws each group's nodes as
// counts per version and state. LADDER_BROWSER_NODES sets its size (600
// by default; 5000 for the bound on size and load time).
func TestBrowserLargeReport(t *testing.T) {
	nodes := 600
	if n, err := strconv.Atoi(os.Getenv("LADDER_BROWSER_NODES")); err == nil && n > 0 {
		nodes = n
	}
	ctx := browsertest.Browser(t)
	data, err := scenario.Generate(scenario.GenerateOptions{Nodes: nodes, PodsPerNode: 20, Seed: 1, Mix: true})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(fmt.Sprintf("mix-%d.yaml", nodes), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	rep, tl, err := rehearse.RunTimeline(sc, rehearse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	html := write(t, rep, tl)
	t.Logf("rehearsed and written in %s: %d nodes seen, %d bytes", time.Since(started).Round(time.Millisecond), tl.NodesSeen, len(html))
	if len(html) > 10<<20 {
		t.Errorf("the page is %d bytes, over 10 MiB", len(html))
	}
	got := load(t, ctx, html)
	if got.NodeRows != 0 || len(tl.Nodes) != 0 {
		t.Errorf("%d node rows for %d nodes: above %d a group's nodes are counted, not listed", got.NodeRows, tl.NodesSeen, timeline.MaxNodeLives)
	}
	for _, v := range []string{"1.30", "1.31"} {
		if !strings.Contains(strings.Join(got.CountSeries, " "), v+" ready") {
			t.Errorf("no count of Ready %s nodes drawn: %v", v, got.CountSeries)
		}
	}
	if got.StepItems < len(rep.Phases) || got.WorkloadLines < 2*len(tl.Workloads) {
		t.Errorf("steps %d (phases %d), workload lines %d (workloads %d)", got.StepItems, len(rep.Phases), got.WorkloadLines, len(tl.Workloads))
	}
	screenshot(t, ctx, fmt.Sprintf("mix%d", nodes), "nodes")
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
