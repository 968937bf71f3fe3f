package insights

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/manifest"
)

var (
	yamlLineRE = regexp.MustCompile(`line (\d+):?`)
	// duplicateKeyRE is go.yaml.in/yaml/v2's strict-mode error for a key
	// that appears twice in one mapping (decode.go, d.mapping: "key %#v
	// already set in map").
	duplicateKeyRE = regexp.MustCompile(`line (\d+): key ("(?:[^"\\]|\\.)*") already set in map`)
)

// unreadableYAML explains why a document did not convert to JSON (err, from
// sigs.k8s.io/yaml's strict conversion). For duplicate keys, the one
// failure the document survives, js is the document converted as kubectl
// converts it — the last of the duplicates wins, as in
// k8s.io/apimachinery's YAMLOrJSONDecoder, which uses sigs.k8s.io/yaml's
// non-strict Unmarshal — and problem a WARNING; else js is nil and problem
// the ERROR that says the document was not checked.
func unreadableYAML(src Source, doc []byte, err error) (js []byte, problem Problem) {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	if m := duplicateKeyRE.FindStringSubmatch(msg); m != nil {
		if js, convErr := yaml.YAMLToJSON(doc); convErr == nil {
			key, err := strconv.Unquote(m[2])
			if err != nil {
				key = m[2]
			}
			line, _ := strconv.Atoi(m[1])
			return js, duplicateKeys(src, manifest.DuplicateKey{Key: key, Line: line})
		}
	}
	msg = strings.Join(strings.Fields(strings.TrimPrefix(msg, "yaml: ")), " ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			src.Line += n - 1
			// The source names the line; the parser's is relative to the document.
			msg = strings.TrimSpace(strings.Replace(msg, m[0], "", 1))
		}
	}
	// The object is named as its text names it: from standard input the
	// line alone does not lead a reader to it.
	problem = Problem{Source: src, Object: textRef(doc), Severity: Error, Message: "malformed YAML: " + msg + "; the document was not checked",
		Fix: "fix the YAML syntax", doc: doc}
	invalidKey := strings.HasPrefix(msg, "invalid map key")
	if invalidKey {
		// sigs.k8s.io/yaml's convertToJSONableObject refuses a key that is a
		// mapping or a list and prints it as a Go value; say what it is.
		problem.Message = "malformed YAML: a mapping key is itself a mapping or a list, which JSON (and so Kubernetes) cannot hold; the document was not checked"
	}
	if !mayBeObject(doc) {
		// No apiVersion or no kind in its text: whatever it was meant to
		// be, it was not a Kubernetes object.
		problem.cause = causeNotObject
	}
	if bytes.Contains(doc, []byte("{{")) {
		// "{{ .Values.x }}" unquoted is a flow mapping inside a flow mapping:
		// as a key it is the invalid key above, as a value or a line of
		// its own ("{{- if … }}") a syntax error. Either way the document
		// is Helm or Go template source, not a manifest.
		problem.cause = causeTemplate
		problem.Message = "unrendered Helm/Go template: " + msg + "; the document was not checked"
		if invalidKey {
			problem.Message = "unrendered Helm/Go template: a {{ … }} action is read as a mapping key; the document was not checked"
		}
		problem.Fix = "check the rendered output instead: helm template RELEASE CHART | ladder check -f -"
	} else if bytes.Contains(doc, []byte("{%")) {
		// "{% raw %}", "{% for … %}": a Jinja (mkdocs-macros, Ansible) or
		// Liquid tag, which YAML cannot start a value with ("%" is a
		// reserved indicator). Documentation snippets wrap manifests in
		// "{% raw %}" so that the site generator leaves their "{{ }}" alone.
		problem.cause = causeTemplate
		problem.Message = "unrendered Jinja template: " + msg + "; the document was not checked"
		problem.Fix = "check the rendered output instead: render it with its tool and pipe it to ladder check -f -"
	}
	return nil, problem
}

// duplicateKeys is the WARNING for a document with duplicate keys: one
// problem, at the first duplicate, however many there are.
func duplicateKeys(src Source, dup manifest.DuplicateKey) Problem {
	if dup.Line > 0 {
		src.Line += dup.Line - 1
	}
	return Problem{Source: src, Severity: Warning,
		Message: "duplicate key " + strconv.Quote(truncate(dup.Key, maxNameInMessage)) + "; the last value is used, the document was checked",
		Fix:     "keep one of the two; the API server's strict field validation rejects duplicate fields"}
}

// withDuplicateKeys puts the duplicate-key problem before the document's
// others, naming the object it is in.
func withDuplicateKeys(dup Problem, objs []*Object, problems []Problem) ([]*Object, []Problem) {
	if len(objs) == 1 {
		dup.Object = objs[0].Ref()
		dup.Object.Source = dup.Source.String() // the duplicate's line: there is no field path to find it by
	}
	return objs, append([]Problem{dup}, problems...)
}
