package insights

import (
	"bytes"
	"unicode/utf8"
)

const (
	// maxMessage bounds a problem's message: a parser's error can quote a
	// whole document (a 10 MB file of repeated keys once made an 85 MB
	// line), and a report line is read by a person.
	maxMessage = 400
	// maxNameInMessage bounds a key, field path or name quoted in one.
	maxNameInMessage = 120
)

// settleProblem makes a problem ready to be kept for the report while the
// stream reads on: its message and field are cut to a readable length, and
// its document is dropped unless a field's line must be found in it.
func settleProblem(p *Problem) {
	p.Message = truncate(p.Message, maxMessage)
	if len(p.Field) > maxNameInMessage {
		// A cut path no longer names a field in the document: point at the
		// document instead.
		p.Field, p.doc = truncate(p.Field, maxNameInMessage), nil
	}
	if p.Field == "" {
		p.doc = nil
	}
	// A document is a slice of its file: keep its own bytes, not the file's.
	p.doc = bytes.Clone(p.doc)
	p.Object.Name = truncate(p.Object.Name, maxNameInMessage)
	p.Object.Namespace = truncate(p.Object.Namespace, maxNameInMessage)
}

// truncate cuts s to at most n bytes, at a rune boundary, marking the cut
// with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
