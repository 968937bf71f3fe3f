//go:build lab

package e2e

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ladder-eks/ladder/internal/browsertest"
)

// liveView is `ladder view --journal FILE` on a lab, open in headless
// Chromium: what a user watching an upgrade sees.
type liveView struct {
	ctx context.Context
}

// startView runs the ladder binary's `ladder view` against the lab with
// the upgrade's journal file, and opens its page.
func startView(t *testing.T, l *lab, journalFile string) *liveView {
	t.Helper()
	cmd := exec.Command(ladderBin, "view", "--journal", journalFile, "--addr", "127.0.0.1:0")
	cmd.Env = l.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("ladder view printed no address: %v", err)
	}
	m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/) `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("ladder view: %q", line)
	}
	ctx := browsertest.Browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(m[1])); err != nil {
		t.Fatal(err)
	}
	return &liveView{ctx: ctx}
}

// await polls the page until the JavaScript condition holds.
func (v *liveView) await(t *testing.T, what, cond string, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(v.ctx, limit)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		text, _ := chromedp.Run(v.ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 1500)`))
		t.Fatalf("ladder view: %s: not within %s (%v); the page reads:\n%s", what, limit, err, text)
	}
}

// screenshot saves the page as view-NAME.png in the test's artifacts (and
// $LADDER_SCREENSHOTS).
func (v *liveView) screenshot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(v.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("LADDER_SCREENSHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "view-"+name+".png"), png, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// JavaScript conditions on the view's page.
const (
	// viewUpgrading: a step under way and a node of the group cordoned or
	// draining, on its card in text.
	viewUpgrading = `document.querySelector('#steps li.started') !== null &&
  Array.from(document.querySelectorAll('.node[data-name]')).some(function (c) { return /cordoned|draining/.test(c.dataset.state) && /cordoned|draining/.test(c.textContent); })`
	// viewUpgraded: every card at 1.31, none cordoned, every step done.
	viewUpgraded = `document.querySelectorAll('.node[data-name]').length > 0 &&
  Array.from(document.querySelectorAll('.node[data-name]')).every(function (c) { return c.dataset.version.indexOf('v1.31.') === 0 && c.dataset.state === 'ready'; }) &&
  document.querySelectorAll('#steps li').length > 0 && document.querySelectorAll('#steps li:not(.done)').length === 0`
)
