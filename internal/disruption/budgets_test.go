package disruption

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

const (
	drifted       = karpv1.DisruptionReasonDrifted
	empty         = karpv1.DisruptionReasonEmpty
	underutilized = karpv1.DisruptionReasonUnderutilized
)

func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func pool(budgets ...karpv1.Budget) *karpv1.NodePool {
	np := &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	np.Spec.Disruption.Budgets = append([]karpv1.Budget{}, budgets...) // never nil: pool() is an explicitly empty list
	return np
}

func nodes(n string, reasons ...karpv1.DisruptionReason) karpv1.Budget {
	return karpv1.Budget{Nodes: n, Reasons: reasons}
}

func scheduled(n, schedule string, d time.Duration, reasons ...karpv1.DisruptionReason) karpv1.Budget {
	return karpv1.Budget{Nodes: n, Schedule: &schedule, Duration: &metav1.Duration{Duration: d}, Reasons: reasons}
}

// byReason spells out an expectation as Drifted, Empty, Underutilized.
func byReason(d, e, u int) map[karpv1.DisruptionReason]int {
	return map[karpv1.DisruptionReason]int{drifted: d, empty: e, underutilized: u}
}

func fmtAllowed(m map[karpv1.DisruptionReason]int) string {
	var parts []string
	for _, r := range Reasons {
		v, ok := m[r]
		switch {
		case !ok:
			parts = append(parts, string(r)+"=missing")
		case v == Unbounded:
			parts = append(parts, string(r)+"=unbounded")
		default:
			parts = append(parts, fmt.Sprintf("%s=%d", r, v))
		}
	}
	if len(m) != len(Reasons) {
		parts = append(parts, fmt.Sprintf("(%d keys)", len(m)))
	}
	return strings.Join(parts, " ")
}

// The business-hours budget of the seed write-up: no voluntary disruption on
// weekdays 09:00-17:00 UTC, at most 10 nodes otherwise.
func businessHours() *karpv1.NodePool {
	return pool(scheduled("0", "0 9 * * mon-fri", 8*time.Hour), nodes("10"))
}

// 2024-01-01 is a Monday.
const monday = "2024-01-01"

func TestAllowedByReason(t *testing.T) {
	defaulted := pool()
	defaulted.Spec.Disruption.Budgets = nil
	DefaultNodePool(defaulted)

	// The budgets of upstream's nodepool_budgets_test.go at 2000-06-15T12:30:30Z:
	// every "* * * * *" 1h budget is active, the @weekly one (Sunday 00:00) is not.
	upstream := pool(
		scheduled("10", "* * * * *", time.Hour),
		scheduled("100", "* * * * *", time.Hour),
		scheduled("100%", "* * * * *", time.Hour),
		scheduled("15", "* * * * *", time.Hour, drifted, underutilized),
		scheduled("5", "* * * * *", time.Hour, drifted),
		scheduled("0", "@weekly", time.Hour, underutilized, drifted, empty),
		scheduled("4", "* * * * *", time.Hour, empty),
	)

	cases := []struct {
		name     string
		np       *karpv1.NodePool
		at       string
		numNodes int
		want     map[karpv1.DisruptionReason]int
		wantErr  string // substring; "" = no error
	}{
		{name: "docs example: 20% of 19 nodes is 3.8, rounded up to 4",
			np: pool(nodes("20%")), at: monday + "T12:00:00Z", numNodes: 19, want: byReason(4, 4, 4)},
		{name: "5% of 10 nodes is 0.5, rounded up to 1",
			np: pool(nodes("5%")), at: monday + "T12:00:00Z", numNodes: 10, want: byReason(1, 1, 1)},
		{name: "10% of 0 nodes is 0",
			np: pool(nodes("10%")), at: monday + "T12:00:00Z", numNodes: 0, want: byReason(0, 0, 0)},
		{name: "100% of 7 nodes is 7",
			np: pool(nodes("100%")), at: monday + "T12:00:00Z", numNodes: 7, want: byReason(7, 7, 7)},
		{name: "a count is used as-is, even above the node count",
			np: pool(nodes("25")), at: monday + "T12:00:00Z", numNodes: 3, want: byReason(25, 25, 25)},
		{name: `nodes "0" blocks every reason`,
			np: pool(nodes("0")), at: monday + "T12:00:00Z", numNodes: 50, want: byReason(0, 0, 0)},
		{name: "seed: Drifted one at a time, Empty and Underutilized 100%, over 2 nodes",
			np: pool(nodes("1", drifted), nodes("100%", empty, underutilized)), at: monday + "T12:00:00Z", numNodes: 2,
			want: byReason(1, 2, 2)},
		{name: "budgets that all list reasons leave an unlisted reason unbounded",
			np: pool(nodes("1", drifted), nodes("3", empty)), at: monday + "T12:00:00Z", numNodes: 40,
			want: byReason(1, 3, Unbounded)},
		{name: "omitted budgets default to one 10% budget: 10% of 25 is 2.5, so 3",
			np: defaulted, at: monday + "T12:00:00Z", numNodes: 25, want: byReason(3, 3, 3)},
		{name: "an explicitly empty budget list leaves every reason unbounded",
			np: pool(), at: monday + "T12:00:00Z", numNodes: 25, want: byReason(Unbounded, Unbounded, Unbounded)},
		{name: "the smallest active budget wins for each reason (upstream's table)",
			np: upstream, at: "2000-06-15T12:30:30Z", numNodes: 100, want: byReason(5, 4, 10)},
		{name: "business hours: closed at Monday 09:00 exactly",
			np: businessHours(), at: monday + "T09:00:00Z", numNodes: 100, want: byReason(0, 0, 0)},
		{name: "business hours: still closed at 16:59",
			np: businessHours(), at: monday + "T16:59:00Z", numNodes: 100, want: byReason(0, 0, 0)},
		{name: "business hours: closed at 16:59:59.999999999",
			np: businessHours(), at: monday + "T16:59:59.999999999Z", numNodes: 100, want: byReason(0, 0, 0)},
		{name: "business hours: open at 17:00 exactly, window is [hit, hit+duration)",
			np: businessHours(), at: monday + "T17:00:00Z", numNodes: 100, want: byReason(10, 10, 10)},
		{name: "business hours: open at 08:59:59",
			np: businessHours(), at: monday + "T08:59:59Z", numNodes: 100, want: byReason(10, 10, 10)},
		{name: "business hours: open on Saturday at noon",
			np: businessHours(), at: "2024-01-06T12:00:00Z", numNodes: 100, want: byReason(10, 10, 10)},
		{name: "business hours: the schedule is UTC, 10:00 in Seoul on Monday is 01:00 UTC, open",
			np: businessHours(), at: monday + "T10:00:00+09:00", numNodes: 100, want: byReason(10, 10, 10)},
		{name: "business hours: 18:00 in Seoul on Monday is 09:00 UTC, closed",
			np: businessHours(), at: monday + "T18:00:00+09:00", numNodes: 100, want: byReason(0, 0, 0)},
		{name: "an inactive budget does not restrict: @yearly 1h in June",
			np: pool(scheduled("0", "@yearly", time.Hour)), at: "2000-06-15T12:30:30Z", numNodes: 100,
			want: byReason(Unbounded, Unbounded, Unbounded)},
		{name: "a duration longer than the period is always active",
			np: pool(scheduled("2", "@daily", 48*time.Hour)), at: "2024-01-07T00:00:00Z", numNodes: 100, want: byReason(2, 2, 2)},
		{name: "a scheduled budget for one reason only restricts that reason",
			np: pool(scheduled("0", "0 22 * * *", 2*time.Hour, drifted), nodes("50%")), at: monday + "T23:00:00Z", numNodes: 10,
			want: byReason(0, 5, 5)},
		{name: "upstream quirk: a schedule that never fires (30 February) counts as always active",
			np: pool(scheduled("0", "0 0 30 2 *", time.Hour), nodes("10")), at: "2024-06-15T12:00:00Z", numNodes: 100,
			want: byReason(0, 0, 0)},
		{name: "upstream quirk: reasons: [] applies the budget to no reason",
			np: pool(karpv1.Budget{Nodes: "0", Reasons: []karpv1.DisruptionReason{}}), at: monday + "T12:00:00Z", numNodes: 10,
			want: byReason(Unbounded, Unbounded, Unbounded)},
		{name: "an invalid schedule fails closed: every reason 0, with the error",
			np: pool(scheduled("5", "0 9 * *", 8*time.Hour), nodes("10")), at: monday + "T12:00:00Z", numNodes: 100,
			want: byReason(0, 0, 0), wantErr: "expected exactly 5 fields, found 4"},
		{name: "a reversed day range fails closed (upstream's error message)",
			np: pool(scheduled("5", "0 0 * * tue-mon", 6*time.Hour)), at: monday + "T12:00:00Z", numNodes: 100,
			want: byReason(0, 0, 0), wantErr: "beginning of range (2) beyond end of range (1)"},
		{name: "an invalid nodes value fails closed",
			np: pool(nodes("1000a%")), at: monday + "T12:00:00Z", numNodes: 100,
			want: byReason(0, 0, 0), wantErr: "invalid value"},
		{name: "a broken budget for one reason fails every reason closed",
			np: pool(nodes("1", drifted), scheduled("5", "* * * *", time.Hour, empty)), at: monday + "T12:00:00Z", numNodes: 100,
			want: byReason(0, 0, 0), wantErr: "invalid cron"},
		{name: "a broken nodes value in an inactive scheduled budget is not evaluated",
			np: pool(scheduled("x", "@yearly", time.Hour), nodes("4")), at: "2000-06-15T12:30:30Z", numNodes: 100,
			want: byReason(4, 4, 4)},
		{name: "a negative node count is an error, failing closed",
			np: pool(nodes("10")), at: monday + "T12:00:00Z", numNodes: -1,
			want: byReason(0, 0, 0), wantErr: "cannot be negative"},
		{name: "no NodePool is an error, failing closed",
			np: nil, at: monday + "T12:00:00Z", numNodes: 3,
			want: byReason(0, 0, 0), wantErr: "no NodePool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AllowedByReason(tc.np, at(t, tc.at), tc.numNodes)
			if g, w := fmtAllowed(got), fmtAllowed(tc.want); g != w {
				t.Errorf("AllowedByReason = %s, want %s", g, w)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// Upstream converts an integer nodes value with intstr.FromInt, which
// truncates to int32 (and logs through klog, silenced here).
func TestAllowedByReasonNodesOverflowInt32(t *testing.T) {
	klog.SetLogger(logr.Discard())
	t.Cleanup(klog.ClearLogger)
	cases := []struct {
		nodes string
		want  int
	}{
		{"2147483647", math.MaxInt32},
		{"2147483648", math.MinInt32},
		{"4294967306", 10},
	}
	for _, tc := range cases {
		t.Run(tc.nodes, func(t *testing.T) {
			got, err := AllowedByReason(pool(nodes(tc.nodes)), at(t, monday+"T12:00:00Z"), 100)
			if err != nil {
				t.Fatal(err)
			}
			if got[drifted] != tc.want {
				t.Errorf("Drifted = %d, want %d", got[drifted], tc.want)
			}
		})
	}
	if got := Available(math.MinInt32, 0); got != 0 {
		t.Errorf("Available(MinInt32, 0) = %d, want 0", got)
	}
}

func TestAvailable(t *testing.T) {
	cases := []struct {
		name                string
		allowed, disrupting int
		want                int
	}{
		{"3 allowed, 2 disrupting leaves 1", 3, 2, 1},
		{"3 allowed, 3 disrupting leaves 0", 3, 3, 0},
		{"3 allowed, 5 disrupting is 0, not negative", 3, 5, 0},
		{"0 allowed, 0 disrupting is 0", 0, 0, 0},
		{"unbounded, 0 disrupting stays unbounded", Unbounded, 0, Unbounded},
		{"unbounded minus 2 disrupting is MaxInt32-2, as upstream", Unbounded, 2, math.MaxInt32 - 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Available(tc.allowed, tc.disrupting); got != tc.want {
				t.Errorf("Available(%d, %d) = %d, want %d", tc.allowed, tc.disrupting, got, tc.want)
			}
		})
	}
}

// change spells out one expected Change as "RFC3339 Drifted Empty Underutilized"
// available counts, "u" for unbounded.
func fmtChanges(cs []Change) []string {
	var out []string
	for _, c := range cs {
		s := c.At.Format(time.RFC3339)
		for _, r := range Reasons {
			v, ok := c.Available[r]
			switch {
			case !ok:
				s += " missing"
			case c.Allowed[r] == Unbounded:
				s += " u"
			default:
				s += fmt.Sprintf(" %d", v)
			}
		}
		out = append(out, s)
	}
	return out
}

func TestChanges(t *testing.T) {
	weekOfBusinessHours := []string{
		"2024-01-01T09:00:00Z 0 0 0", "2024-01-01T17:00:00Z 10 10 10",
		"2024-01-02T09:00:00Z 0 0 0", "2024-01-02T17:00:00Z 10 10 10",
		"2024-01-03T09:00:00Z 0 0 0", "2024-01-03T17:00:00Z 10 10 10",
		"2024-01-04T09:00:00Z 0 0 0", "2024-01-04T17:00:00Z 10 10 10",
		"2024-01-05T09:00:00Z 0 0 0", "2024-01-05T17:00:00Z 10 10 10",
	}
	cases := []struct {
		name       string
		np         *karpv1.NodePool
		from       string
		window     time.Duration
		numNodes   int
		disrupting int
		want       []string
		wantErr    string
	}{
		{name: "business hours over a week: 5 closings and 5 openings",
			np: businessHours(), from: monday + "T00:00:00Z", window: 7 * 24 * time.Hour, numNodes: 100,
			want: weekOfBusinessHours},
		{name: "a week from Saturday noon: the same 10 transitions, next week",
			np: businessHours(), from: "2023-12-30T12:00:00Z", window: 7 * 24 * time.Hour, numNodes: 100,
			want: weekOfBusinessHours},
		{name: "disrupting nodes are subtracted: 3 disrupting leaves 7 when open",
			np: businessHours(), from: monday + "T00:00:00Z", window: 24 * time.Hour, numNodes: 100, disrupting: 3,
			want: []string{"2024-01-01T09:00:00Z 0 0 0", "2024-01-01T17:00:00Z 7 7 7"}},
		{name: "10 disrupting use up the open budget too: nothing changes",
			np: businessHours(), from: monday + "T00:00:00Z", window: 24 * time.Hour, numNodes: 100, disrupting: 10,
			want: nil},
		{name: "starting inside a window: only the opening at 17:00",
			np: businessHours(), from: monday + "T12:00:00Z", window: 6 * time.Hour, numNodes: 100,
			want: []string{"2024-01-01T17:00:00Z 10 10 10"}},
		{name: "a change exactly at from is not listed, (from, from+window]",
			np: businessHours(), from: monday + "T09:00:00Z", window: 8 * time.Hour, numNodes: 100,
			want: []string{"2024-01-01T17:00:00Z 10 10 10"}},
		{name: "a change exactly at from+window is listed",
			np: businessHours(), from: monday + "T01:00:00Z", window: 8 * time.Hour, numNodes: 100,
			want: []string{"2024-01-01T09:00:00Z 0 0 0"}},
		{name: "from in another time zone is read as the same instant",
			np: businessHours(), from: monday + "T17:00:00+09:00", window: 2 * time.Hour, numNodes: 100,
			want: []string{"2024-01-01T09:00:00Z 0 0 0"}},
		{name: "a nightly Drifted freeze changes Drifted only",
			np: pool(scheduled("0", "0 22 * * *", 2*time.Hour, drifted)), from: monday + "T00:00:00Z", window: 24 * time.Hour, numNodes: 10,
			want: []string{"2024-01-01T22:00:00Z 0 u u", "2024-01-02T00:00:00Z u u u"}},
		{name: "overlapping windows merge: every 30 minutes for 1h is always active",
			np: pool(scheduled("1", "*/30 * * * *", time.Hour)), from: monday + "T00:00:00Z", window: 24 * time.Hour, numNodes: 10,
			want: nil},
		{name: "touching windows merge: hourly for 1h is always active",
			np: pool(scheduled("1", "@hourly", time.Hour)), from: monday + "T00:00:00Z", window: 24 * time.Hour, numNodes: 10,
			want: nil},
		{name: "a window that only changes an unrestricted value by nothing is not a change",
			np: pool(scheduled("10", "0 9 * * *", time.Hour), nodes("5")), from: monday + "T00:00:00Z", window: 24 * time.Hour, numNodes: 100,
			want: nil},
		{name: "no scheduled budget: no changes",
			np: pool(nodes("10%")), from: monday + "T00:00:00Z", window: 366 * 24 * time.Hour, numNodes: 100,
			want: nil},
		{name: "every minute for a year is refused",
			np: pool(scheduled("1", "* * * * *", time.Minute)), from: monday + "T00:00:00Z", window: 366 * 24 * time.Hour, numNodes: 10,
			wantErr: "fires too often"},
		{name: "a window of more than 366 days is refused",
			np: businessHours(), from: monday + "T00:00:00Z", window: 367 * 24 * time.Hour, numNodes: 10,
			wantErr: "at most"},
		{name: "a zero window is refused",
			np: businessHours(), from: monday + "T00:00:00Z", window: 0, numNodes: 10,
			wantErr: "more than 0"},
		{name: "an invalid schedule is an error",
			np: pool(scheduled("1", "0 9 * *", time.Hour)), from: monday + "T00:00:00Z", window: time.Hour, numNodes: 10,
			wantErr: "expected exactly 5 fields"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Changes(tc.np, at(t, tc.from), tc.window, tc.numNodes, tc.disrupting)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, w := strings.Join(fmtChanges(got), "\n"), strings.Join(tc.want, "\n")
			if g != w {
				t.Errorf("Changes:\n%s\nwant:\n%s", g, w)
			}
			for _, c := range got {
				if c.At.Location() != time.UTC {
					t.Errorf("change at %s is not in UTC", c.At)
				}
			}
		})
	}
}
