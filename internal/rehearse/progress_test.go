package rehearse

import (
	"bytes"
	"testing"
)

// TestProgressOnlyReads: the workshop's upgrade to 1.31 watched every 64
// events reports byte for byte what it reports unwatched; the watch sees
// the virtual time grow within the limit, the steps of hop 1.31 under way
// and the nodes at 1.31 grow as the node group is replaced.
func TestProgressOnlyReads(t *testing.T) {
	render := func(opts Options) string {
		var buf bytes.Buffer
		if err := runBuiltin(t, "workshop", opts).WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	var seen []Progress
	var atHop []int
	watched := render(Options{To: "1.31", ProgressSteps: 64, Progress: func(p Progress) {
		seen = append(seen, p)
		if p.AtHop != nil {
			atHop = append(atHop, p.AtHop())
		}
	}})
	if plain := render(Options{To: "1.31"}); watched != plain {
		t.Fatal("the watched rehearsal's report differs")
	}
	if len(seen) < 10 {
		t.Fatalf("%d calls", len(seen))
	}
	steps := map[string]bool{}
	for i, p := range seen {
		if p.Elapsed > p.Limit || (i > 0 && p.Elapsed < seen[i-1].Elapsed) || p.Nodes == 0 {
			t.Fatalf("call %d: %+v after %+v", i, p, seen[max(i-1, 0)])
		}
		if p.Step != "" {
			steps[p.Step] = true
		}
	}
	if !steps["1.31/control-plane"] || !steps["1.31/node-group/initial"] {
		t.Errorf("steps seen: %v", steps)
	}
	if len(atHop) == 0 || atHop[0] >= atHop[len(atHop)-1] || seen[len(seen)-1].Hop != "1.31" {
		t.Errorf("nodes at the hop's version, call by call: %v", atHop)
	}
}
