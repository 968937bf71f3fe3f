package rehearse

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

func runBuiltin(t *testing.T, name string, opts Options) *report.Report {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func events(rep *report.Report, code string) []report.Event {
	var out []report.Event
	for _, e := range rep.Events {
		if e.Code == code {
			out = append(out, e)
		}
	}
	return out
}

// TestKarpenterDriftReplaysTheSeed follows the seed write-up
// (karpenter-node-upgrade): scale checkout to 10 → Karpenter adds a second
// 1.30 node; switch the EC2NodeClass to the 1.31 AMI and add a nodes: "1"
// Drifted budget → the two nodes are replaced one at a time, each
// replacement initialized before its old node is tainted and deleted → two
// 1.31 nodes, every pod Running.
func TestKarpenterDriftReplaysTheSeed(t *testing.T) {
	rep := runBuiltin(t, "karpenter-drift", Options{})
	if rep.Status != report.Succeeded {
		t.Fatalf("status %s, stuck: %v", rep.Status, rep.Stuck)
	}

	// Step 1: the scale-out launches exactly one more node, still on 1.30
	// (the EC2NodeClass still selects the 1.30 AMI).
	patched := -1.0
	for _, e := range rep.Events {
		if e.Code == "Patched" {
			patched = e.T
			break
		}
	}
	var scaleOut []report.Event
	for _, e := range events(rep, "NodeClaimLaunched") {
		if e.T < patched {
			scaleOut = append(scaleOut, e)
		}
	}
	if len(scaleOut) != 1 {
		t.Fatalf("launches before the AMI change = %d, want 1 (checkout 1 → 10 needs one more node)", len(scaleOut))
	}

	// Step 3: two disruptions for drift, one at a time.
	started := events(rep, "DisruptionStarted")
	if len(started) != 2 {
		t.Fatalf("disruptions = %d, want 2", len(started))
	}
	for _, e := range started {
		if e.Reason != "drifted" || !strings.Contains(e.Message, "disrupting nodeclaim(s) via replace, terminating 1 nodes") {
			t.Errorf("disruption %q reason %q", e.Message, e.Reason)
		}
	}
	if g := rep.Groups[0]; g.MaxConcurrentDisruptions != 1 || g.Replaced != 2 || g.Launched != 3 {
		t.Errorf("group %+v, want maxConcurrentDisruptions 1, replaced 2, launched 3", g)
	}
	// Each old node is tainted only after its replacement is initialized,
	// and the second disruption starts only after the first replacement is up.
	initialized := events(rep, "NodeClaimInitialized")
	tainted := events(rep, "NodeTainted")
	if len(initialized) != 3 || len(tainted) != 2 {
		t.Fatalf("initialized %d, tainted %d; want 3 and 2", len(initialized), len(tainted))
	}
	for i, taint := range tainted {
		if taint.T < initialized[i+1].T {
			t.Errorf("node %s tainted at %.0fs before its replacement initialized at %.0fs", taint.Node, taint.T, initialized[i+1].T)
		}
	}
	if started[1].T < initialized[1].T {
		t.Errorf("second disruption at %.0fs before the first replacement initialized at %.0fs", started[1].T, initialized[1].T)
	}

	// Step 5: two 1.31 nodes, every pod Running.
	if len(rep.Nodes) != 2 {
		t.Fatalf("nodes = %d, want 2", len(rep.Nodes))
	}
	for _, n := range rep.Nodes {
		if n.Version != "v1.31.14-eks-ecaa3a6" || !n.Ready || n.GroupType != "karpenter" || n.AMI != "ami-0c4dea04571b1b508" {
			t.Errorf("node %+v, want Ready karpenter node on ami-0c4dea04571b1b508, v1.31.14-eks-ecaa3a6", n)
		}
	}
	for _, w := range rep.Workloads {
		if w.Ready != int(w.Desired) || w.PDBViolations != 0 {
			t.Errorf("workload %s/%s: ready %d of %d, %d PDB violations", w.Namespace, w.Name, w.Ready, w.Desired, w.PDBViolations)
		}
		if w.Name == "checkout-redis" && w.ZeroReadySeconds <= 0 {
			t.Errorf("checkout-redis has one replica and an EBS volume; its move must show downtime, got %.0fs", w.ZeroReadySeconds)
		}
	}
	if rep.ControlPlane.Version != "1.31" {
		t.Errorf("control plane %s", rep.ControlPlane.Version)
	}
}

// TestRehearsalIsDeterministic: the same scenario and seed give
// byte-identical JSON; another seed changes names and tie-breaks.
func TestRehearsalIsDeterministic(t *testing.T) {
	render := func(seed uint64) string {
		var buf bytes.Buffer
		if err := runBuiltin(t, "karpenter-drift", Options{Seed: &seed}).WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	a, b := render(1), render(1)
	if a != b {
		t.Fatal("two runs with seed 1 differ")
	}
	if c := render(2); c == a {
		t.Fatal("seed 2 gave the same output as seed 1")
	}
}

// TestTimeLimitReportsWhatIsStuck: a rehearsal that cannot settle stops at
// its virtual-time limit with status stuck and names what is stuck.
func TestTimeLimitReportsWhatIsStuck(t *testing.T) {
	data, err := scenario.BuiltinSource("karpenter-drift")
	if err != nil {
		t.Fatal(err)
	}
	// A budget of 0 for Drifted: drift can never proceed.
	src := strings.Replace(string(data), `- nodes: "1"`, `- nodes: "0"`, 1)
	sc, err := scenario.Parse("budget-zero.yaml", []byte(src), builtinDir(t))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != report.Stuck || rep.MakespanSeconds != rep.TimeLimitSeconds {
		t.Fatalf("status %s after %.0fs (limit %.0fs), want stuck at the limit", rep.Status, rep.MakespanSeconds, rep.TimeLimitSeconds)
	}
	joined := strings.Join(rep.Stuck, "\n")
	for _, want := range []string{"budgets allow 0 Drifted disruptions", "2 drifted node(s) not replaced"} {
		if !strings.Contains(joined, want) {
			t.Errorf("stuck reasons %q do not say %q", joined, want)
		}
	}
}

func builtinDir(t *testing.T) fs.FS {
	t.Helper()
	dir, err := scenario.BuiltinDir("karpenter-drift")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
