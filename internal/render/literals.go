package render

import (
	"bytes"
	"regexp"
	"strings"
)

// TemplateLiterals finds, in a template source that may not be valid YAML
// ({{ }} actions anywhere), the apiVersion/kind pairs written literally at
// the top level of each document (documents split at "---" lines). It needs
// no rendering, so a removed API in a chart's sources is found even when the
// chart does not render, or the template is off under the default values.
//
// Template actions are blanked out first (also those spanning lines, such
// as {{/* comments */}}); what is left of an `apiVersion:` line at column 0
// is its literal text. A value computed by an action
// (`apiVersion: {{ include "common.capabilities.deployment.apiVersion" . }}`)
// leaves nothing and is skipped. Every literal is reported, conservatively:
// both branches of
//
//	{{- if semverCompare ">=1.14-0" .Capabilities.KubeVersion.GitVersion }}
//	apiVersion: networking.k8s.io/v1beta1
//	{{- else }}
//	apiVersion: extensions/v1beta1
//	{{- end }}
//	kind: Ingress
//
// and each literal of `apiVersion: {{ if .X }}a/v1{{ else }}b/v1{{ end }}`.
// Each apiVersion is paired with the document's first literal kind; a
// document without one yields nothing. Line is the apiVersion's line.
func TemplateLiterals(file string, data []byte) []Literal {
	return templateLiterals(file, data, nil)
}

// templateLiterals is TemplateLiterals that also says, for each literal,
// which {{ if }} branches of the template enclose it (Literal.Branch), and
// leaves out the literals in a branch decide says the target does not
// take. decide answers for an {{ if }} pipeline whether its then-branch is
// taken; ok is false when it cannot say (the condition reads values), and
// then both branches are kept. A nil decide keeps every literal.
func templateLiterals(file string, data []byte, decide func(cond string) (taken, ok bool)) []Literal {
	var out []Literal
	var spans []textSpan
	parsed := false
	for _, d := range splitDocuments(data) {
		var versions []literalField
		kind := ""
		for _, f := range scanLiterals(d.body) {
			switch {
			case f.key == "apiVersion":
				versions = append(versions, f)
			case f.key == "kind" && kind == "":
				kind = f.value
			}
		}
		if kind == "" {
			continue
		}
		if !parsed && len(versions) > 0 {
			spans, parsed = templateBranches(file, data), true
		}
		for _, v := range versions {
			chain := branchesAt(spans, d.offset+v.offset)
			branch, taken := describeBranches(data, chain, decide)
			if !taken {
				continue
			}
			out = append(out, Literal{File: file, Line: d.line + v.line - 1, APIVersion: v.value, Kind: kind, Branch: branch})
		}
	}
	return out
}

// literalField is one literal value of a top-level apiVersion or kind key.
type literalField struct {
	key, value string
	line       int // 1-based, within the document
	offset     int // byte offset of the value, within the document
}

// actionMark replaces a template action's text; it cannot occur in YAML.
const actionMark = '\x00'

var (
	// apiVersionSyntax is group/version or a core version, as Kubernetes
	// writes them (lower-case DNS group, version v<N>[alpha|beta<M>]).
	apiVersionSyntax = regexp.MustCompile(`^([a-z0-9]([a-z0-9.-]*[a-z0-9])?/)?v[0-9]+((alpha|beta)[0-9]+)?$`)
	// kindSyntax is a Kubernetes kind: an upper-case letter, then letters
	// and digits.
	kindSyntax = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// scanLiterals returns the literal values of the top-level apiVersion and
// kind keys of one template document.
func scanLiterals(doc []byte) []literalField {
	var out []literalField
	lineStart := 0
	for i, line := range bytes.Split(blankActions(doc), []byte("\n")) {
		start := lineStart
		lineStart += len(line) + 1
		// Actions before the key ({{- if ... }}apiVersion: x) do not
		// indent it in the output.
		trimmed := bytes.TrimLeft(line, string(actionMark))
		start += len(line) - len(trimmed)
		key, value, ok := bytes.Cut(trimmed, []byte(":"))
		if !ok {
			continue
		}
		k := string(key)
		if k != "apiVersion" && k != "kind" {
			continue // indented keys are not top level
		}
		start += len(key) + 1
		if j := bytes.Index(value, []byte(" #")); j >= 0 {
			value = value[:j]
		}
		pos := start
		for _, part := range strings.Split(string(value), string(actionMark)) {
			partStart := pos
			pos += len(part) + 1
			v := strings.Trim(strings.TrimSpace(part), `"'`)
			if v == "" {
				continue
			}
			if (k == "apiVersion" && apiVersionSyntax.MatchString(v)) || (k == "kind" && kindSyntax.MatchString(v)) {
				lead := len(part) - len(strings.TrimLeft(part, " \t\r\"'"))
				out = append(out, literalField{key: k, value: v, line: i + 1, offset: partStart + lead})
			}
		}
	}
	return out
}

// blankActions replaces every {{ ... }} action, including the braces, with
// actionMark bytes, keeping newlines so lines keep their numbers. An action
// left open runs to the end of the document, as Go's text/template would
// reject it anyway.
func blankActions(doc []byte) []byte {
	out := bytes.Clone(doc)
	for i := 0; i < len(out); {
		open := bytes.Index(out[i:], []byte("{{"))
		if open < 0 {
			break
		}
		start := i + open
		end := len(out)
		if c := bytes.Index(out[start+2:], []byte("}}")); c >= 0 {
			end = start + 2 + c + 2
		}
		for j := start; j < end; j++ {
			if out[j] != '\n' {
				out[j] = actionMark
			}
		}
		i = end
	}
	return out
}
