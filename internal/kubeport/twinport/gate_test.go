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
