package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart"
)

// schemaRefKeys are the JSON Schema keywords whose value names another
// schema by URI; one that does not start with "#" (a place in the same
// document) is resolved against the document's URI, which Helm makes
// file:///values.schema.json, or against an "$id", and loaded.
var schemaRefKeys = []string{"$ref", "$dynamicRef", "$recursiveRef"}

// metaSchemas are the "$schema" URIs github.com/santhosh-tekuri/jsonschema/v6
// knows without loading them (draft.go draftFromURL); any other is loaded.
var metaSchemas = []string{
	"json-schema.org/schema",
	"json-schema.org/draft/2020-12/schema",
	"json-schema.org/draft/2019-09/schema",
	"json-schema.org/draft-07/schema",
	"json-schema.org/draft-06/schema",
	"json-schema.org/draft-04/schema",
}

// schemaNotFetched finds a values.schema.json, of the chart or of a
// subchart, that names a schema outside itself. Helm v4 validates the
// values against the schemas before it renders, with a loader that GETs
// http and https URIs (through the proxy variables) and reads file URIs
// anywhere on the disk (pkg/chart/common/util/jsonschema.go
// ValidateAgainstSingleSchema). ladder never goes to the network, so for
// such a chart the render skips the validation, and the Problem (a
// warning) says which reference was not fetched.
func schemaNotFetched(dir string, ch chart.Charter) (Problem, bool) {
	var visit func(c chart.Charter) (Problem, bool)
	visit = func(c chart.Charter) (Problem, bool) {
		ac, err := chart.NewAccessor(c)
		if err != nil {
			return Problem{}, false
		}
		if data := ac.Schema(); len(data) > 0 {
			var doc any
			if json.Unmarshal(data, &doc) == nil {
				if ref, ok := externalSchemaRef(doc); ok {
					file := filepath.Join(dir, filepath.FromSlash(subchartPath(ac.ChartFullPath())), "values.schema.json")
					return Problem{
						File:    file,
						Line:    lineContaining(file, ref),
						Warning: true,
						Message: fmt.Sprintf("values not validated against the schema: %q was not fetched (ladder makes no network requests and reads no file outside the chart)", ref),
						Fix:     "copy the referenced schema into values.schema.json (under $defs, referenced as #/$defs/...) to have the values checked",
					}, true
				}
			}
		}
		for _, d := range ac.Dependencies() {
			if p, ok := visit(d); ok {
				return p, true
			}
		}
		return Problem{}, false
	}
	return visit(ch)
}

// subchartPath is the directory of a chart under the root chart's, from
// Helm's ChartFullPath ("root/charts/sub" → "charts/sub").
func subchartPath(full string) string {
	_, rest, _ := strings.Cut(full, "/")
	return rest
}

// externalSchemaRef returns the first reference (in key order) of a JSON
// schema document to a schema that is not inside it.
func externalSchemaRef(v any) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range schemaRefKeys {
			if ref, ok := v[k].(string); ok && ref != "" && !strings.HasPrefix(ref, "#") {
				return ref, true
			}
		}
		if s, ok := v["$schema"].(string); ok && !isMetaSchema(s) {
			return s, true
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if ref, ok := externalSchemaRef(v[k]); ok {
				return ref, true
			}
		}
	case []any:
		for _, e := range v {
			if ref, ok := externalSchemaRef(e); ok {
				return ref, true
			}
		}
	}
	return "", false
}

func isMetaSchema(uri string) bool {
	u := strings.TrimSuffix(uri, "#")
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		u = rest
	} else {
		u = strings.TrimPrefix(u, "https://")
	}
	return slices.Contains(metaSchemas, u)
}
