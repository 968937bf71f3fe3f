//go:build lab

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/ladder-eks/ladder/internal/journal"
)

// journalWatch follows the in-cluster journal: every (key, state) pair it
// has ever held, across runs.
type journalWatch struct {
	mu      sync.Mutex
	seen    map[string]bool
	changed chan struct{}
}

func watchJournal(t *testing.T, l *lab) *journalWatch {
	t.Helper()
	w := &journalWatch{seen: map[string]bool{}, changed: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactoryWithOptions(l.cs, 0, informers.WithNamespace(journal.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", journal.Name).String()
		}))
	inf := f.Core().V1().ConfigMaps().Informer()
	read := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return
		}
		var rec journal.Record
		if json.Unmarshal([]byte(cm.Data[journal.DataKey]), &rec) != nil {
			return
		}
		w.mu.Lock()
		for k, e := range rec.Entries {
			w.seen[k+" "+e.State] = true
		}
		w.mu.Unlock()
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: read, UpdateFunc: func(_, obj any) { read(obj) }}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("watching the journal: the cache did not sync")
	}
	return w
}

// records is how many (key, state) pairs the journal has held.
func (w *journalWatch) records() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

// TestKillAndResumeOnTheLab: `ladder upgrade --to 1.31 --approve` with the
// in-cluster journal, SIGKILLed as soon as the journal holds one record
// more than when the run started — after every step's start and end and
// every AWS operation's "calling" and "called", so inside the control
// plane's update, between an UpdateAddon and its record, in the middle of
// the node group's rolling update — and run again, until a run finishes on
// its own. Each rerun takes over the Lease its killed predecessor left
// (same host, process gone). At the end: everything at 1.31 as in an
// uninterrupted run, each original node deleted once and as many launched
// as rehearsed, EKS made one update per target, and no PDB was exceeded.
func TestKillAndResumeOnTheLab(t *testing.T) {
	l := startLab(t, smallScenario)
	settle(t, l)
	original := l.nodes(t)
	watch := watchBudgets(t, l)
	jw := watchJournal(t, l)

	began := time.Now()
	var kills []string
	var last string
	for run := 1; ; run++ {
		if run > 40 {
			t.Fatalf("no run finished after %d kills: %v", len(kills), kills)
		}
		target := jw.records() + 1
		cmd := exec.Command(ladderBin, "upgrade", "--to", "1.31", "--approve")
		cmd.Env = l.env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		killed, err := false, error(nil)
	wait:
		for {
			select {
			case err = <-exited:
				break wait
			case <-jw.changed:
				if jw.records() >= target {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					err, killed = <-exited, true
					break wait
				}
			case <-time.After(3 * time.Minute):
				_ = cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				t.Fatalf("run %d neither finished nor wrote the journal in 3 minutes:\n%s", run, out.String())
			}
		}
		last = out.String()
		if killed {
			kills = append(kills, lastLine(last))
			continue
		}
		if err != nil {
			t.Fatalf("run %d (after %d kills) exited: %v\n%s", run, len(kills), err, last)
		}
		break
	}
	t.Logf("%d kills, then a run to the end; %s in all", len(kills), time.Since(began).Round(time.Millisecond))
	for i, k := range kills {
		t.Logf("kill %2d after: %s", i+1, k)
	}
	if len(kills) < 10 {
		t.Errorf("%d kill points, want at least 10", len(kills))
	}
	if !strings.Contains(last, "upgrade of "+l.cluster+" to 1.31 done") {
		t.Errorf("the last run does not say it is done:\n%s", last)
	}
	assertUpgraded(t, l, original, watch)
	_, updates := l.eksLog.counts()
	assertOneUpdatePerTarget(t, l.cluster, updates)

	rec, err := journal.ReadCluster(t.Context(), l.cs)
	if err != nil || rec == nil {
		t.Fatalf("the journal: %v, %v", rec, err)
	}
	var notDone []string
	for _, k := range rec.Keys() {
		if e := rec.Entries[k]; e.State != "done" && e.State != "called" {
			notDone = append(notDone, k+" "+e.State)
		}
	}
	sort.Strings(notDone)
	if len(notDone) > 0 {
		t.Errorf("the journal after the last run: %v not done", notDone)
	}
	// Killed after every record, and still what the rehearsal said.
	assertPredicted(t, l)
	if t.Failed() {
		t.Logf("the last run's output:\n%s", last)
	}
}

// lastLine is the last non-empty line of a run's output: where it was when
// it was killed.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
