package journal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/termtext"
)

var t0 = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

// TestFileJournal: what one run puts, the next run gets; a second opener
// of the same file is refused while the first holds it; a journal of
// another cluster or target, or a file that is not a journal, is refused
// with the fix.
func TestFileJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.json")
	j, err := OpenFile(path, "prod", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Put("1.31/control-plane/UpdateClusterVersion", executor.Entry{State: executor.Called, ID: "u-1", At: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(path, "prod", "1.31"); err == nil || !strings.Contains(err.Error(), "in use by another ladder upgrade") {
		t.Errorf("second opener: %v", err)
	}
	j.Close()
	again, err := OpenFile(path, "prod", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if e, ok := again.Get("1.31/control-plane/UpdateClusterVersion"); !ok || e.ID != "u-1" || e.State != executor.Called || !e.At.Equal(t0) {
		t.Errorf("after reopening: %+v %v", e, ok)
	}
	again.Close()
	for _, c := range []struct{ cluster, to, want string }{
		{"staging", "1.31", "the journal is cluster prod's, not staging's"},
		{"prod", "1.32", "holds an upgrade to 1.31, not 1.32"},
	} {
		if _, err := OpenFile(path, c.cluster, c.to); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.cluster, c.to, err, c.want)
		}
	}
	bad := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(bad, []byte("my notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(bad, "prod", "1.31"); err == nil || !strings.Contains(err.Error(), "not a Ladder journal") {
		t.Errorf("a file that is not a journal: %v", err)
	}
	if data, _ := os.ReadFile(bad); string(data) != "my notes" {
		t.Errorf("the file was changed: %q", data)
	}
}

// TestClusterJournal: the journal lives in the ConfigMap across openers;
// the Lease keeps a second upgrade out, naming the holder, until the first
// closes or its Lease expires.
func TestClusterJournal(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewSimpleClientset()
	now := t0
	clock := func() time.Time { return now }
	a, err := OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "laptop/1", Now: clock, Renew: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Put("1.31/node-group/initial", executor.Entry{State: executor.StepDone, At: t0}); err != nil {
		t.Fatal(err)
	}
	_, err = OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "ci/7", Now: clock, Renew: -1})
	if err == nil || !strings.Contains(err.Error(), "another ladder upgrade holds lease kube-system/ladder-upgrade (holder laptop/1") {
		t.Fatalf("a second upgrade while the first runs: %v", err)
	}
	// laptop/1 is killed: no Close, no renewal. A minute later its Lease
	// has expired and the next upgrade takes over, with the journal.
	now = now.Add(LeaseDuration + time.Second)
	b, err := OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "ci/7", Now: clock, Renew: -1})
	if err != nil {
		t.Fatalf("after the Lease expired: %v", err)
	}
	if e, ok := b.Get("1.31/node-group/initial"); !ok || e.State != executor.StepDone {
		t.Errorf("the journal in the ConfigMap: %+v %v", e, ok)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// Released: the next opener needs no expiry.
	c, err := OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "laptop/2", Now: clock, Renew: -1})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	c.Close()
}

// TestLeaseWithAFileJournal: an upgrade that keeps its journal in a file
// holds the Lease all the same, so an upgrade with the in-cluster journal
// is refused while it runs, naming it.
func TestLeaseWithAFileJournal(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewSimpleClientset()
	clock := func() time.Time { return t0 }
	l, err := HoldLease(ctx, cs, ClusterOptions{Identity: "laptop/1", Now: clock, Renew: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "ci/7", Now: clock, Renew: -1})
	if err == nil || !strings.Contains(err.Error(), "(holder laptop/1") {
		t.Fatalf("an upgrade while a file-journal upgrade runs: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "ci/7", Now: clock, Renew: -1})
	if err != nil {
		t.Fatalf("after the file-journal upgrade ended: %v", err)
	}
	c.Close()
}

// TestClusterJournalDeadHolder: a holder that no longer runs — killed on
// this host, where its pid is gone — is taken over at once, without
// waiting for its Lease to expire; a live one is not.
func TestClusterJournalDeadHolder(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewSimpleClientset()
	clock := func() time.Time { return t0 }
	if _, err := OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "laptop/1", Now: clock, Renew: -1}); err != nil {
		t.Fatal(err)
	}
	alive := func(string) bool { return false }
	if _, err := OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "laptop/2", Now: clock, Renew: -1, Gone: alive}); err == nil {
		t.Fatal("took the Lease of a live holder")
	}
	dead := func(h string) bool { return h == "laptop/1" }
	b, err := OpenCluster(ctx, cs, "prod", "1.31", ClusterOptions{Identity: "laptop/2", Now: clock, Renew: -1, Gone: dead})
	if err != nil {
		t.Fatalf("a dead holder's Lease: %v", err)
	}
	b.Close()
}

// deadOnThisHost finds this process alive, and a pid of this host that no
// process has gone; another host's holder is never judged gone.
func TestDeadOnThisHost(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no signal 0 to look for a process with")
	}
	host, _ := os.Hostname()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		holder string
		want   bool
	}{
		{host + "/" + strconv.Itoa(os.Getpid()), false},
		{host + "/" + strconv.Itoa(gone.Process.Pid), true},
		{"another-host/" + strconv.Itoa(gone.Process.Pid), false},
		{"laptop", false},
	} {
		if got := deadOnThisHost(c.holder); got != c.want {
			t.Errorf("%s: gone %v, want %v", c.holder, got, c.want)
		}
	}
}

// TestJournalBegin: the first run records its plan; a resumed run gets it
// back, and its own Begin changes nothing.
func TestJournalBegin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.json")
	j, err := OpenFile(path, "prod", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := j.Plan(); ok {
		t.Fatal("a new journal holds a plan")
	}
	v130, v131 := kubeversion.MustParse("1.30"), kubeversion.MustParse("1.31")
	first := plan.Plan{Hops: []plan.Hop{{From: v130, To: v131, Steps: []plan.Step{
		{Kind: plan.ControlPlane, From: "1.30", To: "1.31"},
		{Kind: plan.AddonUpdate, Name: "kube-proxy", From: "v1.30.14-eksbuild.28", To: "v1.31.14-eksbuild.20"},
	}}}}
	if err := j.Begin(first); err != nil {
		t.Fatal(err)
	}
	j.Close()
	again, err := OpenFile(path, "prod", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.Begin(plan.Plan{}); err != nil {
		t.Fatal(err)
	}
	if got, ok := again.Plan(); !ok || !reflect.DeepEqual(got, first) {
		t.Errorf("the resumed run's plan: %+v %v, want the first run's %+v", got, ok, first)
	}
}

// TestRecordText: status lists the entries in the order they were
// recorded, with the id a resumed run waits on and a failure's message.
func TestRecordText(t *testing.T) {
	r := &Record{Cluster: "prod", To: "1.31", Entries: map[string]executor.Entry{
		"1.31/pre-checks":                         {State: executor.StepDone, At: t0},
		"1.31/control-plane":                      {State: executor.StepStarted, At: t0.Add(time.Second)},
		"1.31/control-plane/UpdateClusterVersion": {State: executor.Called, ID: "u-1", At: t0.Add(2 * time.Second)},
		"1.31/addon/kube-proxy":                   {State: executor.StepFailed, Message: "InvalidParameterException: Addon version specified is not supported", At: t0.Add(3 * time.Second)},
	}}
	var b strings.Builder
	if err := r.WriteText(&b, "configmap kube-system/ladder-upgrade"); err != nil {
		t.Fatal(err)
	}
	want := `Upgrade of prod to 1.31 (journal: configmap kube-system/ladder-upgrade)
KEY                                       STATE     AT                     ID / MESSAGE
1.31/pre-checks                           done      2026-12-04T10:00:00Z   -
1.31/control-plane                        started   2026-12-04T10:00:01Z   -
1.31/control-plane/UpdateClusterVersion   called    2026-12-04T10:00:02Z   u-1
1.31/addon/kube-proxy                     failed    2026-12-04T10:00:03Z   InvalidParameterException: Addon version specified is not supported
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestRecordTextIsInert: a message the journal recorded from the cluster or
// AWS (a pod's name, an error's text) cannot move the cursor, clear the
// screen or forge a line of the status: it is printed escaped.
func TestRecordTextIsInert(t *testing.T) {
	r := &Record{Cluster: "prod", To: "1.31", Entries: map[string]executor.Entry{
		"1.31/node-group/initial": {State: executor.StepFailed, At: t0,
			Message: "evicting pod shop/x\x1b[2J\x1b]0;pwned\x07: refused\n1.31/node-group/initial   done      2026-12-04T10:00:00Z   -\u202e"},
	}}
	var b strings.Builder
	if err := r.WriteText(&b, "journal.json"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("%d lines, want 3 (a line forged by the message):\n%s", n, out)
	}
	if i, r := termtext.FirstRaw([]byte(out), true); i >= 0 {
		t.Errorf("raw %U at byte %d of\n%q", r, i, out)
	}
}
