// Package browsertest starts headless Chromium (Debian's chromium package,
// driven by chromedp) for the browser tests of the HTML report and the live
// view. It is imported by tests only.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/chromedp/chromedp"
)

// ChromiumPath finds the browser ($LADDER_CHROMIUM, else
// /usr/bin/chromium), installing it with scripts/ensure-chromium.sh when it
// is missing; the test skips, saying why, only when it cannot be had.
func ChromiumPath(t testing.TB) string {
	t.Helper()
	path := os.Getenv("LADDER_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "..", "scripts", "ensure-chromium.sh")
	out, err := exec.Command("sh", script).CombinedOutput()
	if _, statErr := os.Stat(path); statErr != nil {
		t.Skipf("headless Chromium %s is missing and scripts/ensure-chromium.sh could not install it (%v): %s", path, err, out)
	}
	return path
}

// Browser starts headless Chromium with a fresh profile and a 1280×900
// window; it stops with the test.
func Browser(t testing.TB) context.Context {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(ChromiumPath(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("starting %s: %v", ChromiumPath(t), err)
	}
	return ctx
}
