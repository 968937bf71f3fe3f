package insights

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// Report is the result of running checks over an input.
type Report struct {
	Current kubeversion.Minor // zero when unknown
	// CurrentSource is Input.CurrentSource.
	CurrentSource string
	Target        kubeversion.Minor
	// Findings are sorted: by hop (findings for every hop first), severity
	// (ERROR first), check, source and object. A check that ran and found
	// nothing contributes one PASSING finding.
	Findings []Finding
	// Skipped are the checks that did not run, with what they need.
	Skipped []Skipped
	// Objects is how many objects were checked.
	Objects int
	// FilesSkipped counts the files the manifest sources did not check
	// (ReadPaths: not manifests, templates, special files).
	FilesSkipped SkippedFiles
}

// Skipped is a check that did not run because the input lacks what it needs.
type Skipped struct {
	Check string
	Needs Needs
}

// Run runs checks (every registered check when nil) over the input. Checks
// run concurrently; the report is the same whatever the scheduling.
func Run(in *Input, checks []Check) *Report {
	if checks == nil {
		checks = Checks()
	}
	rep := &Report{Current: in.Current, CurrentSource: in.CurrentSource, Target: in.Target, Objects: len(in.Objects)}
	results := make([][]Finding, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		info := c.Info()
		if !in.has(info.Needs) {
			rep.Skipped = append(rep.Skipped, Skipped{Check: info.ID, Needs: info.Needs})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fs := c.Run(in)
			for j := range fs {
				fs[j].Check = info.ID
			}
			if len(fs) == 0 {
				fs = []Finding{{Check: info.ID, Severity: Passing,
					Message: fmt.Sprintf("%s: none found in %s", info.Title, plural(len(in.Objects), "object"))}}
			}
			results[i] = fs
		}()
	}
	wg.Wait()
	// One allocation of the final size, each check's slice let go once
	// copied: with 250,000 findings, growing the report by append held
	// both the checks' slices and two copies of the report at once.
	n := 0
	for _, fs := range results {
		n += len(fs)
	}
	rep.Findings = make([]Finding, 0, n)
	for i, fs := range results {
		rep.Findings = append(rep.Findings, fs...)
		results[i] = nil
	}
	SortFindings(rep.Findings)
	return rep
}

// SortFindings sorts findings into report order.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			compareHops(a.Hop, b.Hop),
			cmp.Compare(a.Severity.Rank(), b.Severity.Rank()),
			cmp.Compare(a.Check, b.Check),
			cmp.Compare(a.source.File, b.source.File),
			cmp.Compare(a.source.Line, b.source.Line),
			cmp.Compare(a.Object.Source, b.Object.Source),
			cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Name, b.Object.Name),
			cmp.Compare(a.Field, b.Field),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

func compareHops(a, b string) int {
	if a == b {
		return 0
	}
	if a == "" || b == "" {
		return cmp.Compare(a, b) // "" (every hop) first
	}
	va, errA := kubeversion.Parse(a)
	vb, errB := kubeversion.Parse(b)
	if errA != nil || errB != nil {
		return cmp.Compare(a, b)
	}
	return va.Sub(vb)
}

// Summary counts findings by severity; ERROR and WARNING are always present.
func (r *Report) Summary() map[Severity]int {
	s := map[Severity]int{Error: 0, Warning: 0}
	for _, f := range r.Findings {
		if f.Severity != Passing {
			s[f.Severity]++
		}
	}
	return s
}

// Worst returns the worst severity among the findings that are not
// PASSING, or "" when there are none.
func (r *Report) Worst() Severity {
	var worst Severity
	for _, f := range r.Findings {
		if f.Severity != Passing && (worst == "" || f.Severity.Rank() < worst.Rank()) {
			worst = f.Severity
		}
	}
	return worst
}

// Fails reports whether any finding is at or above a severity (the
// --fail-on rule: exit 2).
func (r *Report) Fails(at Severity) bool {
	w := r.Worst()
	return w != "" && w.AtLeast(at)
}

// Hops lists the report's hops: Current+1 … Target, or Target alone.
func (r *Report) Hops() []kubeversion.Minor {
	in := Input{Current: r.Current, Target: r.Target}
	return in.Hops()
}

func sortStrings(s []string) { slices.Sort(s) }
