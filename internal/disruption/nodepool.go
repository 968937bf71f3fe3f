// Package disruption holds Karpenter's NodePool disruption-budget rules as
// pure functions: the CRD defaults and validation of a NodePool (this file)
// and the allowed-disruption arithmetic (budgets.go). Time is always a
// parameter; nothing here reads the wall clock.
//
// The rules are Karpenter's own (sigs.k8s.io/karpenter v1.14.1,
// pkg/apis/v1/nodepool.go and the generated CRD
// pkg/apis/crds/karpenter.sh_nodepools.yaml), summarised in
// shared/reference/semantics.md §A.1, §A.1b, §A.5 and §F.
package disruption

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// CRD defaults and limits of karpenter.sh/v1 NodePool (semantics.md §A.1).
const (
	DefaultBudgetNodes      = "10%"  // spec.disruption.budgets default {nodes: "10%"}, and a budget's nodes default
	DefaultConsolidateAfter = "0s"   // spec.disruption default {consolidateAfter: "0s"}
	DefaultExpireAfter      = "720h" // spec.template.spec.expireAfter default
	MaxBudgets              = 50     // spec.disruption.budgets maxItems
	MaxReasons              = 50     // spec.disruption.budgets[*].reasons maxItems
)

// The CRD's patterns for budget fields (semantics.md §A.1). The API server
// checks them with Go's regexp, as here.
var (
	nodesPattern    = regexp.MustCompile(`^((100|[0-9]{1,2})%|[0-9]+)$`)
	schedulePattern = regexp.MustCompile(`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`)
	durationPattern = regexp.MustCompile(`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`)
)

// ExplicitNever is a NillableDuration that says "Never" and, unlike the value
// upstream's UnmarshalJSON produces for "Never", cannot be mistaken for an
// unset field: Duration is nil (disabled, as Karpenter reads it) and Raw holds
// "Never" (so it marshals back to "Never").
func ExplicitNever() karpv1.NillableDuration {
	return karpv1.NillableDuration{Raw: []byte(`"` + karpv1.Never + `"`)}
}

// isUnset reports whether a NillableDuration carries no value at all. Upstream's
// UnmarshalJSON leaves both Duration and Raw nil for "Never" (duration.go), so
// after decoding, an explicit "Never" looks unset too; DefaultNodePoolAsWritten
// marks it with ExplicitNever first.
func isUnset(d karpv1.NillableDuration) bool { return d.Duration == nil && d.Raw == nil }

// DefaultNodePool applies the defaults the API server applies to a NodePool
// (semantics.md §A.1):
//   - spec.disruption.budgets omitted (nil) → [{nodes: "10%"}]; an explicitly
//     empty list stays empty, which leaves every reason unbounded (§A.1b);
//   - a budget's empty nodes → "10%";
//   - spec.disruption.consolidateAfter unset → "0s";
//   - spec.disruption.consolidationPolicy unset → WhenEmptyOrUnderutilized;
//   - spec.template.spec.expireAfter unset → "720h".
//
// A NillableDuration counts as unset only when both its Duration and Raw are
// nil. Caution: upstream decodes "Never" to exactly that value, so for a
// NodePool decoded from a manifest use DefaultNodePoolAsWritten, which knows
// which fields the manifest wrote; DefaultNodePool alone would turn an
// explicit expireAfter: Never into 720h. It is idempotent.
func DefaultNodePool(np *karpv1.NodePool) { DefaultNodePoolAsWritten(np, nil) }

// DefaultNodePoolAsWritten is DefaultNodePool for a NodePool decoded from a
// manifest, given what the manifest literally wrote (see WrittenFromManifest;
// nil means unknown): a NillableDuration the manifest set to "Never" is kept as
// ExplicitNever, and a budget whose nodes was written as "" keeps "" (the API
// server only defaults absent fields, and then rejects "" by pattern).
//
// A manifest that has spec.disruption but no consolidateAfter is rejected by
// the API server (the CRD defaults consolidateAfter only together with the
// whole disruption block; see CheckWritten); it is defaulted to "0s" here all
// the same, so the twin can still run it.
func DefaultNodePoolAsWritten(np *karpv1.NodePool, w *Written) {
	if np == nil {
		return
	}
	d := &np.Spec.Disruption
	tmpl := &np.Spec.Template.Spec
	if w != nil {
		if w.ConsolidateAfter && isUnset(d.ConsolidateAfter) {
			d.ConsolidateAfter = ExplicitNever()
		}
		if w.ExpireAfter && isUnset(tmpl.ExpireAfter) {
			tmpl.ExpireAfter = ExplicitNever()
		}
	}
	if isUnset(d.ConsolidateAfter) {
		d.ConsolidateAfter = karpv1.MustParseNillableDuration(DefaultConsolidateAfter)
	}
	if d.ConsolidationPolicy == "" {
		d.ConsolidationPolicy = karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	}
	if d.Budgets == nil {
		d.Budgets = []karpv1.Budget{{Nodes: DefaultBudgetNodes}}
	}
	for i := range d.Budgets {
		if d.Budgets[i].Nodes == "" && w.budget(i).Nodes == nil {
			d.Budgets[i].Nodes = DefaultBudgetNodes
		}
	}
	if isUnset(tmpl.ExpireAfter) {
		tmpl.ExpireAfter = karpv1.MustParseNillableDuration(DefaultExpireAfter)
	}
}

// Written records what a NodePool manifest literally said, for the facts the
// decoded Go object loses: NillableDuration decodes "Never" and an absent
// field to the same value, metav1.Duration forgets how a duration was
// written ("60s" and "1m" both become 1m0s, and only "1m" passes the CRD
// pattern), and a string field cannot tell "" from absent.
type Written struct {
	Disruption       bool // spec.disruption is present
	ConsolidateAfter bool // spec.disruption.consolidateAfter is present (a duration or "Never")
	ExpireAfter      bool // spec.template.spec.expireAfter is present (a duration or "Never")
	// Budgets has one entry per spec.disruption.budgets item, nil when the
	// list is absent (non-nil and empty for "budgets: []").
	Budgets []WrittenBudget
	// ConsolidateAfterText and ExpireAfterText are the durations as
	// written; nil when absent.
	ConsolidateAfterText, ExpireAfterText *string
}

// WrittenBudget is one budget as written; a nil field was absent (or null).
type WrittenBudget struct {
	Nodes    *string
	Duration *string
}

// budget returns budget i as written, or an empty WrittenBudget when unknown.
func (w *Written) budget(i int) WrittenBudget {
	if w == nil || i < 0 || i >= len(w.Budgets) {
		return WrittenBudget{}
	}
	return w.Budgets[i]
}

// WrittenFromManifest finds the karpenter.sh NodePool called name in a YAML
// or JSON stream (several documents, or a List) and records what it wrote.
// It returns an error if the stream does not parse or holds no such NodePool.
func WrittenFromManifest(stream []byte, name string) (*Written, error) {
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("no NodePool %q in the manifest", name)
		}
		if err != nil {
			return nil, err
		}
		if w := findWritten(doc, name); w != nil {
			return w, nil
		}
	}
}

func findWritten(doc any, name string) *Written {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	kind, _ := m["kind"].(string)
	if items, ok := m["items"].([]any); ok && strings.HasSuffix(kind, "List") {
		for _, item := range items {
			if w := findWritten(item, name); w != nil {
				return w
			}
		}
		return nil
	}
	apiVersion, _ := m["apiVersion"].(string)
	if kind != "NodePool" || apiVersion != "karpenter.sh/v1" {
		return nil
	}
	if got, _ := lookup(m, "metadata", "name").(string); got != name {
		return nil
	}
	w := &Written{
		Disruption:       lookup(m, "spec", "disruption") != nil,
		ConsolidateAfter: lookup(m, "spec", "disruption", "consolidateAfter") != nil,
		ExpireAfter:      lookup(m, "spec", "template", "spec", "expireAfter") != nil,
	}
	w.ConsolidateAfterText = scalar(lookup(m, "spec", "disruption", "consolidateAfter"))
	w.ExpireAfterText = scalar(lookup(m, "spec", "template", "spec", "expireAfter"))
	if budgets, ok := lookup(m, "spec", "disruption", "budgets").([]any); ok {
		w.Budgets = make([]WrittenBudget, len(budgets))
		for i, b := range budgets {
			bm, _ := b.(map[string]any)
			w.Budgets[i] = WrittenBudget{Nodes: scalar(bm["nodes"]), Duration: scalar(bm["duration"])}
		}
	}
	return w
}

// lookup walks nested maps; it returns nil when a key is absent or null.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func scalar(v any) *string {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return &v
	default:
		s := fmt.Sprint(v)
		return &s
	}
}

// Kind says how Karpenter treats a problem ValidateBudgets found.
type Kind int

const (
	// Rejected: the API server rejects the NodePool (CRD schema or CEL rule,
	// semantics.md §A.1), so it never reaches Karpenter.
	Rejected Kind = iota
	// Broken: the API server accepts it, but Karpenter cannot evaluate the
	// budget as written. A cron it cannot parse or a nodes value it cannot
	// read makes it fail closed: 0 disruptions for every reason (§A.1b, §F.3).
	Broken
	// Warning: accepted and evaluated, but probably not what was meant.
	Warning
)

func (k Kind) String() string {
	switch k {
	case Rejected:
		return "rejected by the API server"
	case Broken:
		return "accepted, but Karpenter cannot evaluate it"
	default:
		return "warning"
	}
}

// BudgetError is one problem in spec.disruption, naming the field.
type BudgetError struct {
	Kind  Kind
	Index int    // budget index in spec.disruption.budgets; -1 when not about one budget
	Field string // "spec.disruption.budgets[1].schedule"
	Msg   string // what is wrong
	Fix   string // how to fix it; may be empty
}

// Error is the one-line form: "FIELD: MSG (FIX)".
func (e BudgetError) Error() string {
	s := e.Field + ": " + e.Msg
	if e.Fix != "" {
		s += " (" + e.Fix + ")"
	}
	return s
}

const scheduleFix = `Karpenter evaluates it in UTC; use 5 fields, e.g. "0 9 * * mon-fri"`

// ValidateBudgets checks spec.disruption.budgets exactly as the NodePool CRD
// does (semantics.md §A.1: patterns, schedule ⇔ duration, reasons enum and
// set, at most 50 budgets and 50 reasons), and beyond it what Karpenter needs
// to evaluate a budget (§A.1b): the schedule must parse with robfig/cron's
// ParseStandard("TZ=UTC " + schedule), and an integer nodes must fit in int32.
// Run it after DefaultNodePool. A duration is checked the way a Go client
// sends it (metav1.Duration's String(), e.g. "30s", "-20m0s"); use
// ValidateBudgetsAsWritten to check the string a manifest wrote.
func ValidateBudgets(np *karpv1.NodePool) []BudgetError {
	return ValidateBudgetsAsWritten(np, nil)
}

// ValidateBudgetsAsWritten is ValidateBudgets checking durations and nodes
// as the manifest wrote them (w may be nil: unknown).
func ValidateBudgetsAsWritten(np *karpv1.NodePool, w *Written) []BudgetError {
	if np == nil {
		return nil
	}
	var errs []BudgetError
	budgets := np.Spec.Disruption.Budgets
	if len(budgets) > MaxBudgets {
		errs = append(errs, BudgetError{Kind: Rejected, Index: -1, Field: "spec.disruption.budgets",
			Msg: fmt.Sprintf("%d budgets, at most %d are allowed", len(budgets), MaxBudgets),
			Fix: "merge budgets; each reason gets the smallest active budget that lists it"})
	}
	for i := range budgets {
		errs = append(errs, validateBudget(i, &budgets[i], w.budget(i))...)
	}
	return errs
}

func validateBudget(i int, b *karpv1.Budget, w WrittenBudget) []BudgetError {
	var errs []BudgetError
	field := func(name string) string { return fmt.Sprintf("spec.disruption.budgets[%d].%s", i, name) }
	add := func(kind Kind, name, msg, fix string) {
		errs = append(errs, BudgetError{Kind: kind, Index: i, Field: field(name), Msg: msg, Fix: fix})
	}

	// nodes: CRD pattern, then what Karpenter's GetIntStrFromValue +
	// intstr.FromInt make of it (semantics.md §A.1b).
	switch {
	case !nodesPattern.MatchString(b.Nodes):
		add(Rejected, "nodes", fmt.Sprintf("%q is not a valid budget", b.Nodes),
			`use a node count such as "5" or a percentage from "0%" to "100%"; quote it, it is a string`)
	case !strings.HasSuffix(b.Nodes, "%"):
		if n, err := strconv.Atoi(b.Nodes); err != nil {
			add(Broken, "nodes", fmt.Sprintf("%q is too large for Karpenter to read as a number, so it fails closed: 0 disruptions for every reason", b.Nodes),
				"use a node count below 2147483648")
		} else if n > math.MaxInt32 {
			add(Broken, "nodes", fmt.Sprintf("%q overflows int32 in Karpenter (intstr.FromInt) and wraps to %d", b.Nodes, int32(n)),
				"use a node count below 2147483648, or omit the budget for no limit")
		}
	}

	// schedule ⇔ duration: CEL rule "'schedule' must be set with 'duration'".
	switch {
	case b.Schedule != nil && b.Duration == nil:
		add(Rejected, "duration", "missing: a budget with a schedule needs a duration ('schedule' must be set with 'duration')",
			"add how long each window lasts from each schedule hit, e.g. duration: 8h")
	case b.Schedule == nil && b.Duration != nil:
		add(Rejected, "schedule", "missing: a budget with a duration needs a schedule ('schedule' must be set with 'duration')",
			`add when each window starts, e.g. schedule: "0 9 * * mon-fri" (UTC), or remove duration for an always-active budget`)
	}

	if b.Schedule != nil {
		errs = append(errs, validateSchedule(i, *b.Schedule)...)
	}

	if b.Duration != nil {
		d := b.Duration.Duration
		written := d.String() // what a Go client sends (metav1.Duration.MarshalJSON)
		if w.Duration != nil {
			written = *w.Duration
		}
		switch {
		case d < 0:
			add(Rejected, "duration", fmt.Sprintf("%q is negative", written),
				`use hours and/or minutes, e.g. "8h", "30m" or "2h30m"`)
		case !durationPattern.MatchString(written):
			add(Rejected, "duration", fmt.Sprintf("%q is not a valid budget duration: only hours and minutes are accepted", written),
				`use e.g. "8h", "30m" or "2h30m"; schedules fire on whole minutes`)
		case d == 0:
			add(Warning, "duration", fmt.Sprintf("%q: the budget is never active (it is active on [hit, hit+duration))", written),
				"use a positive duration, or remove the budget")
		}
	}

	// reasons: enum {Underutilized, Empty, Drifted}, listType=set, maxItems 50
	// (semantics.md §A.1); expiration is no reason, it ignores budgets (§A.5).
	if len(b.Reasons) > MaxReasons {
		add(Rejected, "reasons", fmt.Sprintf("%d reasons, at most %d are allowed", len(b.Reasons), MaxReasons), "list each reason once")
	}
	if b.Reasons != nil && len(b.Reasons) == 0 {
		// Karpenter applies a budget to all reasons only when Reasons == nil
		// (semantics.md §A.1b); "reasons: []" decodes to an empty, non-nil list.
		add(Warning, "reasons", "an empty list makes the budget apply to no reason at all",
			"omit reasons to apply the budget to every reason")
	}
	seen := map[karpv1.DisruptionReason]bool{}
	for j, r := range b.Reasons {
		name := fmt.Sprintf("reasons[%d]", j)
		switch {
		case !isReason(r):
			add(Rejected, name, fmt.Sprintf("%q is not a disruption reason", r),
				"use Drifted, Empty or Underutilized; expiration ignores budgets")
		case seen[r]:
			add(Rejected, name, fmt.Sprintf("duplicate %q", r), "list each reason once")
		}
		seen[r] = true
	}
	return errs
}

var cronFieldListRE = regexp.MustCompile(`: \[[^\]]*\]$`)

// validateSchedule checks the CRD pattern and Karpenter's own parse,
// cron.ParseStandard("TZ=UTC " + schedule) (semantics.md §A.1b, §F.5).
func validateSchedule(i int, s string) []BudgetError {
	field := fmt.Sprintf("spec.disruption.budgets[%d].schedule", i)
	sched, cronErr := cron.ParseStandard("TZ=UTC " + s)
	fix := scheduleFix
	if strings.Contains(s, "TZ=") {
		fix = "time zones are not supported: Karpenter evaluates every schedule in UTC; convert the time to UTC"
	}
	cronMsg := func() string {
		return fmt.Sprintf("%q is not a valid cron schedule: %s", s, cronFieldListRE.ReplaceAllString(cronErr.Error(), ""))
	}
	switch {
	case !schedulePattern.MatchString(s) && cronErr != nil:
		return []BudgetError{{Kind: Rejected, Index: i, Field: field, Msg: cronMsg(), Fix: fix}}
	case !schedulePattern.MatchString(s):
		return []BudgetError{{Kind: Rejected, Index: i, Field: field,
			Msg: fmt.Sprintf("%q is not accepted by the NodePool CRD", s),
			Fix: "use 5 cron fields (minute hour day-of-month month day-of-week, in UTC) or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"}}
	case cronErr != nil:
		return []BudgetError{{Kind: Broken, Index: i, Field: field,
			Msg: cronMsg() + "; the API server accepts it, but Karpenter then fails closed: 0 disruptions for every reason",
			Fix: fix}}
	}
	// robfig/cron's Next returns the zero time when nothing matches within
	// five years, and IsActive reads that as a hit in the past: the budget is
	// then always active. 2000-01-01 puts a 29 February in the search range.
	if sched.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return []BudgetError{{Kind: Warning, Index: i, Field: field,
			Msg: fmt.Sprintf("%q never fires, and Karpenter then treats the budget as always active", s),
			Fix: "check the day of month against the month"}}
	}
	return nil
}

func isReason(r karpv1.DisruptionReason) bool {
	for _, known := range Reasons {
		if r == known {
			return true
		}
	}
	return false
}

// CheckWritten reports problems in spec.disruption outside the budgets that
// only the written manifest shows. Today: the CRD defaults consolidateAfter
// only as part of a whole missing disruption block ({consolidateAfter: "0s"})
// and marks it required inside one, so a manifest with spec.disruption but no
// consolidateAfter is rejected with "spec.disruption.consolidateAfter:
// Required value" (karpenter.sh_nodepools.yaml, v1.14.1).
func CheckWritten(w *Written) []BudgetError {
	if w == nil || !w.Disruption || w.ConsolidateAfter {
		return nil
	}
	return []BudgetError{{Kind: Rejected, Index: -1, Field: "spec.disruption.consolidateAfter",
		Msg: "required when spec.disruption is set: the API server rejects this NodePool with \"Required value\"",
		Fix: "add consolidateAfter: 0s, the default when the whole disruption block is omitted, or Never"}}
}
