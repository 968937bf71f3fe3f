package deprecations

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// VersionsFile is a versions file in pluto's format (FairwindsOps/pluto
// versions.yaml, the file `pluto --additional-versions` reads):
//
//	target-versions:
//	  karpenter: v1.1.0
//	deprecated-versions:
//	  - version: karpenter.sh/v1beta1
//	    kind: NodePool
//	    deprecated-in: v1.0.0
//	    removed-in: v1.1.0
//	    replacement-api: karpenter.sh/v1
//	    replacement-available-in: v1.0.0
//	    component: karpenter
//
// Rows of component k8s are Kubernetes APIs (versions are Kubernetes
// releases); the others are custom resources whose serving is decided by
// the component's own version. Ladder adds one optional field,
// replacement-kind, for replacements that rename the kind (Provisioner →
// NodePool).
type VersionsFile struct {
	// Targets are the component versions the cluster runs (target-versions);
	// Ladder takes the Kubernetes version from --target, not from k8s here.
	Targets map[string]string
	Rows    []VersionRow
}

// VersionRow is one row of deprecated-versions.
type VersionRow struct {
	APIVersion, Kind string
	// DeprecatedIn and RemovedIn are the component's versions ("v1.1.0"),
	// empty when not deprecated or not removed.
	DeprecatedIn, RemovedIn string
	ReplacementAPIVersion   string
	ReplacementKind         string // defaults to Kind
	ReplacementAvailableIn  string
	Component               string
	Line                    int // in the file
	deprecatedV, removedV   *utilversion.Version
	replacementAvailableInV *utilversion.Version
}

type rowField struct {
	key        string
	field      func(*VersionRow) *string
	apiVersion bool
	ver        func(*VersionRow) **utilversion.Version
}

// rowFields are the keys of a deprecated-versions row, pluto's then
// Ladder's replacement-kind: the field each fills, and whether its value is
// an apiVersion or a component version (kept parsed in ver).
var rowFields = []rowField{
	{key: "version", field: func(r *VersionRow) *string { return &r.APIVersion }, apiVersion: true},
	{key: "kind", field: func(r *VersionRow) *string { return &r.Kind }},
	{key: "deprecated-in", field: func(r *VersionRow) *string { return &r.DeprecatedIn },
		ver: func(r *VersionRow) **utilversion.Version { return &r.deprecatedV }},
	{key: "removed-in", field: func(r *VersionRow) *string { return &r.RemovedIn },
		ver: func(r *VersionRow) **utilversion.Version { return &r.removedV }},
	{key: "replacement-api", field: func(r *VersionRow) *string { return &r.ReplacementAPIVersion }, apiVersion: true},
	{key: "replacement-available-in", field: func(r *VersionRow) *string { return &r.ReplacementAvailableIn },
		ver: func(r *VersionRow) **utilversion.Version { return &r.replacementAvailableInV }},
	{key: "component", field: func(r *VersionRow) *string { return &r.Component }},
	{key: "replacement-kind", field: func(r *VersionRow) *string { return &r.ReplacementKind }},
}

// ParseVersionsFile reads a versions file strictly: an unknown or
// repeated key, a value of the wrong type, a version that does not parse,
// a removal before the deprecation, or a row written twice is an error of
// one line naming name:line, the field and the fix.
func ParseVersionsFile(name string, data []byte) (*VersionsFile, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: the file is empty; want target-versions and deprecated-versions as pluto's versions.yaml has them", name)
		}
		return nil, fmt.Errorf("%s: %s (fix the YAML syntax)", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s:%d: a second YAML document; put every row in one deprecated-versions list", name, extra.Line)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a map with target-versions and deprecated-versions, got %s", name, root.Line, nodeKind(root))
	}
	f := &VersionsFile{Targets: map[string]string{}}
	seenTop := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seenTop[k.Value] {
			return nil, fmt.Errorf("%s:%d: %s appears twice; keep one", name, k.Line, k.Value)
		}
		seenTop[k.Value] = true
		switch k.Value {
		case "target-versions":
			if err := f.readTargets(name, v); err != nil {
				return nil, err
			}
		case "deprecated-versions":
			if err := f.readRows(name, v); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s:%d: %s: unknown field; a versions file has target-versions and deprecated-versions", name, k.Line, k.Value)
		}
	}
	return f, nil
}

func (f *VersionsFile) readTargets(name string, n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: target-versions: want a map of component to version (karpenter: v1.1.0), got %s", name, n.Line, nodeKind(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := "target-versions." + k.Value
		if _, dup := f.Targets[k.Value]; dup {
			return fmt.Errorf("%s:%d: %s appears twice; keep one", name, k.Line, field)
		}
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s:%d: %s: want a version such as v1.1.0, got %s", name, v.Line, field, nodeKind(v))
		}
		if _, err := parseComponentVersion(v.Value); err != nil {
			return fmt.Errorf("%s:%d: %s: %q is not a version; write it as v1.1.0", name, v.Line, field, v.Value)
		}
		f.Targets[k.Value] = v.Value
	}
	return nil
}

func (f *VersionsFile) readRows(name string, n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s:%d: deprecated-versions: want a list of rows (- version: ..., kind: ...), got %s", name, n.Line, nodeKind(n))
	}
	seen := map[key]int{}
	for i, item := range n.Content {
		at := fmt.Sprintf("deprecated-versions[%d]", i)
		if item.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: %s: want a map with version, kind, deprecated-in, removed-in, replacement-api and component, got %s", name, item.Line, at, nodeKind(item))
		}
		r := VersionRow{Line: item.Line}
		set := map[string]bool{}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			field := at + "." + k.Value
			fi := slices.IndexFunc(rowFields, func(f rowField) bool { return f.key == k.Value })
			if fi < 0 {
				keys := make([]string, len(rowFields))
				for i, f := range rowFields {
					keys[i] = f.key
				}
				return fmt.Errorf("%s:%d: %s: unknown field; a row has %s", name, k.Line, field, strings.Join(keys, ", "))
			}
			spec := rowFields[fi]
			if set[k.Value] {
				return fmt.Errorf("%s:%d: %s appears twice; keep one", name, k.Line, field)
			}
			set[k.Value] = true
			if v.Kind != yaml.ScalarNode || v.Tag == "!!bool" {
				return fmt.Errorf("%s:%d: %s: want a string, got %s; quote it", name, v.Line, field, nodeKind(v))
			}
			val := strings.TrimSpace(v.Value)
			if v.Tag == "!!null" {
				val = ""
			}
			*spec.field(&r) = val
			var err error
			switch {
			case val == "":
			case spec.apiVersion:
				if _, perr := schema.ParseGroupVersion(val); perr != nil || strings.Count(val, "/") > 1 {
					err = fmt.Errorf("%q is not an apiVersion; write it as group/version, e.g. karpenter.sh/v1", val)
				}
			case spec.ver != nil:
				pv, perr := parseComponentVersion(val)
				if perr != nil {
					err = fmt.Errorf("%q is not a version; write it as v1.1.0 (or \"\" for none)", val)
				}
				*spec.ver(&r) = pv
			}
			if err != nil {
				return fmt.Errorf("%s:%d: %s: %v", name, v.Line, field, err)
			}
		}
		switch {
		case r.APIVersion == "":
			return fmt.Errorf("%s:%d: %s.version: missing; set the apiVersion the row is about, e.g. karpenter.sh/v1beta1", name, item.Line, at)
		case r.Component == "":
			return fmt.Errorf("%s:%d: %s.component: missing; set k8s for a Kubernetes API, or the controller that serves it (karpenter, cert-manager, ...)", name, item.Line, at)
		case r.deprecatedV == nil && r.removedV == nil:
			return fmt.Errorf("%s:%d: %s: neither deprecated-in nor removed-in is set; set the %s version that deprecates or removes %s", name, item.Line, at, r.Component, r.APIVersion)
		case r.deprecatedV != nil && r.removedV != nil && r.removedV.LessThan(r.deprecatedV):
			return fmt.Errorf("%s:%d: %s.removed-in: %s is before deprecated-in %s; swap them or fix the version", name, item.Line, at, r.RemovedIn, r.DeprecatedIn)
		case r.Component == KubernetesComponent && r.Kind == "":
			return fmt.Errorf("%s:%d: %s.kind: missing; a Kubernetes row names its kind", name, item.Line, at)
		}
		if r.Component == KubernetesComponent {
			for _, v := range []string{r.DeprecatedIn, r.RemovedIn} {
				if _, err := parseKubeMinor(v); v != "" && err != nil {
					return fmt.Errorf("%s:%d: %s: %q is not a Kubernetes 1.x version (component k8s)", name, item.Line, at, v)
				}
			}
		}
		if r.ReplacementKind == "" {
			r.ReplacementKind = r.Kind
		}
		k := key{r.APIVersion, r.Kind}
		if line, dup := seen[k]; dup {
			return fmt.Errorf("%s:%d: %s: %s %s is also at line %d; keep one row", name, item.Line, at, r.APIVersion, r.Kind, line)
		}
		seen[k] = item.Line
		f.Rows = append(f.Rows, r)
	}
	return nil
}

// KubernetesComponent is pluto's component name for Kubernetes itself.
const KubernetesComponent = "k8s"

// parseComponentVersion reads "v1.1.0", "1.1" or "v0.32.10".
func parseComponentVersion(s string) (*utilversion.Version, error) {
	return utilversion.ParseGeneric(s)
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!int", "!!float":
		return "a number (" + n.Value + ")"
	case "!!bool":
		return "true or false"
	case "!!null":
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}
