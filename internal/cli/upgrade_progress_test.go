package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/progress"
)

// ticking is a wall clock a minute further on at every reading (a
// plain line reads it twice: its stamp and its step's time).
type ticking struct {
	mu sync.Mutex
	t  time.Time
}

func (c *ticking) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Minute)
	return c.t
}

type mapJournal map[string]executor.Entry

func (j mapJournal) Get(k string) (executor.Entry, bool)  { e, ok := j[k]; return e, ok }
func (j mapJournal) Put(k string, e executor.Entry) error { j[k] = e; return nil }

// TestUpgradeProgress: ladder upgrade's steps go to standard output as
// timestamped lines, as they did, and to the progress reporter on standard
// error: each step's start and end, the update the journal says it waits
// on, and a node group's nodes at the hop's version.
func TestUpgradeProgress(t *testing.T) {
	var stdout, stderr bytes.Buffer
	clock := &ticking{t: time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)}
	rep := progress.New(progress.Options{Mode: progress.Plain, Out: &stderr, Now: clock.now, Interval: time.Second})
	counted := make(chan struct{})
	var once sync.Once
	log := &upgradeLog{out: &stdout, rep: rep, nodes: func(context.Context, plan.Hop, plan.Step) (int, int, error) {
		once.Do(func() { close(counted) })
		return 3, 4, nil
	}}
	j := reportingJournal{Journal: mapJournal{}, rep: rep}
	h := plan.Hop{From: kubeversion.MustParse("1.30"), To: kubeversion.MustParse("1.31")}
	cp := plan.Step{Kind: plan.ControlPlane}
	ng := plan.Step{Kind: plan.NodeGroup, Name: "initial", Strategy: "in-place"}

	log.HopStarted(h)
	log.StepStarted(h, cp)
	j.Put("1.31/control-plane/UpdateClusterVersion", executor.Entry{State: executor.Called, ID: "u-1"})
	log.StepEnded(cp, nil)
	log.StepStarted(h, ng)
	<-counted
	log.StepEnded(ng, nil)

	stamp := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  `)
	got := stamp.ReplaceAllString(stderr.String(), "")
	want := "1.31/control-plane started\n" +
		"1.31/control-plane: waiting on u-1 2m0s\n" +
		"1.31/control-plane done in 4m0s\n" +
		"1.31/node-group/initial started\n" +
		"1.31/node-group/initial: 3/4 nodes at 1.31 2m0s\n" +
		"1.31/node-group/initial done in 4m0s\n"
	if got != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
	out := stamp.ReplaceAllString(stdout.String(), "")
	if want := "hop 1.30 → 1.31\ncontrol-plane  1.31/control-plane started\ncontrol-plane   done\nnode-group     1.31/node-group/initial started\nnode-group     initial done\n"; out != want {
		t.Errorf("stdout:\n%q\nwant:\n%q", out, want)
	}
	if strings.Contains(stdout.String(), "waiting on") {
		t.Error("the progress went to standard output")
	}
}

// TestUpgradeLogBlockedEvictions: ladder upgrade prints a pod whose
// eviction a PDB refuses on a node Ladder drains when the refusal starts
// and when it ends, as the rehearsal's blocked[] lists it.
func TestUpgradeLogBlockedEvictions(t *testing.T) {
	var stdout bytes.Buffer
	log := &upgradeLog{out: &stdout}
	since := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	b := executor.BlockedEviction{Node: "n1", Pod: "default/web-1", PDBs: []string{"default/web"}, Since: since, Outcome: executor.OutcomeBlocked, Message: "Cannot evict pod"}
	log.EvictionBlocked(b)
	b.Until, b.Outcome = since.Add(75*time.Second), executor.OutcomeEvicted
	log.EvictionBlocked(b)
	b.Since, b.Outcome, b.PDBs = b.Until, executor.OutcomeFailed, []string{"default/a", "default/b"}
	log.EvictionBlocked(b)
	got := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  `).ReplaceAllString(stdout.String(), "")
	want := "EvictionBlocked node/n1: pod default/web-1: eviction refused by PodDisruptionBudget default/web, retrying: Cannot evict pod\n" +
		"EvictionUnblocked node/n1: pod default/web-1: evicted after 1m15s blocked\n" +
		"EvictionFailed node/n1: pod default/web-1: eviction refused by PodDisruptionBudget default/a,default/b: Cannot evict pod\n"
	if got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
}
