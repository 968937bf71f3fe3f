// Package deprecations is Ladder's table of Kubernetes API versions that
// are deprecated or removed, by apiVersion and kind, for Kubernetes 1.16 to
// 1.37 (and the removals k8s.io/api already schedules beyond), and of the
// custom-resource API versions their controllers stop serving.
//
// The tables are reviewed data checked into the repository:
//   - apis_generated.csv, written by `go generate` from the
//     APILifecycleDeprecated/Removed/Replacement methods of the k8s.io/api
//     types (package lifecycle); a test fails when it is out of date;
//   - apis_guide.csv, written by hand from the official Deprecated API
//     Migration Guide and the release notes: kinds k8s.io/api no longer has
//     (PodSecurityPolicy, autoscaling/v2beta1 and v2beta2, apiextensions and
//     apiregistration v1beta1, the alpha APIs removed since 1.8, ...),
//     corrections, and the migration notes findings repeat;
//   - apis_served.csv, the first release serving each version a
//     recommendation may name (ReplacementAt);
//   - components.yaml, custom-resource APIs by component version
//     (Karpenter, cert-manager, AWS Load Balancer Controller), in pluto's
//     versions-file format, which --additional-versions files also use
//     (ParseVersionsFile, Table).
package deprecations

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

//go:embed apis_generated.csv
var generatedCSV []byte

//go:embed apis_guide.csv
var guideCSV []byte

//go:embed apis_served.csv
var servedCSV []byte

// Covered is the range of Kubernetes minors the table is reviewed for.
var (
	MinCovered = kubeversion.Minor{Major: 1, Minor: 16}
	MaxCovered = kubeversion.Minor{Major: 1, Minor: 37}
)

// Entry is the lifecycle of one kind at one apiVersion.
type Entry struct {
	APIVersion string // "policy/v1beta1"
	Kind       string // "PodDisruptionBudget"
	// Introduced is when the API version was first served (zero if unknown).
	Introduced kubeversion.Minor
	// Deprecated is the first release that deprecates it.
	Deprecated kubeversion.Minor
	// Removed is the first release that no longer serves it; zero when no
	// removal is scheduled (core/v1 Endpoints, ComponentStatus).
	Removed kubeversion.Minor
	// ReplacementAPIVersion and ReplacementKind say what to use instead;
	// empty when there is no replacement (PodSecurityPolicy).
	ReplacementAPIVersion string
	ReplacementKind       string
	// Note is migration advice from the guide; may be empty.
	Note string
	// Source is "k8s.io/api", "migration guide" or both.
	Source string
}

// Replacement is "apiVersion Kind" of the replacement, or "".
func (e Entry) Replacement() string {
	if e.ReplacementAPIVersion == "" {
		return ""
	}
	return e.ReplacementAPIVersion + " " + e.ReplacementKind
}

// RemovedBy reports whether the API is no longer served at minor v.
func (e Entry) RemovedBy(v kubeversion.Minor) bool {
	return !e.Removed.IsZero() && !v.Less(e.Removed)
}

// DeprecatedBy reports whether the API is deprecated (or removed) at minor v.
func (e Entry) DeprecatedBy(v kubeversion.Minor) bool {
	return !e.Deprecated.IsZero() && !v.Less(e.Deprecated)
}

type key struct{ apiVersion, kind string }

var (
	loadOnce sync.Once
	table    map[key]Entry
	served   map[key]kubeversion.Minor // apis_served.csv
	loadErr  error

	versionsOnce sync.Once
	versions     map[groupKind][]servedVersion
)

func load() {
	table, loadErr = build(generatedCSV, guideCSV)
	if loadErr == nil {
		served, loadErr = readServed(servedCSV)
	}
	if loadErr != nil {
		panic(loadErr) // the embedded files are tested; this cannot happen in a release
	}
}

// readServed reads apis_served.csv: the first minor serving an API version.
func readServed(data []byte) (map[key]kubeversion.Minor, error) {
	rows, err := readCSV("apis_served.csv", data, []string{"api_version", "kind", "introduced"})
	if err != nil {
		return nil, err
	}
	out := map[key]kubeversion.Minor{}
	for _, r := range rows {
		k := key{r.get("api_version"), r.get("kind")}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("apis_served.csv:%d: %s %s appears twice", r.line, k.apiVersion, k.kind)
		}
		v, err := r.minor("introduced")
		if err != nil || v.IsZero() {
			return nil, fmt.Errorf("apis_served.csv:%d: introduced: want a minor such as 1.21 (%v)", r.line, err)
		}
		out[k] = v
	}
	return out, nil
}

// Lookup returns the lifecycle of a kind at an apiVersion; ok is false for
// API versions that are neither deprecated nor removed, and for custom
// resources.
func Lookup(apiVersion, kind string) (Entry, bool) {
	loadOnce.Do(load)
	e, ok := table[key{apiVersion, kind}]
	return e, ok
}

// All returns every entry, sorted by apiVersion and kind.
func All() []Entry {
	loadOnce.Do(load)
	out := make([]Entry, 0, len(table))
	for _, e := range table {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return strings.Compare(a.APIVersion+" "+a.Kind, b.APIVersion+" "+b.Kind)
	})
	return out
}

// build merges the generated table and the guide.
func build(generated, guide []byte) (map[key]Entry, error) {
	t := map[key]Entry{}
	gen, err := readCSV("apis_generated.csv", generated, []string{"api_version", "kind", "introduced", "deprecated", "removed", "replacement"})
	if err != nil {
		return nil, err
	}
	for _, r := range gen {
		e := Entry{APIVersion: r.get("api_version"), Kind: r.get("kind"), Source: "k8s.io/api"}
		if e.Introduced, err = r.minor("introduced"); err == nil {
			if e.Deprecated, err = r.minor("deprecated"); err == nil {
				e.Removed, err = r.minor("removed")
			}
		}
		if err != nil {
			return nil, err
		}
		e.ReplacementAPIVersion, e.ReplacementKind, _ = strings.Cut(r.get("replacement"), " ")
		k := key{e.APIVersion, e.Kind}
		if _, dup := t[k]; dup {
			return nil, fmt.Errorf("apis_generated.csv:%d: %s %s appears twice", r.line, e.APIVersion, e.Kind)
		}
		t[k] = e
	}
	hand, err := readCSV("apis_guide.csv", guide, []string{"api_version", "kind", "deprecated", "removed", "replacement", "note"})
	if err != nil {
		return nil, err
	}
	seen := map[key]bool{}
	for _, r := range hand {
		k := key{r.get("api_version"), r.get("kind")}
		if seen[k] {
			return nil, fmt.Errorf("apis_guide.csv:%d: %s %s appears twice", r.line, k.apiVersion, k.kind)
		}
		seen[k] = true
		e, inGenerated := t[k]
		if inGenerated {
			e.Source = "k8s.io/api, migration guide"
		} else {
			e = Entry{APIVersion: k.apiVersion, Kind: k.kind, Source: "migration guide"}
		}
		if s := r.get("deprecated"); s != "" {
			if e.Deprecated, err = r.minor("deprecated"); err != nil {
				return nil, err
			}
		}
		if s := r.get("removed"); s != "" {
			if e.Removed, err = r.minor("removed"); err != nil {
				return nil, err
			}
		}
		if s := r.get("replacement"); s != "" {
			gv, kind, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("apis_guide.csv:%d: replacement %q: want \"apiVersion Kind\"", r.line, s)
			}
			e.ReplacementAPIVersion, e.ReplacementKind = gv, kind
		}
		e.Note = r.get("note")
		if e.Deprecated.IsZero() {
			return nil, fmt.Errorf("apis_guide.csv:%d: %s %s has no deprecated version and is not in apis_generated.csv", r.line, k.apiVersion, k.kind)
		}
		if !e.Removed.IsZero() && e.Removed.Less(e.Deprecated) {
			return nil, fmt.Errorf("apis_guide.csv:%d: %s %s is removed (%s) before it is deprecated (%s)", r.line, k.apiVersion, k.kind, e.Removed, e.Deprecated)
		}
		t[k] = e
	}
	return t, nil
}

type row struct {
	file   string
	line   int
	fields map[string]string
}

func (r row) get(col string) string { return r.fields[col] }

func (r row) minor(col string) (kubeversion.Minor, error) {
	s := r.fields[col]
	if s == "" {
		return kubeversion.Minor{}, nil
	}
	v, err := kubeversion.Parse(s)
	if err != nil {
		return v, fmt.Errorf("%s:%d: %s: %w", r.file, r.line, col, err)
	}
	return v, nil
}

// readCSV reads a CSV file whose lines starting with # are comments; each
// row keeps its line in the file.
func readCSV(name string, data []byte, header []string) ([]row, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = '#'
	cr.FieldsPerRecord = len(header)
	first, err := cr.Read()
	if err != nil || !slices.Equal(first, header) {
		return nil, fmt.Errorf("%s: the header must be %s", name, strings.Join(header, ","))
	}
	var rows []row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		m := make(map[string]string, len(header))
		for j, h := range header {
			m[h] = strings.TrimSpace(rec[j])
		}
		rows = append(rows, row{file: name, line: line, fields: m})
	}
}
