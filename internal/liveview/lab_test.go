//go:build lab

package liveview_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ladder-eks/ladder/internal/browsertest"
	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/journal"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
	"github.com/ladder-eks/ladder/internal/liveview"
	"github.com/ladder-eks/ladder/internal/materialize"
)

// TestMain shares one lab among the package's lab tests and stops it after
// the last one.
func TestMain(m *testing.M) { labtest.Main(m) }

// impersonate is cfg acting as a user of group only.
func impersonate(cfg *rest.Config, group string) kubernetes.Interface {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: "viewer-" + group, Groups: []string{group}}
	return kubernetes.NewForConfigOrDie(c)
}

// The live view on the lab's real API server, holding only the rights of
// deploy/ladder-view-rbac.yaml: headless Chromium shows the lab's KWOK
// nodes with their group and version and the upgrade's journal; a node
// cordoned with client-go reaches the page as it happens. Without the
// role, the view stops at once with the forbidden list and the file to
// apply.
func TestBrowserViewOnTheLab(t *testing.T) {
	cfg := labtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(cfg)
	labtest.ApplyRBAC(t, ctx, admin, "../../deploy/ladder-view-rbac.yaml", true)

	if err := liveview.Watch(ctx, impersonate(cfg, "nobody"), liveview.NewHub("x"), nil); err == nil ||
		!strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), "deploy/ladder-view-rbac.yaml") {
		t.Fatalf("a view without rights: %v, want forbidden naming the role's file", err)
	}

	var names []string
	for i := range 3 {
		name := fmt.Sprintf("view-%d", i)
		n := materialize.KWOKNode(&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				"eks.amazonaws.com/nodegroup": "view-ng", corev1.LabelInstanceTypeStable: "m5.large", corev1.LabelHostname: name,
			}},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.30.14-eks-f69f56f"}},
		})
		if _, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		names = append(names, name)
	}

	// An upgrade's journal, as `ladder upgrade --journal FILE` keeps it,
	// with its control-plane step under way.
	jf := filepath.Join(t.TempDir(), "upgrade.journal")
	j, err := journal.OpenFile(jf, "lab", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.SetRehearsal([]journal.RehearsedStep{{Key: "1.31/control-plane", Seconds: 600}, {Key: "1.31/nodegroup/view-ng", Seconds: 900}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Put("1.31/control-plane", executor.Entry{State: executor.StepStarted}); err != nil {
		t.Fatal(err)
	}
	j.Close()

	viewer := impersonate(cfg, "ladder-view")
	hub := liveview.NewHub(cfg.Host)
	// RBAC reaches the authorizer through its informers: retry the start
	// until the new binding lets the lists through.
	var watchErr error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		watchErr = liveview.Watch(ctx, viewer, hub, liveview.FileJournal(jf))
		return watchErr == nil, nil
	})
	if watchErr != nil {
		t.Fatalf("the view with deploy/ladder-view-rbac.yaml's rights: %v", watchErr)
	}
	go hub.Run(ctx, liveview.FlushEvery)
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = liveview.Handler(hub, nil, liveview.Access{Addr: srv.Listener.Addr()})
	srv.Start()
	// Closed after the browser (cleanups run last first): Close waits for
	// the page's event stream to end.
	t.Cleanup(srv.Close)

	bctx := browsertest.Browser(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	ready := make([]string, len(names))
	for i, n := range names {
		ready[i] = fmt.Sprintf(`(document.querySelector('.node[data-name="%s"]')||{dataset:{}}).dataset.state === 'ready'`, n)
	}
	waitFor(t, bctx, "the lab's nodes Ready on the page", strings.Join(ready, " && "), 60*time.Second)
	p := read(t, bctx)
	if !strings.Contains(strings.Join(p.Groups, "|"), "view-ng — managed node group") {
		t.Fatalf("groups on the page: %q", p.Groups)
	}
	if !strings.Contains(strings.Join(p.Steps, "|"), "1.31 control-plane — started") {
		t.Fatalf("steps on the page: %q, want the journal's started control plane", p.Steps)
	}

	// Cordon one node, as kubectl cordon does: the page shows it.
	cordoned := time.Now()
	n, err := admin.CoreV1().Nodes().Get(ctx, names[1], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Spec.Unschedulable = true
	if _, err := admin.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, bctx, "the cordon on the page", fmt.Sprintf(`document.querySelector('.node[data-name="%s"]').dataset.state === 'cordoned' && document.querySelector('.node[data-name="%s"]').textContent.indexOf('cordoned') >= 0`, names[1], names[1]), 30*time.Second)
	t.Logf("cordon to page: %s", time.Since(cordoned).Round(time.Millisecond))
	for _, other := range []string{names[0], names[2]} {
		if st, err := chromedp.Run(bctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('.node[data-name="%s"]').dataset.state`, other))); err != nil || st != "ready" {
			t.Fatalf("node %s on the page: %q (%v), want ready", other, st, err)
		}
	}
	screenshot(t, bctx, "lab")
	if d := os.Getenv("LADDER_SCREENSHOTS"); d != "" {
		t.Logf("screenshot in %s", d)
	}
}
