//go:build browser || lab

package liveview_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// page is what the view shows, read from the DOM.
type page struct {
	Nodes    int      `json:"nodes"`
	Cards    int      `json:"cards"`
	Pods     int      `json:"pods"`
	Boxes    int      `json:"boxes"`
	Versions []string `json:"versions"`
	States   []string `json:"states"`
	Groups   []string `json:"groups"`
	Steps    []string `json:"steps"`
	Legend   string   `json:"legend"`
	Clock    string   `json:"clock"`
	Replay   bool     `json:"replay"`
	Seq      int      `json:"seq"`
}

const readPage = `(function () {
  var cards = Array.from(document.querySelectorAll('.node[data-name]'));
  var c = document.getElementById('counts');
  return {
    nodes: +(c.dataset.nodes || -1), cards: cards.length, pods: +(c.dataset.pods || -1),
    boxes: document.querySelectorAll('.node[data-name] .pod').length,
    versions: cards.map(function (e) { return e.dataset.version; }),
    states: cards.map(function (e) { return e.dataset.state; }),
    groups: Array.from(document.querySelectorAll('.group > h2 button')).map(function (e) { return e.textContent; }),
    steps: Array.from(document.querySelectorAll('#steps li')).map(function (e) { return e.textContent; }),
    legend: document.getElementById('legend').textContent,
    clock: document.getElementById('clock').textContent,
    replay: !document.getElementById('replay').hidden,
    seq: +(document.body.dataset.seq || -1),
  };
})()`

func read(t *testing.T, ctx context.Context) page {
	t.Helper()
	p, err := chromedp.Run(ctx, chromedp.Evaluate[page](readPage))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor polls the page until cond holds, up to limit.
func waitFor(t *testing.T, ctx context.Context, what, cond string, limit time.Duration) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		p := read(t, ctx)
		t.Fatalf("%s: not within %s (%v); the page shows %d nodes, %d cards, clock %q", what, limit, err, p.Nodes, p.Cards, p.Clock)
	}
}

// screenshot saves the whole page as view-NAME.png in the test's artifact
// directory, and in $LADDER_SCREENSHOTS when set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("LADDER_SCREENSHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "view-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
