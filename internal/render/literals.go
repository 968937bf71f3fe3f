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
	var out []Literal
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
		for _, v := range versions {
			out = append(out, Literal{File: file, Line: d.line + v.line - 1, APIVersion: v.value, Kind: kind})
		}
	}
	return out
}

// literalField is one literal value of a top-level apiVersion or kind key.
type literalField struct {
	key, value string
	line       int // 1-based, within the document
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
	for i, line := range bytes.Split(blankActions(doc), []byte("\n")) {
		// Actions before the key ({{- if ... }}apiVersion: x) do not
		// indent it in the output.
		line = bytes.TrimLeft(line, string(actionMark))
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		k := string(key)
		if k != "apiVersion" && k != "kind" {
			continue // indented keys are not top level
		}
		if j := bytes.Index(value, []byte(" #")); j >= 0 {
			value = value[:j]
		}
		for _, part := range strings.Split(string(value), string(actionMark)) {
			v := strings.Trim(strings.TrimSpace(part), `"'`)
			if v == "" {
				continue
			}
			if (k == "apiVersion" && apiVersionSyntax.MatchString(v)) || (k == "kind" && kindSyntax.MatchString(v)) {
				out = append(out, literalField{key: k, value: v, line: i + 1})
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
