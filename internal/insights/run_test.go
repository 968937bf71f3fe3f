package insights

import (
	"strings"
	"testing"
)

// fakeCheck reports one finding per object of a kind.
type fakeCheck struct {
	id    string
	needs Needs
	kind  string
	sev   Severity
}

func (c fakeCheck) Info() Info {
	return Info{ID: c.id, Title: "Fake " + c.kind, Needs: c.needs}
}

func (c fakeCheck) Run(in *Input) []Finding {
	var out []Finding
	for _, o := range in.Kind(c.kind) {
		out = append(out, o.Finding(c.sev, "", "found "+o.Name, "fix "+o.Name))
	}
	return out
}

func TestRunPassingSkippedAndOrder(t *testing.T) {
	in := input(t, "", "1.31", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	checks := []Check{
		fakeCheck{id: "w-configmaps", needs: NeedsObjects, kind: "ConfigMap", sev: Warning},
		fakeCheck{id: "e-configmaps", needs: NeedsObjects, kind: "ConfigMap", sev: Error},
		fakeCheck{id: "no-secrets", needs: NeedsObjects, kind: "Secret", sev: Error},
		fakeCheck{id: "kubelet-skew", needs: NeedsObjects | NeedsCluster | NeedsCurrent, kind: "Node", sev: Error},
	}
	rep := Run(in, checks)
	var got []string
	for _, f := range rep.Findings {
		got = append(got, string(f.Severity)+" "+f.Check+" "+f.Object.Name)
	}
	want := "ERROR e-configmaps b|ERROR e-configmaps a|WARNING w-configmaps b|WARNING w-configmaps a|PASSING no-secrets "
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("findings\n got %s\nwant %s", s, want)
	}
	if p := rep.Findings[4]; p.Message != "Fake Secret: none found in 2 objects" {
		t.Errorf("passing message %q", p.Message)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Check != "kubelet-skew" || rep.Skipped[0].Needs.String() != "objects, the current version, cluster facts" {
		t.Errorf("skipped %+v", rep.Skipped)
	}
	if s := rep.Summary(); s[Error] != 2 || s[Warning] != 2 || len(s) != 2 {
		t.Errorf("summary %v", s)
	}
	if !rep.Fails(Error) || !rep.Fails(Warning) {
		t.Error("Fails")
	}
}

func TestFailsOn(t *testing.T) {
	for _, tc := range []struct {
		worst       Severity
		failError   bool
		failWarning bool
	}{
		{"", false, false},
		{Passing, false, false},
		{Warning, false, true},
		{Error, true, true},
	} {
		rep := &Report{}
		if tc.worst != "" {
			rep.Findings = []Finding{{Severity: tc.worst}}
		}
		if rep.Fails(Error) != tc.failError || rep.Fails(Warning) != tc.failWarning {
			t.Errorf("worst %q: Fails(ERROR)=%v Fails(WARNING)=%v", tc.worst, rep.Fails(Error), rep.Fails(Warning))
		}
	}
}

func TestHops(t *testing.T) {
	in := &Input{Current: mustMinor("1.30"), Target: mustMinor("1.33")}
	var got []string
	for _, h := range in.Hops() {
		got = append(got, h.String())
	}
	if s := strings.Join(got, " "); s != "1.31 1.32 1.33" || !in.MultiHop() {
		t.Errorf("hops %s", s)
	}
	if h := (&Input{Target: mustMinor("1.31")}).Hops(); len(h) != 1 || h[0].String() != "1.31" {
		t.Errorf("hops without current: %v", h)
	}
}

// TestRegistry: every check has a unique, documented id and a title.
func TestRegistry(t *testing.T) {
	want := []string{"addon-compatibility", "al2-end-of-life", "control-plane-hop", "custom-ami-nodegroup", "deprecated-api", "do-not-disrupt",
		"drain-blocked", "drain-timeout-risk", "invalid-manifest", "karpenter-ami-pinned", "karpenter-budget-blocks", "kube-proxy-skew", "kubelet-skew",
		"no-readiness-probe", "no-spread", "pdb-blocks-drain", "pdb-missing", "pdb-multiple", "pv-zone", "removed-api", "rollout-below-pdb-floor", "single-replica",
		"support-window", "volume-binding-mode"}
	var got []string
	for _, c := range Checks() {
		i := c.Info()
		got = append(got, i.ID)
		if i.Title == "" || i.Help == "" || i.Needs == 0 {
			t.Errorf("%s: incomplete info %+v", i.ID, i)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("checks\n got %v\nwant %v", got, want)
	}
}

// TestDeterministic: the same input gives the same report, whatever the
// scheduling of the concurrent checks.
func TestDeterministic(t *testing.T) {
	data := benchCorpus(500)
	var first string
	for i := range 5 {
		objs, problems := Decode("corpus.yaml", data)
		in := &Input{Target: mustMinor("1.32"), Now: testNow, Objects: objs, Problems: problems}
		var b strings.Builder
		if err := Run(in, nil).WriteJSON(&b, OutputOptions{ShowPassing: true}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b.String()
		} else if b.String() != first {
			t.Fatal("reports differ between runs")
		}
	}
}

// TestDrainChecksNeedAPrediction: with cluster facts but no drain
// prediction (a twin that could not be built), the drain checks are skipped and say
// what they need — not reported PASSING as if they had looked.
func TestDrainChecksNeedAPrediction(t *testing.T) {
	in := input(t, "", "1.31", "")
	in.Current = in.Target
	in.Current.Minor--
	in.Cluster = &Cluster{Name: "live"}
	rep := Run(in, []Check{drainBlocked{}, drainTimeoutRisk{}})
	if len(rep.Findings) != 0 || len(rep.Skipped) != 2 {
		t.Fatalf("findings %+v, skipped %+v; want both skipped", rep.Findings, rep.Skipped)
	}
	for _, s := range rep.Skipped {
		if !strings.Contains(s.Needs.String(), "a drain prediction") {
			t.Errorf("%s needs %q", s.Check, s.Needs)
		}
	}
	in.Cluster.DrainsPredicted = true
	if rep := Run(in, []Check{drainBlocked{}, drainTimeoutRisk{}}); len(rep.Skipped) != 0 {
		t.Errorf("skipped %+v with a prediction", rep.Skipped)
	}
}
