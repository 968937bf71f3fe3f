//go:build browser

package liveview_test

// The browser tests load `ladder view`'s page in headless Chromium from a
// server on 127.0.0.1 and check what a user sees: the node cards with
// their versions, the replay's controls moving the cluster, keyboard
// navigation, and — with 2,000 nodes and 40,000 pods — how long the page
// takes to draw and to apply each delta. Screenshots go to the test's
// artifact directory, and with LADDER_SCREENSHOTS=DIR to DIR too (make
// browser-screenshots writes docs/img/view-*.png).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ladder-eks/ladder/internal/browsertest"
	"github.com/ladder-eks/ladder/internal/liveview"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// serve replays a scenario, paused at its start, on 127.0.0.1.
func serve(t *testing.T, sc *scenario.Scenario) (*liveview.Replay, *liveview.Player, string) {
	t.Helper()
	r, _, err := liveview.Record(sc, rehearse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hub := liveview.NewHub(sc.Path)
	p := liveview.NewPlayer(r, hub, 60, true)
	hub.Flush()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go hub.Run(ctx, liveview.FlushEvery)
	go p.Run(ctx, liveview.FlushEvery)
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = liveview.Handler(hub, p, liveview.Access{Addr: srv.Listener.Addr()})
	srv.Start()
	t.Cleanup(srv.Close)
	return r, p, srv.URL
}

// The workshop's rehearsal replayed: at the start every node at 1.30, in
// its group; the slider moved half way shows the upgrade under way; moved
// to the end, every node at 1.31 and every step done; arrow keys move
// between nodes and the details follow.
func TestBrowserViewReplay(t *testing.T) {
	sc, err := scenario.Resolve("workshop")
	if err != nil {
		t.Fatal(err)
	}
	r, _, url := serve(t, sc)
	start, end := r.StateAt(0), r.StateAt(r.End())
	ctx := browsertest.Browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the snapshot drawn", fmt.Sprintf(`document.querySelectorAll('.node[data-name]').length === %d`, len(start.Nodes)), 10*time.Second)
	p := read(t, ctx)
	if p.Nodes != len(start.Nodes) || p.Pods != len(start.Pods) || !p.Replay {
		t.Fatalf("at the start the page shows %d nodes and %d pods (replay controls %v), want %d and %d", p.Nodes, p.Pods, p.Replay, len(start.Nodes), len(start.Pods))
	}
	for i, v := range p.Versions {
		if !strings.HasPrefix(v, "v1.30.") || p.States[i] != "ready" {
			t.Fatalf("card %d at the start: %s, %s", i, v, p.States[i])
		}
	}
	for _, g := range []string{"initial — managed node group", "default-selfmng — self-managed group", "default — Karpenter NodePool", "fp-profile — Fargate profile"} {
		if !strings.Contains(strings.Join(p.Groups, "|"), g) {
			t.Fatalf("no group %q among %q", g, p.Groups)
		}
	}
	if !strings.Contains(p.Legend, "kubelet v1.30.") || !strings.Contains(p.Legend, "cordoned (stripes)") {
		t.Fatalf("legend %q", p.Legend)
	}

	// Half way, by the slider as a user moves it.
	mid := findBusy(t, r)
	seek := func(at float64) {
		t.Helper()
		js := fmt.Sprintf(`(function(){var s=document.getElementById('seek'); s.value='%d'; s.dispatchEvent(new Event('change')); return true;})()`, int(at))
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
			t.Fatal(err)
		}
	}
	seek(mid)
	want := r.StateAt(float64(int(mid)))
	cordoned := 0
	for _, n := range want.Nodes {
		if n.Cordoned || n.Draining {
			cordoned++
		}
	}
	waitFor(t, ctx, "the cordoned nodes of the middle drawn", fmt.Sprintf(`document.querySelectorAll('.node[data-name].cordoned, .node[data-name].draining').length === %d && document.querySelectorAll('.node[data-name]').length === %d`, cordoned, len(want.Nodes)), 10*time.Second)
	p = read(t, ctx)
	if !strings.Contains(strings.Join(p.Steps, "|"), "started") {
		t.Fatalf("half way no step is started: %q", p.Steps)
	}
	screenshot(t, ctx, "replay")

	seek(r.End())
	waitFor(t, ctx, "every node at 1.31", `Array.from(document.querySelectorAll('.node[data-name]')).every(function(e){return e.dataset.version.indexOf('v1.31.')===0})`, 10*time.Second)
	p = read(t, ctx)
	if p.Cards != len(end.Nodes) {
		t.Fatalf("at the end %d cards, want %d", p.Cards, len(end.Nodes))
	}
	for _, s := range p.Steps {
		if !strings.Contains(s, "done") {
			t.Fatalf("at the end step %q is not done", s)
		}
	}

	// Keyboard: the first card focused, → moves to the second, and the
	// details panel names it.
	js := `(function(){var c=document.querySelectorAll('.node[data-name]'); c[0].focus(); return [c[0].dataset.name, c[1].dataset.name];})()`
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
		t.Fatal(err)
	}
	focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.dataset.name + '|' + document.querySelector('#details h2').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if focused != names[1]+"|"+names[1] {
		t.Fatalf("after → the focus and details are on %q, want %s", focused, names[1])
	}
}

// findBusy is an instant of the replay with both old and new versions and
// a node cordoned: the middle of an upgrade.
func findBusy(t *testing.T, r *liveview.Replay) float64 {
	t.Helper()
	for at := 0.0; at < r.End(); at += 10 {
		st := r.StateAt(at)
		versions, cordoned := map[string]bool{}, false
		for _, n := range st.Nodes {
			versions[n.Version[:5]] = true
			cordoned = cordoned || n.Cordoned
		}
		if len(versions) > 1 && cordoned {
			return at
		}
	}
	t.Fatal("no instant with a cordoned node and two versions")
	return 0
}

// figures are the page's own measurements (window.ladderView).
type figures struct {
	FirstRenderMs   float64 `json:"firstRenderMs"`
	Renders         int     `json:"renders"`
	Deltas          int     `json:"deltas"`
	LastRenderMs    float64 `json:"lastRenderMs"`
	MaxRenderMs     float64 `json:"maxRenderMs"`
	MaxDeltaApplyMs float64 `json:"maxDeltaApplyMs"`
	Bytes           float64 `json:"bytes"`
	Resyncs         int     `json:"resyncs"`
	// MaxParts splits the slowest redraw: headings and counts, cards,
	// pending pods (ms), and the cards redrawn.
	MaxParts []float64 `json:"maxParts"`
	// MaxDeltaRenderMs is the slowest redraw after a delta (not the
	// snapshot's), MaxDeltaParts its split.
	MaxDeltaRenderMs float64   `json:"maxDeltaRenderMs"`
	MaxDeltaParts    []float64 `json:"maxDeltaParts"`
}

// 2,000 nodes and 40,000 pods (issue: the view stays responsive): the
// page draws every card, then follows the replay at speed; the figures —
// first render, the slowest redraw after a delta, bytes received — are
// logged and written to the artifact directory (docs/view.md quotes them).
func TestBrowserViewLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 nodes: not with -short")
	}
	data, err := scenario.Generate(scenario.GenerateOptions{Nodes: 2000, PodsPerNode: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse("generated-2000.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	r, p, url := serve(t, sc)
	recorded := time.Since(began)
	start := r.StateAt(0)
	if len(start.Nodes) != 2000 || len(start.Pods) < 40000 {
		t.Fatalf("the generated cluster has %d nodes and %d pods", len(start.Nodes), len(start.Pods))
	}
	ctx := browsertest.Browser(t)
	loadStart := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "2,000 cards drawn", `document.querySelectorAll('.node[data-name]').length === 2000 && window.ladderView.firstRenderMs >= 0`, 60*time.Second)
	load := time.Since(loadStart)
	first, err := chromedp.Run(ctx, chromedp.Evaluate[figures](`window.ladderView`))
	if err != nil {
		t.Fatal(err)
	}
	// Play the drift at a speed that sends a few hundred changes a delta.
	if err := p.Do(liveview.Control{Action: "speed", Speed: 30}); err != nil {
		t.Fatal(err)
	}
	if err := p.Do(liveview.Control{Action: "play"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "40 deltas applied", `window.ladderView.deltas >= 40`, 60*time.Second)
	if err := p.Do(liveview.Control{Action: "pause"}); err != nil {
		t.Fatal(err)
	}
	playing, err := chromedp.Run(ctx, chromedp.Evaluate[figures](`window.ladderView`))
	if err != nil {
		t.Fatal(err)
	}
	pg := read(t, ctx)
	if pg.Boxes < 40000 {
		t.Fatalf("%d pod boxes on the cards, want at least 40,000", pg.Boxes)
	}
	if playing.Resyncs != 0 {
		t.Fatalf("the page fell behind and resynced %d times", playing.Resyncs)
	}
	out := map[string]any{
		"nodes": 2000, "pods": len(start.Pods), "changes": r.Changes(), "recordSeconds": recorded.Seconds(),
		"loadToDrawnMs": load.Milliseconds(), "firstRenderMs": first.FirstRenderMs, "snapshotBytes": first.Bytes,
		"deltas": playing.Deltas, "maxRenderMs": playing.MaxRenderMs, "maxRenderParts": playing.MaxParts,
		"maxDeltaRenderMs": playing.MaxDeltaRenderMs, "maxDeltaRenderParts": playing.MaxDeltaParts, "maxDeltaApplyMs": playing.MaxDeltaApplyMs,
		"bytesWhilePlaying": playing.Bytes - first.Bytes,
	}
	js, _ := json.MarshalIndent(out, "", "  ")
	t.Logf("2,000 nodes / %d pods: %s", len(start.Pods), js)
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "view-large.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
}
