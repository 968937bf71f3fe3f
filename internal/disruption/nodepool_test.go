package disruption

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"
)

func decodeNodePool(t *testing.T, doc string) *karpv1.NodePool {
	t.Helper()
	np := &karpv1.NodePool{}
	if err := yaml.UnmarshalStrict([]byte(doc), np); err != nil {
		t.Fatal(err)
	}
	return np
}

func durationString(d karpv1.NillableDuration) string {
	b, err := json.Marshal(d)
	if err != nil {
		return "error: " + err.Error()
	}
	s := string(b)
	if d.Duration != nil {
		s += fmt.Sprintf(" (%s)", *d.Duration)
	} else {
		s += " (nil)"
	}
	return s
}

func budgetsString(bs []karpv1.Budget) string {
	if bs == nil {
		return "nil"
	}
	var parts []string
	for _, b := range bs {
		s := fmt.Sprintf("{nodes:%q", b.Nodes)
		if b.Reasons != nil {
			s += fmt.Sprintf(" reasons:%v", b.Reasons)
		}
		if b.Schedule != nil {
			s += fmt.Sprintf(" schedule:%q", *b.Schedule)
		}
		if b.Duration != nil {
			s += fmt.Sprintf(" duration:%s", b.Duration.Duration)
		}
		parts = append(parts, s+"}")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func TestDefaultNodePool(t *testing.T) {
	cases := []struct {
		name                 string
		manifest             string
		asWritten            bool // use DefaultNodePoolAsWritten with WrittenFromManifest
		wantBudgets          string
		wantConsolidateAfter string
		wantPolicy           karpv1.ConsolidationPolicy
		wantExpireAfter      string
	}{
		{name: "everything omitted gets every default",
			manifest:    "spec: {template: {spec: {}}}",
			wantBudgets: `[{nodes:"10%"}]`, wantConsolidateAfter: `"0s" (0s)`,
			wantPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, wantExpireAfter: `"720h" (720h0m0s)`},
		{name: "an explicitly empty budget list stays empty",
			manifest:    "spec: {disruption: {consolidateAfter: 5m, budgets: []}}",
			wantBudgets: `[]`, wantConsolidateAfter: `"5m" (5m0s)`,
			wantPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, wantExpireAfter: `"720h" (720h0m0s)`},
		{name: "set values are kept",
			manifest: `spec:
  disruption: {consolidateAfter: 30s, consolidationPolicy: WhenEmpty, budgets: [{nodes: "1", reasons: [Drifted]}]}
  template: {spec: {expireAfter: 168h}}`,
			wantBudgets: `[{nodes:"1" reasons:[Drifted]}]`, wantConsolidateAfter: `"30s" (30s)`,
			wantPolicy: karpv1.ConsolidationPolicyWhenEmpty, wantExpireAfter: `"168h" (168h0m0s)`},
		{name: "a budget without nodes gets 10%",
			manifest:    `spec: {disruption: {consolidateAfter: 0s, budgets: [{reasons: [Empty]}, {nodes: "3"}]}}`,
			wantBudgets: `[{nodes:"10%" reasons:[Empty]} {nodes:"3"}]`, wantConsolidateAfter: `"0s" (0s)`,
			wantPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, wantExpireAfter: `"720h" (720h0m0s)`},
		{name: "as written: Never stays Never",
			manifest:    "spec: {disruption: {consolidateAfter: Never}, template: {spec: {expireAfter: Never}}}",
			asWritten:   true,
			wantBudgets: `[{nodes:"10%"}]`, wantConsolidateAfter: `"Never" (nil)`,
			wantPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, wantExpireAfter: `"Never" (nil)`},
		{name: "pitfall: without what was written, a decoded Never looks unset and is defaulted",
			manifest:    "spec: {disruption: {consolidateAfter: Never}, template: {spec: {expireAfter: Never}}}",
			wantBudgets: `[{nodes:"10%"}]`, wantConsolidateAfter: `"0s" (0s)`,
			wantPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, wantExpireAfter: `"720h" (720h0m0s)`},
		{name: "as written: absent durations are defaulted",
			manifest:    "spec: {template: {spec: {}}}",
			asWritten:   true,
			wantBudgets: `[{nodes:"10%"}]`, wantConsolidateAfter: `"0s" (0s)`,
			wantPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, wantExpireAfter: `"720h" (720h0m0s)`},
		{name: `as written: nodes: "" is kept for validation to reject`,
			manifest:    `spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: ""}, {reasons: [Drifted]}]}}`,
			asWritten:   true,
			wantBudgets: `[{nodes:"" reasons:[]} {nodes:"10%" reasons:[Drifted]}]`, wantConsolidateAfter: `"0s" (0s)`,
			wantPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, wantExpireAfter: `"720h" (720h0m0s)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n" + tc.manifest
			np := decodeNodePool(t, doc)
			var w *Written
			if tc.asWritten {
				var err error
				if w, err = WrittenFromManifest([]byte(doc), "default"); err != nil {
					t.Fatal(err)
				}
			}
			DefaultNodePoolAsWritten(np, w)
			want := tc.wantBudgets
			if strings.Contains(want, "reasons:[]") { // fmt prints a nil and an empty list alike; normalise
				want = strings.ReplaceAll(want, " reasons:[]", "")
			}
			if got := budgetsString(np.Spec.Disruption.Budgets); got != want {
				t.Errorf("budgets = %s, want %s", got, want)
			}
			if got := durationString(np.Spec.Disruption.ConsolidateAfter); got != tc.wantConsolidateAfter {
				t.Errorf("consolidateAfter = %s, want %s", got, tc.wantConsolidateAfter)
			}
			if got := np.Spec.Disruption.ConsolidationPolicy; got != tc.wantPolicy {
				t.Errorf("consolidationPolicy = %s, want %s", got, tc.wantPolicy)
			}
			if got := durationString(np.Spec.Template.Spec.ExpireAfter); got != tc.wantExpireAfter {
				t.Errorf("expireAfter = %s, want %s", got, tc.wantExpireAfter)
			}
			// Defaulting twice changes nothing.
			before := np.DeepCopy()
			DefaultNodePoolAsWritten(np, w)
			if !reflect.DeepEqual(before, np) {
				t.Errorf("DefaultNodePool is not idempotent:\nbefore %+v\nafter  %+v", before.Spec, np.Spec)
			}
		})
	}
}

func TestDefaultNodePoolKeepsNilAndEmptyBudgetsApart(t *testing.T) {
	omitted := pool()
	omitted.Spec.Disruption.Budgets = nil
	DefaultNodePool(omitted)
	if got := budgetsString(omitted.Spec.Disruption.Budgets); got != `[{nodes:"10%"}]` {
		t.Errorf("omitted budgets = %s, want [{nodes:\"10%%\"}]", got)
	}
	emptyList := pool()
	DefaultNodePool(emptyList)
	if bs := emptyList.Spec.Disruption.Budgets; bs == nil || len(bs) != 0 {
		t.Errorf("empty budgets = %s, want []", budgetsString(bs))
	}
	DefaultNodePool(nil) // must not panic
}

type wantErr struct {
	kind  Kind
	field string
}

func (w wantErr) String() string { return fmt.Sprintf("%s [%s]", w.field, w.kind) }

// TestValidateBudgets is the CEL validation table of semantics.md §A.1
// (karpenter nodepool_validation_cel_test.go), case by case, then the checks
// beyond it.
func TestValidateBudgets(t *testing.T) {
	const b0 = "spec.disruption.budgets[0]"
	min20, min30s := 20*time.Minute, 30*time.Second
	reasons := func(rs ...string) []karpv1.DisruptionReason {
		out := make([]karpv1.DisruptionReason, len(rs))
		for i, r := range rs {
			out[i] = karpv1.DisruptionReason(r)
		}
		return out
	}
	withReasons := func(b karpv1.Budget, rs []karpv1.DisruptionReason) karpv1.Budget { b.Reasons = rs; return b }
	onlyDuration := karpv1.Budget{Nodes: "10", Duration: &metav1.Duration{Duration: min20}}
	onlySchedule := karpv1.Budget{Nodes: "10", Schedule: new("* * * * *")}
	tooMany := make([]karpv1.Budget, 51)
	for i := range tooMany {
		tooMany[i] = nodes("1")
	}
	manyReasons := make([]karpv1.DisruptionReason, 51)
	for i := range manyReasons {
		manyReasons[i] = drifted
	}

	cases := []struct {
		name    string
		budgets []karpv1.Budget
		want    []wantErr
	}{
		// semantics.md §A.1 CEL table.
		{`CEL: nodes "10", schedule "*", duration 20m is rejected`,
			[]karpv1.Budget{scheduled("10", "*", min20)}, []wantErr{{Rejected, b0 + ".schedule"}}},
		{`CEL: schedule "* * * * " (4 fields) is rejected`,
			[]karpv1.Budget{scheduled("10", "* * * * ", min20)}, []wantErr{{Rejected, b0 + ".schedule"}}},
		{"CEL: duration -20m is rejected",
			[]karpv1.Budget{scheduled("10", "* * * * *", -min20)}, []wantErr{{Rejected, b0 + ".duration"}}},
		{"CEL: duration 30s is rejected",
			[]karpv1.Budget{scheduled("10", "* * * * *", min30s)}, []wantErr{{Rejected, b0 + ".duration"}}},
		{`CEL: nodes "-10" is rejected`,
			[]karpv1.Budget{nodes("-10")}, []wantErr{{Rejected, b0 + ".nodes"}}},
		{`CEL: nodes "-10%" is rejected`,
			[]karpv1.Budget{nodes("-10%")}, []wantErr{{Rejected, b0 + ".nodes"}}},
		{`CEL: nodes "1000%" is rejected`,
			[]karpv1.Budget{nodes("1000%")}, []wantErr{{Rejected, b0 + ".nodes"}}},
		{"CEL: a schedule without a duration is rejected",
			[]karpv1.Budget{onlySchedule}, []wantErr{{Rejected, b0 + ".duration"}}},
		{"CEL: a duration without a schedule is rejected",
			[]karpv1.Budget{onlyDuration}, []wantErr{{Rejected, b0 + ".schedule"}}},
		{`CEL: schedule "* * * * *" with duration 20m is accepted`,
			[]karpv1.Budget{scheduled("10", "* * * * *", min20)}, nil},
		{"CEL: duration 2h20m is accepted",
			[]karpv1.Budget{scheduled("10", "* * * * *", 2*time.Hour+min20)}, nil},
		{`CEL: nodes "10" alone is accepted`,
			[]karpv1.Budget{nodes("10")}, nil},
		{`CEL: schedule "@annually" with 20m is accepted`,
			[]karpv1.Budget{scheduled("10", "@annually", min20)}, nil},
		{`CEL: two budgets, one with schedule "*", are rejected`,
			[]karpv1.Budget{scheduled("10", "@annually", min20), scheduled("10", "*", min20)},
			[]wantErr{{Rejected, "spec.disruption.budgets[1].schedule"}}},
		{"CEL: three budgets, one with only a duration, are rejected",
			[]karpv1.Budget{onlyDuration, scheduled("10", "* * * * *", min20), nodes("10")},
			[]wantErr{{Rejected, b0 + ".schedule"}}},
		{"CEL: reason Drifted is accepted",
			[]karpv1.Budget{scheduled("10", "* * * * *", min20, drifted)}, nil},
		{"CEL: reason Underutilized is accepted",
			[]karpv1.Budget{scheduled("10", "* * * * *", min20, underutilized)}, nil},
		{"CEL: reason Empty is accepted",
			[]karpv1.Budget{scheduled("10", "* * * * *", min20, empty)}, nil},
		{`CEL: reason "invalid" is rejected`,
			[]karpv1.Budget{withReasons(scheduled("10", "* * * * *", min20), reasons("invalid"))}, []wantErr{{Rejected, b0 + ".reasons[0]"}}},
		{`CEL: reason "expired" is rejected`,
			[]karpv1.Budget{withReasons(scheduled("10", "* * * * *", min20), reasons("expired"))}, []wantErr{{Rejected, b0 + ".reasons[0]"}}},
		{`CEL: reason "" is rejected`,
			[]karpv1.Budget{withReasons(scheduled("10", "* * * * *", min20), reasons(""))}, []wantErr{{Rejected, b0 + ".reasons[0]"}}},
		{"CEL: reasons [Drifted, Empty] are accepted",
			[]karpv1.Budget{scheduled("10", "* * * * *", min20, drifted, empty)}, nil},

		// The rest of the CRD schema.
		{`nodes "0", "100%", "0%" and "007" are accepted`,
			[]karpv1.Budget{nodes("0"), nodes("100%"), nodes("0%"), nodes("007")}, nil},
		{`nodes "101%" and "10.5%" are rejected`,
			[]karpv1.Budget{nodes("101%"), nodes("10.5%")},
			[]wantErr{{Rejected, b0 + ".nodes"}, {Rejected, "spec.disruption.budgets[1].nodes"}}},
		{"a duplicate reason is rejected (listType=set)",
			[]karpv1.Budget{nodes("1", drifted, empty, drifted)}, []wantErr{{Rejected, b0 + ".reasons[2]"}}},
		{"51 reasons are rejected",
			[]karpv1.Budget{withReasons(nodes("1"), manyReasons)},
			func() []wantErr {
				out := []wantErr{{Rejected, b0 + ".reasons"}}
				for j := 1; j < 51; j++ {
					out = append(out, wantErr{Rejected, fmt.Sprintf("%s.reasons[%d]", b0, j)})
				}
				return out
			}()},
		{"51 budgets are rejected", tooMany, []wantErr{{Rejected, "spec.disruption.budgets"}}},
		{"50 budgets are accepted", tooMany[:50], nil},
		{`"@every 1h" parses in robfig/cron but the CRD rejects it`,
			[]karpv1.Budget{scheduled("1", "@every 1h", time.Hour)}, []wantErr{{Rejected, b0 + ".schedule"}}},
		{"a duration of 0 is rejected as a Go client sends it (\"0s\")",
			[]karpv1.Budget{scheduled("1", "@daily", 0)}, []wantErr{{Rejected, b0 + ".duration"}}},
		{"a 1h30s duration is rejected (\"1h0m30s\")",
			[]karpv1.Budget{scheduled("1", "@daily", time.Hour+30*time.Second)}, []wantErr{{Rejected, b0 + ".duration"}}},

		// Accepted by the API server, but Karpenter cannot evaluate them.
		{"6 cron fields pass the CRD pattern but fail Karpenter's parse",
			[]karpv1.Budget{scheduled("1", "0 0 9 * * mon-fri", time.Hour)}, []wantErr{{Broken, b0 + ".schedule"}}},
		{"a time zone passes the CRD pattern but fails Karpenter's parse",
			[]karpv1.Budget{scheduled("1", "TZ=Asia/Seoul 0 9 * * *", time.Hour)}, []wantErr{{Broken, b0 + ".schedule"}}},
		{`"@dailyish" passes the CRD pattern (anchored at the start only) but is no descriptor`,
			[]karpv1.Budget{scheduled("1", "@dailyish", time.Hour)}, []wantErr{{Broken, b0 + ".schedule"}}},
		{"a reversed day range passes the CRD pattern but fails Karpenter's parse",
			[]karpv1.Budget{scheduled("1", "0 0 * * tue-mon", time.Hour)}, []wantErr{{Broken, b0 + ".schedule"}}},
		{"nodes beyond int32 wraps in Karpenter",
			[]karpv1.Budget{nodes("3000000000")}, []wantErr{{Broken, b0 + ".nodes"}}},
		{"nodes beyond int64 fails closed in Karpenter",
			[]karpv1.Budget{nodes("99999999999999999999")}, []wantErr{{Broken, b0 + ".nodes"}}},
		{"nodes 2147483647 fits",
			[]karpv1.Budget{nodes("2147483647")}, nil},

		// Accepted and evaluated, probably not as meant.
		{"a schedule that never fires is always active",
			[]karpv1.Budget{scheduled("0", "0 0 30 2 *", time.Hour)}, []wantErr{{Warning, b0 + ".schedule"}}},
		{"29 February fires, every four years",
			[]karpv1.Budget{scheduled("0", "0 0 29 2 *", time.Hour)}, nil},
		{"reasons: [] applies to no reason",
			[]karpv1.Budget{withReasons(nodes("0"), []karpv1.DisruptionReason{})}, []wantErr{{Warning, b0 + ".reasons"}}},

		{"the seed's budgets are valid",
			[]karpv1.Budget{nodes("1", drifted), nodes("100%", empty, underutilized)}, nil},
		{"the seed's business-hours budgets are valid",
			businessHours().Spec.Disruption.Budgets, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []wantErr
			for _, e := range ValidateBudgets(pool(tc.budgets...)) {
				got = append(got, wantErr{e.Kind, e.Field})
				if e.Msg == "" || e.Fix == "" {
					t.Errorf("%s: message or fix missing: %q", e.Field, e.Error())
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("ValidateBudgets = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValidateBudgetsMessages(t *testing.T) {
	cases := []struct {
		name    string
		budgets []karpv1.Budget
		want    string
	}{
		{"a 4-field schedule",
			[]karpv1.Budget{nodes("10"), scheduled("0", "0 9 * *", 8*time.Hour)},
			`spec.disruption.budgets[1].schedule: "0 9 * *" is not a valid cron schedule: expected exactly 5 fields, found 4 (Karpenter evaluates it in UTC; use 5 fields, e.g. "0 9 * * mon-fri")`},
		{"a time zone",
			[]karpv1.Budget{scheduled("0", "TZ=Asia/Seoul 0 9 * * *", 8*time.Hour)},
			`spec.disruption.budgets[0].schedule: "TZ=Asia/Seoul 0 9 * * *" is not a valid cron schedule: expected exactly 5 fields, found 6; the API server accepts it, but Karpenter then fails closed: 0 disruptions for every reason (time zones are not supported: Karpenter evaluates every schedule in UTC; convert the time to UTC)`},
		{"a seconds duration",
			[]karpv1.Budget{scheduled("0", "@daily", 30*time.Second)},
			`spec.disruption.budgets[0].duration: "30s" is not a valid budget duration: only hours and minutes are accepted (use e.g. "8h", "30m" or "2h30m"; schedules fire on whole minutes)`},
		{"a percentage above 100",
			[]karpv1.Budget{nodes("1000%")},
			`spec.disruption.budgets[0].nodes: "1000%" is not a valid budget (use a node count such as "5" or a percentage from "0%" to "100%"; quote it, it is a string)`},
		{"an unknown reason",
			[]karpv1.Budget{nodes("1", "Expired")},
			`spec.disruption.budgets[0].reasons[0]: "Expired" is not a disruption reason (use Drifted, Empty or Underutilized; expiration ignores budgets)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateBudgets(pool(tc.budgets...))
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
			}
			if got := errs[0].Error(); got != tc.want {
				t.Errorf("message:\n got %s\nwant %s", got, tc.want)
			}
			if strings.Contains(errs[0].Error(), "\n") {
				t.Errorf("message is not one line")
			}
		})
	}
}

// What the manifest wrote matters for durations and nodes: the decoded
// metav1.Duration of "60s" is the same as that of "1m", but the CRD pattern
// accepts only "1m".
func TestValidateBudgetsAsWritten(t *testing.T) {
	cases := []struct {
		name   string
		budget string
		want   []wantErr
	}{
		{"duration 60s is rejected as written", `{nodes: "1", schedule: "@daily", duration: 60s}`,
			[]wantErr{{Rejected, "spec.disruption.budgets[0].duration"}}},
		{"duration 1m is accepted", `{nodes: "1", schedule: "@daily", duration: 1m}`, nil},
		{"duration 8h is accepted", `{nodes: "1", schedule: "@daily", duration: 8h}`, nil},
		{"duration 2h30m0s is accepted", `{nodes: "1", schedule: "@daily", duration: 2h30m0s}`, nil},
		{"duration 1.5h is rejected", `{nodes: "1", schedule: "@daily", duration: 1.5h}`,
			[]wantErr{{Rejected, "spec.disruption.budgets[0].duration"}}},
		{"duration -20m is rejected", `{nodes: "1", schedule: "@daily", duration: -20m}`,
			[]wantErr{{Rejected, "spec.disruption.budgets[0].duration"}}},
		{"duration 0m is accepted by the CRD but never active", `{nodes: "1", schedule: "@daily", duration: 0m}`,
			[]wantErr{{Warning, "spec.disruption.budgets[0].duration"}}},
		{`nodes: "" is rejected, not defaulted`, `{nodes: ""}`,
			[]wantErr{{Rejected, "spec.disruption.budgets[0].nodes"}}},
		{"absent nodes are defaulted to 10%", `{reasons: [Empty]}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  disruption:\n    consolidateAfter: 0s\n    budgets: [" + tc.budget + "]\n"
			np := decodeNodePool(t, doc)
			w, err := WrittenFromManifest([]byte(doc), "np")
			if err != nil {
				t.Fatal(err)
			}
			DefaultNodePoolAsWritten(np, w)
			var got []wantErr
			for _, e := range ValidateBudgetsAsWritten(np, w) {
				got = append(got, wantErr{e.Kind, e.Field})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("ValidateBudgetsAsWritten = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWrittenFromManifest(t *testing.T) {
	stream := `# two documents and a List
apiVersion: v1
kind: Namespace
metadata: {name: apps}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: first}
spec:
  disruption:
    budgets:
    - nodes: "1"
    - schedule: "0 9 * * *"
      duration: 60s
---
apiVersion: v1
kind: List
items:
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {name: second}
  spec:
    disruption: {consolidateAfter: Never}
    template: {spec: {expireAfter: Never}}
`
	cases := []struct {
		name, np string
		want     string
		wantErr  string
	}{
		{name: "a NodePool document", np: "first",
			want: `disruption=true consolidateAfter=false expireAfter=false budgets=[{nodes:"1" duration:<nil>} {nodes:<nil> duration:"60s"}]`},
		{name: "a NodePool in a List", np: "second",
			want: `disruption=true consolidateAfter=true expireAfter=true budgets=nil`},
		{name: "no such NodePool", np: "third", wantErr: `no NodePool "third"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := WrittenFromManifest([]byte(stream), tc.np)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := writtenString(w); got != tc.want {
				t.Errorf("Written = %s\nwant      %s", got, tc.want)
			}
		})
	}
	// JSON is read too.
	w, err := WrittenFromManifest([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"j"},"spec":{"disruption":{"budgets":[]}}}`), "j")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := writtenString(w), "disruption=true consolidateAfter=false expireAfter=false budgets=[]"; got != want {
		t.Errorf("Written = %s, want %s", got, want)
	}
}

func writtenString(w *Written) string {
	p := func(s *string) string {
		if s == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%q", *s)
	}
	bs := "nil"
	if w.Budgets != nil {
		var parts []string
		for _, b := range w.Budgets {
			parts = append(parts, fmt.Sprintf("{nodes:%s duration:%s}", p(b.Nodes), p(b.Duration)))
		}
		bs = "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("disruption=%t consolidateAfter=%t expireAfter=%t budgets=%s", w.Disruption, w.ConsolidateAfter, w.ExpireAfter, bs)
}

func TestCheckWritten(t *testing.T) {
	cases := []struct {
		name string
		w    *Written
		want []wantErr
	}{
		{"no disruption block: the CRD defaults consolidateAfter", &Written{}, nil},
		{"disruption with consolidateAfter", &Written{Disruption: true, ConsolidateAfter: true}, nil},
		{"disruption without consolidateAfter is rejected", &Written{Disruption: true},
			[]wantErr{{Rejected, "spec.disruption.consolidateAfter"}}},
		{"unknown", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []wantErr
			for _, e := range CheckWritten(tc.w) {
				got = append(got, wantErr{e.Kind, e.Field})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("CheckWritten = %v, want %v", got, tc.want)
			}
		})
	}
}
