package render

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"helm.sh/helm/v4/pkg/chart"
)

// tplCall matches a template action that calls tpl.
var tplCall = regexp.MustCompile(`\{\{[^}]*\btpl\b`)

// recursiveTplSource finds a value or a chart file (.Files) that itself
// calls tpl. Helm bounds `include` recursion (engine.recursionMaxNums) but
// not `tpl`: each tpl call parses and executes a fresh template, so a value
// `loop: '{{ tpl .Values.loop . }}'` recurses until the Go runtime dies of
// stack exhaustion — a crash no recover() can catch (verified with
// helm.sh/helm/v4 v4.3.2, TestHelmRefusesHostileInput). Templates calling
// tpl on values is normal; the text tpl renders calling tpl again is what
// makes the loop, and that text comes from values or files.
func recursiveTplSource(ch chart.Charter, vals map[string]any) (string, bool) {
	if where, ok := tplInValues("--values/--set", vals); ok {
		return where, true
	}
	var visit func(c chart.Charter) (string, bool)
	visit = func(c chart.Charter) (string, bool) {
		ac, err := chart.NewAccessor(c)
		if err != nil {
			return "", false
		}
		if where, ok := tplInValues(ac.ChartFullPath()+"/values.yaml", ac.Values()); ok {
			return where, true
		}
		for _, f := range ac.Files() {
			if tplCall.Match(f.Data) {
				return ac.ChartFullPath() + "/" + f.Name, true
			}
		}
		for _, d := range ac.Dependencies() {
			if where, ok := visit(d); ok {
				return where, true
			}
		}
		return "", false
	}
	return visit(ch)
}

func tplInValues(where string, v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return where, tplCall.MatchString(v)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if w, ok := tplInValues(where+" "+k, v[k]); ok {
				return w, true
			}
		}
	case []any:
		for i, e := range v {
			if w, ok := tplInValues(fmt.Sprintf("%s[%d]", where, i), e); ok {
				return w, true
			}
		}
	}
	return "", false
}
