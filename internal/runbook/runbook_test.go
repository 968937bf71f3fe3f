package runbook_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/runbook"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// make rehearses a built-in scenario to `to` and builds its runbook, the
// check's findings made by hand (the cli package runs the real check).
func makeRunbook(t *testing.T, name, to string, at time.Time, findings ...insights.Finding) *runbook.Runbook {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Spec.Upgrade == nil && len(sc.Spec.Actions) == 0 {
		sc.Spec.Upgrade = &scenario.Upgrade{}
	}
	rep, err := rehearse.Run(sc, rehearse.Options{To: to})
	if err != nil {
		t.Fatal(err)
	}
	return runbook.Make(runbook.Input{Scenario: sc, Source: "scenario " + name, To: to, Report: rep,
		Check: &insights.Report{Findings: findings}, Now: at})
}

func step(t *testing.T, rb *runbook.Runbook, kind, name string) runbook.Step {
	t.Helper()
	for _, s := range rb.Steps() {
		if s.Kind == kind && s.Name == name {
			return s
		}
	}
	t.Fatalf("no %s step %q", kind, name)
	return runbook.Step{}
}

func lines(s runbook.Step, tool string) string {
	var out []string
	for _, c := range s.Commands {
		if c.Tool == tool {
			out = append(out, c.Line)
		}
	}
	return strings.Join(out, "\n")
}

// TestWorkshopRunbook: every step of the workshop's hop, in the playbook's
// order, with the measured figures and the commands of its mechanism,
// named as the scenario names things.
func TestWorkshopRunbook(t *testing.T) {
	rb := makeRunbook(t, "workshop", "1.31", time.Date(2025, 8, 1, 0, 0, 0, 0, time.UTC))
	if rb.Cluster != "eksworkshop-eksctl" || rb.From != "1.30" || rb.To != "1.31" || len(rb.Hops) != 1 {
		t.Fatalf("runbook %s %s→%s with %d hops", rb.Cluster, rb.From, rb.To, len(rb.Hops))
	}
	var order []string
	for _, s := range rb.Hops[0].Steps {
		order = append(order, s.Kind+":"+s.Name)
	}
	want := "pre-checks: control-plane: addon:kube-proxy addon:aws-ebs-csi-driver node-group:initial node-group:custom-Y node-group:blue-mng node-group:default node-group:default-selfmng node-group:fp-profile"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("steps\n got %s\nwant %s", got, want)
	}
	cp := step(t, rb, "control-plane", "")
	if cp.Seconds != 600 || !strings.Contains(lines(cp, "aws"), "aws eks update-cluster-version --name eksworkshop-eksctl --kubernetes-version 1.31") ||
		!strings.Contains(cp.Rollback, "--kubernetes-version 1.30") {
		t.Errorf("control plane: %+v", cp)
	}
	initial := step(t, rb, "node-group", "initial")
	if initial.NodesReplaced != 3 || initial.Strategy != "in-place" || !strings.Contains(lines(initial, "aws"), "update-nodegroup-version --cluster-name eksworkshop-eksctl --nodegroup-name initial --kubernetes-version 1.31") {
		t.Errorf("initial: %+v", initial)
	}
	// custom-Y's AMI is in its launch template: a new template version with
	// the 1.31 AMI from SSM, and the rollback is the previous version.
	custom := step(t, rb, "node-group", "custom-Y")
	if l := lines(custom, "aws"); !strings.Contains(l, "create-launch-template-version --launch-template-name custom-Y --source-version 1") ||
		!strings.Contains(l, "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id") ||
		!strings.Contains(custom.Rollback, "name=custom-Y,version=1") {
		t.Errorf("custom-Y: %s / %s", l, custom.Rollback)
	}
	blue := step(t, rb, "node-group", "blue-mng")
	if l := lines(blue, "eksctl"); !strings.Contains(l, "--name green-mng") || blue.NodesLaunched != 2 || blue.SurgeNodes != 2 {
		t.Errorf("blue-mng: %+v", blue)
	}
	// Ladder drains blue in the waves orders-pdb allows: no eviction is
	// refused, so no drain is held up (TestRunbookBlockedDrain has one).
	if len(blue.Blocked) != 0 {
		t.Errorf("blue-mng blocked drains: %+v, want none", blue.Blocked)
	}
	if l := lines(step(t, rb, "node-group", "default"), "kubectl"); !strings.Contains(l, "kubectl patch ec2nodeclass default ") {
		t.Errorf("karpenter: %s", l)
	}
	if l := lines(step(t, rb, "node-group", "default-selfmng"), "aws"); !strings.Contains(l, `--preferences '{"MinHealthyPercentage":90,"MaxHealthyPercentage":110,"InstanceWarmup":60}'`) {
		t.Errorf("self-managed: %s", l)
	}
	if l := lines(step(t, rb, "node-group", "fp-profile"), "kubectl"); l != "kubectl rollout restart deployment,statefulset -n assets" {
		t.Errorf("fargate: %s", l)
	}
	// On 2025-08-01 1.30 is in extended support (since 2025-07-23) and 1.31
	// in standard support (until 2025-11-26): the hop ends the $0.50 a
	// cluster-hour surcharge, 730 hours a month.
	c := rb.Cost
	if c.From.Status != "EXTENDED_SUPPORT" || c.To.Status != "STANDARD_SUPPORT" || c.To.StandardUntil != "2025-11-26" || c.ExtendedSupportMonthlyUSD != 365 {
		t.Errorf("cost: %+v", c)
	}
	var surge float64
	for _, s := range rb.Steps() {
		surge += float64(s.SurgeNodes) * s.Seconds / 3600
	}
	if c.SurgeInstanceHours != surge || surge == 0 || c.SurgeUSD <= 0 {
		t.Errorf("surge %.3f h $%.2f, want %.3f h", c.SurgeInstanceHours, c.SurgeUSD, surge)
	}
}

// TestRunbookBlockedDrain: pdb-deadlock's update fails; its step says so and
// names the pod and the PDB that held the drain for 15 minutes.
func TestRunbookBlockedDrain(t *testing.T) {
	rb := makeRunbook(t, "pdb-deadlock", "1.31", time.Date(2025, 8, 1, 0, 0, 0, 0, time.UTC))
	if rb.Rehearsal.Status != "failed" {
		t.Errorf("rehearsal %s", rb.Rehearsal.Status)
	}
	s := step(t, rb, "node-group", "blue-mng")
	if s.Status != "failed" || !strings.Contains(s.Message, "PodEvictionFailure") || len(s.Blocked) != 1 ||
		s.Blocked[0].PDB != "orders/orders-pdb" || s.Blocked[0].Seconds != 900 || s.Blocked[0].Outcome != "blocked" {
		t.Errorf("blue-mng: %+v", s)
	}
	var md bytes.Buffer
	if err := rb.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "- drain blocked 15m: pod orders/orders-") {
		t.Errorf("the markdown does not name the blocked drain:\n%s", md.String())
	}
}

// TestRunbookHops: two minors are two hops, each with its control plane,
// its add-ons and every node group; the check's ERROR findings block the
// hop they name (or every hop), WARNINGs are counted.
func TestRunbookHops(t *testing.T) {
	errs := []insights.Finding{
		{Check: "removed-api", Severity: insights.Error, Hop: "1.32", Message: "gone in 1.32"},
		{Check: "support-window", Severity: insights.Error, Message: "every hop"},
		{Check: "pdb-missing", Severity: insights.Warning, Hop: "1.31"},
	}
	rb := makeRunbook(t, "workshop", "1.32", time.Date(2025, 8, 1, 0, 0, 0, 0, time.UTC), errs...)
	if len(rb.Hops) != 2 || rb.Hops[0].To != "1.31" || rb.Hops[1].To != "1.32" {
		t.Fatalf("hops %+v", rb.Hops)
	}
	for i, h := range rb.Hops {
		n := 0
		for _, s := range h.Steps {
			if s.Kind == "control-plane" || s.Kind == "node-group" {
				n++
			}
		}
		if n != 7 { // the control plane and six node groups (green-mng is blue-mng's upgrade)
			t.Errorf("hop %d: %d control-plane and node-group steps, want 7", i+1, n)
		}
	}
	if got := len(rb.Hops[0].Blocking); got != 1 || rb.Hops[0].Warnings != 1 {
		t.Errorf("hop 1: %d blocking, %d warnings, want 1 and 1", got, rb.Hops[0].Warnings)
	}
	if got := len(rb.Hops[1].Blocking); got != 2 || rb.Hops[1].Warnings != 0 {
		t.Errorf("hop 2: %d blocking, %d warnings, want 2 and 0", got, rb.Hops[1].Warnings)
	}
}

// TestRunbookJSON: the documented shape, and the same bytes twice.
func TestRunbookJSON(t *testing.T) {
	at := time.Date(2025, 8, 1, 0, 0, 0, 0, time.UTC)
	var a, b bytes.Buffer
	if err := makeRunbook(t, "workshop", "1.31", at).WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	if err := makeRunbook(t, "workshop", "1.31", at).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two runbooks of one scenario differ")
	}
	var doc struct {
		Cluster, From, To string
		Hops              []struct {
			From, To string
			Steps    []map[string]any
		}
	}
	if err := json.Unmarshal(a.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Cluster != "eksworkshop-eksctl" || doc.From != "1.30" || doc.To != "1.31" || len(doc.Hops) != 1 || len(doc.Hops[0].Steps) != 10 {
		t.Errorf("json: %+v", doc)
	}
	for _, key := range []string{"kind", "startSeconds", "seconds", "status", "commands", "rollback", "probeFailedSeconds"} {
		if _, ok := doc.Hops[0].Steps[1][key]; !ok {
			t.Errorf("a step has no %q", key)
		}
	}
}

// A self-managed group Ladder replaces itself (strategy ladder) reads as
// the commands Ladder makes: the launch template's new version and the
// group pointed at it, the surge, the drains and the terminations that
// decrement the capacity; its rollback uncordons the old nodes.
func TestRunbookLadderStrategy(t *testing.T) {
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}
	for i := range sc.Spec.NodeGroups {
		if g := &sc.Spec.NodeGroups[i]; g.Name == "default-selfmng" {
			g.Upgrade = &scenario.GroupUpgrade{Strategy: scenario.Ladder}
		}
	}
	rep, err := rehearse.Run(sc, rehearse.Options{To: "1.31"})
	if err != nil {
		t.Fatal(err)
	}
	rb := runbook.Make(runbook.Input{Scenario: sc, Source: "scenario workshop", To: "1.31", Report: rep, Check: &insights.Report{}, Now: time.Date(2025, 8, 1, 0, 0, 0, 0, time.UTC)})
	s := step(t, rb, "node-group", "default-selfmng")
	aws := lines(s, "aws")
	for _, want := range []string{
		"aws autoscaling update-auto-scaling-group --auto-scaling-group-name default-selfmng --launch-template LaunchTemplateName=default-selfmng,Version='$Latest'",
		"aws autoscaling set-desired-capacity --auto-scaling-group-name default-selfmng --desired-capacity 4",
		"aws autoscaling terminate-instance-in-auto-scaling-group --instance-id INSTANCE --should-decrement-desired-capacity",
	} {
		if !strings.Contains(aws, want) {
			t.Errorf("aws commands lack %q:\n%s", want, aws)
		}
	}
	if k := lines(s, "kubectl"); !strings.Contains(k, "kubectl drain NODE --ignore-daemonsets --delete-emptydir-data") || !strings.Contains(s.Rollback, "kubectl uncordon") {
		t.Errorf("kubectl %q, rollback %q", k, s.Rollback)
	}
}
