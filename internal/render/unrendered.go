package render

import "bytes"

// UnrenderedTemplate reports whether a YAML document read on its own still
// holds Go template actions ({{ ... }}) outside comments — a Helm template
// source rather than a manifest. Such a document may still be valid YAML
// (`{{ .Values.key }}: value` is a flow mapping used as a key) that no JSON
// decoder accepts; the caller should say so, not print the decoder's Go type.
func UnrenderedTemplate(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			continue
		}
		if i := bytes.Index(line, []byte("{{")); i >= 0 && bytes.Contains(line[i:], []byte("}}")) {
			return true
		}
	}
	return false
}

// UnrenderedTemplateProblem is the one-line finding for such a document.
func UnrenderedTemplateProblem(file string, line int) Problem {
	return Problem{
		File:    file,
		Line:    line,
		Message: "unrendered Helm/Go template: the document holds {{ }} actions and is not a manifest on its own",
		Fix:     "check the chart directory (the one with Chart.yaml) so ladder renders it, or run `helm template` and check its output",
	}
}
