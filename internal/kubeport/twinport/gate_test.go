package twinport

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// conditionOnly hides the twin's WaitGate, so kubeport.WaitFor polls the
// gate's Condition through the port, as it does on a real cluster.
type conditionOnly struct{ kubeport.Port }

// TestWaitGateEndsAtTheEventThatSettlesThePods: web's only pod is deleted;
// the twin's own reading of "pods settled" ends the wait at the instant
// its replacement turns Ready. A client polling the Condition through the
// port every second sees the same state, at most a second later.
func TestWaitGateEndsAtTheEventThatSettlesThePods(t *testing.T) {
	ctx := context.Background()
	ended := map[string]time.Duration{}
	for name, wrap := range map[string]func(*Port) kubeport.Port{
		"gate":      func(p *Port) kubeport.Port { return p },
		"condition": func(p *Port) kubeport.Port { return conditionOnly{p} },
	} {
		p, pod := blockedWeb(t, Options{})
		port := wrap(p)
		must(t, port.DeletePod(ctx, "default", pod, new(int64)))
		settled := kubeport.PodsSettled{}.Condition(port)
		if done, _ := settled(ctx); done {
			t.Fatalf("%s: pods settled right after web's pod was deleted", name)
		}
		start := p.Now()
		must(t, kubeport.WaitFor(ctx, port, time.Minute, kubeport.PodsSettled{}))
		if done, _ := settled(ctx); !done {
			t.Fatalf("%s: WaitFor returned but the pods are not settled", name)
		}
		ended[name] = p.Now().Sub(start)
	}
	if ended["gate"] <= 0 || ended["gate"] > ended["condition"] || ended["condition"]-ended["gate"] >= time.Second {
		t.Errorf("settled after %s (gate) and %s (condition polled every second); want the gate first, the poll less than a second later", ended["gate"], ended["condition"])
	}
}

func TestWaitGateTimesOutInVirtualTime(t *testing.T) {
	ctx := context.Background()
	p, pod := blockedWeb(t, Options{})
	must(t, p.DeletePod(ctx, "default", pod, new(int64)))
	start := p.Now()
	err := p.WaitGate(ctx, time.Second, kubeport.PodsSettled{})
	if !errors.Is(err, kubeport.ErrWaitTimeout) {
		t.Fatalf("WaitGate = %v, want ErrWaitTimeout (the replacement takes 5 s to start)", err)
	}
	if got := p.Now().Sub(start); got != time.Second {
		t.Errorf("virtual time passed = %s, want the 1s timeout", got)
	}
}

// TestPolledAllOf: a Polled gate of gates is read in order, at most once
// per second of virtual time and first at once; it ends at the first
// reading after the pods settle — a second after the last one when the
// twin has nothing left to do in between — at most a second after the
// instant a plain "pods settled" gate ends at.
func TestPolledAllOf(t *testing.T) {
	ctx := context.Background()
	var plain time.Duration
	{
		p, pod := blockedWeb(t, Options{})
		must(t, p.DeletePod(ctx, "default", pod, new(int64)))
		start := p.Now()
		must(t, kubeport.WaitFor(ctx, p, time.Minute, kubeport.PodsSettled{}))
		plain = p.Now().Sub(start)
	}
	p, pod := blockedWeb(t, Options{})
	must(t, p.DeletePod(ctx, "default", pod, new(int64)))
	start := p.Now()
	var reads []time.Duration
	gate := kubeport.Polled{Every: time.Second, Gate: kubeport.AllOf{
		kubeport.Until{What: "read", Holds: func(context.Context) (bool, error) {
			reads = append(reads, p.Now().Sub(start))
			return true, nil
		}},
		kubeport.PodsSettled{},
	}}
	must(t, kubeport.WaitFor(ctx, p, time.Minute, gate))
	ended := p.Now().Sub(start)
	if len(reads) < 2 || reads[0] != 0 || reads[len(reads)-1] != ended {
		t.Fatalf("read at %v, ended at %s: want a first reading at once and the last at the end", reads, ended)
	}
	for i := 1; i < len(reads); i++ {
		if reads[i]-reads[i-1] < time.Second {
			t.Errorf("readings at %s and %s: less than a second apart", reads[i-1], reads[i])
		}
	}
	if ended < plain || ended-plain > time.Second {
		t.Errorf("the polled gate ended after %s, the plain one after %s: want at most a second later", ended, plain)
	}
}

// TestPolledTicks: a Polled gate with Ticks is read at the end of the
// period in which it was last skipped even when no event comes before a
// far one, as a polling client reads it; without Ticks the reading waits
// for that far event.
func TestPolledTicks(t *testing.T) {
	for _, tc := range []struct {
		ticks bool
		want  time.Duration
	}{{true, time.Second}, {false, time.Minute}} {
		p, _ := blockedWeb(t, Options{})
		eng := p.Cluster().Engine()
		start := p.Now()
		open := false
		eng.After(100*time.Millisecond, func() { open = true })
		eng.After(100*time.Millisecond, func() {}) // a second event, read within the period: skipped
		eng.After(time.Minute, func() {})
		gate := kubeport.Polled{Every: time.Second, Ticks: tc.ticks, Gate: kubeport.Until{What: "open", Holds: func(context.Context) (bool, error) {
			return open, nil
		}}}
		must(t, kubeport.WaitFor(context.Background(), p, time.Hour, gate))
		if got := p.Now().Sub(start); got != tc.want {
			t.Errorf("Ticks %v: ended after %s, want %s", tc.ticks, got, tc.want)
		}
	}
}
