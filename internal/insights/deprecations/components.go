package deprecations

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

//go:embed components.yaml
var componentsYAML []byte

// ComponentEntry is a custom resource's API version as the component whose
// CRDs define it serves it: removal is by the component's version
// (Karpenter v1.1.0 stops serving karpenter.sh/v1beta1), not Kubernetes'.
type ComponentEntry struct {
	APIVersion, Kind string // Kind "" matches every kind of APIVersion
	// Component is pluto's component name: karpenter, cert-manager, ...
	Component string
	// Deprecated and Removed are component versions ("v1.1.0"), "" for none.
	Deprecated, Removed                    string
	ReplacementAPIVersion, ReplacementKind string
	// Source is "components.yaml:12" or the --additional-versions file:line.
	Source string

	deprecated, removed *utilversion.Version
}

// ComponentName is how findings name a component.
func (e ComponentEntry) ComponentName() string {
	switch e.Component {
	case "karpenter":
		return "Karpenter"
	case "aws-load-balancer-controller":
		return "AWS Load Balancer Controller"
	case "istio":
		return "Istio"
	}
	return e.Component
}

// Replacement is "apiVersion Kind" of the replacement, or "".
func (e ComponentEntry) Replacement() string {
	if e.ReplacementAPIVersion == "" {
		return ""
	}
	return e.ReplacementAPIVersion + " " + e.ReplacementKind
}

// RemovedBy reports whether component version v no longer serves it.
func (e ComponentEntry) RemovedBy(v *utilversion.Version) bool {
	return e.removed != nil && v != nil && !v.LessThan(e.removed)
}

// DeprecatedBy reports whether component version v deprecates it.
func (e ComponentEntry) DeprecatedBy(v *utilversion.Version) bool {
	return e.deprecated != nil && v != nil && !v.LessThan(e.deprecated)
}

// Table is the API table one check runs with: the shipped Kubernetes and
// component tables, with the rows of --additional-versions files over them.
// The zero of *Table (nil) is the shipped table.
type Table struct {
	kube       map[key]Entry
	components map[key]ComponentEntry
	// targets are the component versions the cluster runs, from
	// target-versions.
	targets map[string]*utilversion.Version
	raw     map[string]string
}

var (
	shippedOnce sync.Once
	shipped     *Table
)

// Shipped is the table Ladder ships.
func Shipped() *Table {
	shippedOnce.Do(func() {
		f, err := ParseVersionsFile("components.yaml", componentsYAML)
		if err != nil {
			panic(err) // embedded and tested
		}
		shipped = (&Table{}).with(f, "components.yaml")
	})
	return shipped
}

// WithVersionsFile returns the table with the file's rows over it: a row
// replaces the row of the same apiVersion and kind; a target-versions
// entry sets the version the cluster runs of that component.
func (t *Table) WithVersionsFile(f *VersionsFile, name string) *Table {
	if t == nil {
		t = Shipped()
	}
	return t.with(f, name)
}

func (t *Table) with(f *VersionsFile, name string) *Table {
	out := &Table{kube: map[key]Entry{}, components: map[key]ComponentEntry{}, targets: map[string]*utilversion.Version{}, raw: map[string]string{}}
	for k, e := range t.kube {
		out.kube[k] = e
	}
	for k, e := range t.components {
		out.components[k] = e
	}
	for c, v := range t.targets {
		out.targets[c], out.raw[c] = v, t.raw[c]
	}
	for c, s := range f.Targets {
		if c == KubernetesComponent {
			continue // the Kubernetes target is --target
		}
		v, _ := parseComponentVersion(s) // checked by ParseVersionsFile
		out.targets[c], out.raw[c] = v, s
	}
	for _, r := range f.Rows {
		src := fmt.Sprintf("%s:%d", name, r.Line)
		if r.Component == KubernetesComponent {
			e := Entry{APIVersion: r.APIVersion, Kind: r.Kind, Source: src}
			if old, ok := Lookup(r.APIVersion, r.Kind); ok {
				e.Introduced = old.Introduced
			}
			e.Deprecated, _ = parseKubeMinor(r.DeprecatedIn)
			e.Removed, _ = parseKubeMinor(r.RemovedIn)
			if e.Deprecated.IsZero() {
				e.Deprecated = e.Removed
			}
			e.ReplacementAPIVersion = r.ReplacementAPIVersion
			if e.ReplacementAPIVersion != "" {
				e.ReplacementKind = r.ReplacementKind
			}
			out.kube[key{r.APIVersion, r.Kind}] = e
			continue
		}
		e := ComponentEntry{APIVersion: r.APIVersion, Kind: r.Kind, Component: r.Component, Deprecated: r.DeprecatedIn, Removed: r.RemovedIn,
			ReplacementAPIVersion: r.ReplacementAPIVersion, Source: src, deprecated: r.deprecatedV, removed: r.removedV}
		if e.deprecated == nil {
			e.deprecated, e.Deprecated = e.removed, e.Removed
		}
		if e.ReplacementAPIVersion != "" {
			e.ReplacementKind = r.ReplacementKind
		}
		out.components[key{r.APIVersion, r.Kind}] = e
	}
	return out
}

func parseKubeMinor(s string) (kubeversion.Minor, error) {
	if s == "" {
		return kubeversion.Minor{}, nil
	}
	return kubeversion.Parse(s)
}

// Lookup is the package's Lookup with the table's Kubernetes rows over it.
func (t *Table) Lookup(apiVersion, kind string) (Entry, bool) {
	if t != nil {
		if e, ok := t.kube[key{apiVersion, kind}]; ok {
			return e, true
		}
	}
	return Lookup(apiVersion, kind)
}

// LookupComponent finds a custom resource's row: its kind's, else its
// apiVersion's (a row with no kind).
func (t *Table) LookupComponent(apiVersion, kind string) (ComponentEntry, bool) {
	if t == nil {
		t = Shipped()
	}
	if e, ok := t.components[key{apiVersion, kind}]; ok {
		return e, true
	}
	e, ok := t.components[key{apiVersion, ""}]
	if ok {
		e.Kind = kind
		if e.ReplacementAPIVersion != "" && e.ReplacementKind == "" {
			e.ReplacementKind = kind
		}
	}
	return e, ok
}

// ComponentVersion is the version of a component the cluster runs, as
// target-versions gave it; ok is false when it is unknown.
func (t *Table) ComponentVersion(component string) (v *utilversion.Version, raw string, ok bool) {
	if t == nil {
		t = Shipped()
	}
	v, ok = t.targets[component]
	return v, t.raw[component], ok
}

// ComponentEntries lists the table's custom-resource rows, sorted.
func (t *Table) ComponentEntries() []ComponentEntry {
	if t == nil {
		t = Shipped()
	}
	out := make([]ComponentEntry, 0, len(t.components))
	for _, e := range t.components {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b ComponentEntry) int {
		return strings.Compare(a.APIVersion+" "+a.Kind, b.APIVersion+" "+b.Kind)
	})
	return out
}
