package insights

import (
	"fmt"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// Severity is how bad a finding is, as EKS Upgrade Insights grades them.
type Severity string

// Severities, worst first.
const (
	// Error blocks or breaks the next hop.
	Error Severity = "ERROR"
	// Warning breaks a later hop, or is a risk during this one.
	Warning Severity = "WARNING"
	// Passing says a check ran and found nothing; shown only on request.
	Passing Severity = "PASSING"
)

// Rank orders severities: Error 0, Warning 1, Passing 2, anything else 3.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	case Passing:
		return 2
	}
	return 3
}

// AtLeast reports whether s is as bad as o or worse.
func (s Severity) AtLeast(o Severity) bool { return s.Rank() <= o.Rank() }

// ParseSeverity reads ERROR, WARNING or PASSING, in any case.
func ParseSeverity(s string) (Severity, error) {
	switch sev := Severity(upper(s)); sev {
	case Error, Warning, Passing:
		return sev, nil
	}
	return "", fmt.Errorf("%q is not a severity (use ERROR, WARNING or PASSING)", s)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// Source says where an object was read from: a manifest file and the line
// its document starts on, or another origin (a live cluster, a Helm release,
// a scenario) described in words.
type Source struct {
	// File is the path as the user gave it, "<stdin>" for standard input, or
	// empty for objects that are not in a file.
	File string
	// Line is the 1-based line of the object's first line in File (0 if unknown).
	Line int
	// Origin describes a source that is not a file, e.g. "live cluster prod",
	// "helm release shop/web revision 3". With File set it adds context.
	Origin string
}

// FromManifest converts a manifest package source (files, scenarios).
func FromManifest(s manifest.Source) Source { return Source{File: s.File, Line: s.Line} }

// IsFile reports whether the source is a file on disk (not stdin, not live).
func (s Source) IsFile() bool { return s.File != "" && s.File != StdinName }

func (s Source) String() string {
	loc := s.File
	if s.File != "" && s.Line > 0 {
		loc = fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	switch {
	case loc == "":
		return s.Origin
	case s.Origin != "":
		return s.Origin + " " + loc
	}
	return loc
}

// ObjectRef names the object a finding is about, as the JSON output shows it.
type ObjectRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	// Source is "file:line", or the live object or Helm release it came from.
	Source string `json:"source,omitempty"`
}

// String is "Kind namespace/name", "Kind name" or "" for no object.
func (r ObjectRef) String() string {
	name := r.Name
	if name != "" && r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	switch {
	case name == "":
		return r.Kind
	case r.Kind == "":
		// A List item without apiVersion and kind, known by its name.
		return name
	}
	return r.Kind + " " + name
}

// Finding is one result of one check.
type Finding struct {
	// Check is the stable id of the check, e.g. "removed-api".
	Check    string    `json:"check"`
	Severity Severity  `json:"severity"`
	Object   ObjectRef `json:"object"`
	// Message says what is wrong, naming the object and the numbers.
	Message string `json:"message"`
	// Recommendation says how to fix it.
	Recommendation string `json:"recommendation"`
	// Hop is the Kubernetes minor the finding concerns when the report
	// covers several hops ("1.32": the upgrade to 1.32); empty when it
	// concerns every hop.
	Hop string `json:"hop,omitempty"`
	// Field is the field the finding is about ("spec.minAvailable"), if any.
	Field string `json:"field,omitempty"`

	source Source  // the object's source, for SARIF locations
	doc    docText // the object's document, to find Field's line
}

// Location returns the file and 1-based line the finding points at: the
// line of Field when it can be found in the document, else the line the
// object starts on. file is empty for objects not read from a file.
func (f *Finding) Location() (file string, line int) { return f.location(nil) }

// location is Location reading documents not held through files.
func (f *Finding) location(files *docFiles) (file string, line int) {
	line = f.source.Line
	if f.Field != "" && f.source.Line > 0 {
		if doc := f.doc.text(f.source, files); len(doc) > 0 {
			if l := manifest.LineOf(doc, f.Field); l > 0 {
				line = f.source.Line + l - 1
			}
		}
	}
	return f.source.File, line
}

// Source returns where the finding's object was read from.
func (f *Finding) Source() Source { return f.source }
