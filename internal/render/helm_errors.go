package render

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// templateLocation finds the template and line in a Helm render error. Go's
// text/template names them "chart/templates/x.yaml:LINE:COL" (executing) or
// "(chart/templates/x.yaml:LINE)" (parse errors, `fail`, `required`); Helm's
// own YAML check names only the template ("YAML parse error on
// chart/templates/x.yaml").
var templateLocation = regexp.MustCompile(`([^\s:()"']+/templates/[^\s:()"']+)(?::(\d+))?`)

// templateProblem turns the error of a render into one Problem at the
// template file:line Helm names, or at Chart.yaml when it names none.
func templateProblem(dir, chartFile string, err error) Problem {
	msg := err.Error()
	// Go's text/template wraps each include level around the cause
	// ("error calling include: ..."), a thousand deep for a recursion
	// Helm stops; the outermost location and the innermost cause say it all.
	if first, last := strings.Index(msg, ": error calling "), strings.LastIndex(msg, "error calling "); first >= 0 && last > first+2 {
		msg = msg[:first] + ": ... " + msg[last:]
	}
	msg = oneLine(msg)
	p := Problem{
		File:    chartFile,
		Line:    1,
		Message: "helm template failed: " + msg,
		Fix:     fmt.Sprintf("make `helm template %s` succeed with the same values", dir),
	}
	if m := templateLocation.FindStringSubmatch(msg); m != nil {
		p.File = templateFile(dir, m[1])
		if n, err := strconv.Atoi(m[2]); err == nil && n > 0 {
			p.Line = n
		}
	}
	return p
}
