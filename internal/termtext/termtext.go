// Package termtext makes text from manifests, clusters and AWS inert on a
// terminal: control characters, escape sequences, bidirectional overrides,
// DEL, NUL and bytes that are not UTF-8 are printed quoted, so a hostile
// name can neither drive the terminal (set its title, clear it, move the
// cursor), nor forge a line or a table cell, nor read right to left.
//
// The shape is kubectl's: k8s.io/cli-runtime/pkg/printers/terminal.go
// EscapeTerminal replaces ESC with "^[" and CR with `\r` (kubectl issue
// #101695) and its table printer cuts a cell at a line break. EscapeTerminal
// leaves the other C0 and C1 controls, DEL and the bidi controls as they
// are, so Escape keeps its two replacements and quotes the rest as
// strconv.Quote writes them (`\n`, `\t`, `\x00`, `\u202e`).
package termtext

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// inert reports whether r prints as itself: not a C0 or C1 control, not
// DEL, not one of the Unicode controls that reorder or separate lines —
// U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069 (the bidi controls
// of Unicode's UAX #9, the "Trojan Source" characters, CVE-2021-42574) and
// U+2028–U+2029 (line and paragraph separators).
func inert(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return false
	case r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x2028 && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return false
	}
	return true
}

// clean reports whether s needs no quoting; keep, when set, is one control
// byte s may hold as it is.
func clean(s string, keep byte) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f || keep != 0 && c == keep {
			continue
		}
		if c < 0x80 {
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || !inert(r) {
			return false
		}
		i += size - 1
	}
	return true
}

// Escape is s with every character that is not inert quoted: ESC as "^[" and
// CR as `\r` (kubectl's EscapeTerminal), the other controls, DEL, the bidi
// and line-separator characters as strconv.Quote writes them, and each
// byte that is not UTF-8 as `\xNN`. Text without them is returned as it is.
// It cannot be undone (a name holding "^[" prints the same as one holding
// ESC), like kubectl's.
func Escape(s string) string { return escape(s, 0) }

// EscapeLines is Escape keeping line feeds: for text made of lines, such
// as an error that joins several (errors.Join). A value printed inside a
// line is escaped with Escape.
func EscapeLines(s string) string { return escape(s, '\n') }

func escape(s string, keep byte) string {
	if clean(s, keep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keep != 0 && r == rune(keep):
			b.WriteByte(keep)
		case r == 0x1b:
			b.WriteString("^[")
		case !inert(r):
			q := strconv.QuoteRune(r) // '\x00', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Clean reports whether s prints as itself (Escape(s) == s).
func Clean(s string) bool { return clean(s, 0) }

// arg formats one argument as fmt would, then escapes what it printed.
type arg struct {
	v      any
	escape func(string) string
}

func (a arg) Format(f fmt.State, verb rune) {
	io.WriteString(f, a.escape(fmt.Sprintf(fmt.FormatString(f, verb), a.v)))
}

// Args wraps each argument that may print text (anything but a number or
// a bool) so that fmt prints it escaped, with the verb and flags it was
// given: the format string's own tabs and newlines stay, what the values
// hold is quoted.
func Args(args []any) []any { return ArgsWith(args, Escape) }

// ArgsWith is Args escaping with escape (MarkdownCell for Markdown).
func ArgsWith(args []any, escape func(string) string) []any {
	out := make([]any, len(args))
	for i, v := range args {
		switch v.(type) {
		case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr, float32, float64:
			out[i] = v
		default:
			out[i] = arg{v, escape}
		}
	}
	return out
}

// Sprintf is fmt.Sprintf with its arguments escaped (Args).
func Sprintf(format string, args ...any) string { return fmt.Sprintf(format, Args(args)...) }

// Fprintf is fmt.Fprintf with its arguments escaped (Args).
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, format, Args(args)...)
}

// Fprintln is fmt.Fprintln with its arguments escaped (Args).
func Fprintln(w io.Writer, args ...any) (int, error) { return fmt.Fprintln(w, Args(args)...) }

// MarkdownCell is Escape for a cell of a Markdown table or text inside
// one: `|` would end the cell and is written `\|` (GitHub Flavored
// Markdown, "Tables": "include a pipe in a cell's content by escaping it").
// Escape has already quoted the line breaks that would end the row.
func MarkdownCell(s string) string {
	s = Escape(s)
	if !strings.Contains(s, "|") {
		return s
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// FirstRaw returns the offset and rune of the first character in out that
// is not inert, or -1: what a test scans a whole output with. Line feeds
// and tabs are allowed when lines is set (the layout's own).
func FirstRaw(out []byte, lines bool) (int, rune) {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return i, rune(out[i])
		case lines && (r == '\n' || r == '\t'):
		case !inert(r):
			return i, r
		}
		i += size
	}
	return -1, 0
}

// Writer passes text to an underlying writer with every character that is
// not inert escaped as Escape does, except the line feeds and tabs that lay
// out text: a net under a text output whose values are escaped where they
// are printed, so a value some printer forgot still cannot reach the
// terminal raw. Call Flush at the end: a character cut between two writes
// waits for its end.
type Writer struct {
	w    io.Writer
	tail []byte // the start of a character cut by the last write
	buf  []byte
}

// NewWriter is a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it; it reports len(p) written when the
// underlying writer took the escaped text.
func (e *Writer) Write(p []byte) (int, error) {
	n := len(p)
	if len(e.tail) > 0 {
		p = append(e.tail, p...)
		e.tail = nil
	}
	// Keep a character cut at the end for the next write.
	if cut := cutRune(p); cut < len(p) {
		e.tail = append([]byte(nil), p[cut:]...)
		p = p[:cut]
	}
	e.buf = e.buf[:0]
	start := 0
	for i := 0; i < len(p); {
		c := p[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if (r != utf8.RuneError || size > 1) && inert(r) {
			i += size
			continue
		}
		e.buf = append(e.buf, p[start:i]...)
		e.buf = append(e.buf, Escape(string(p[i:i+size]))...)
		i += size
		start = i
	}
	var err error
	if start == 0 {
		_, err = e.w.Write(p)
	} else {
		e.buf = append(e.buf, p[start:]...)
		_, err = e.w.Write(e.buf)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a character the last write cut, escaped: it never ended.
func (e *Writer) Flush() error {
	if len(e.tail) == 0 {
		return nil
	}
	_, err := io.WriteString(e.w, Escape(string(e.tail)))
	e.tail = nil
	return err
}

// cutRune is where the last, incomplete UTF-8 sequence of p starts, or
// len(p).
func cutRune(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if p[i] >= 0xc0 && !utf8.FullRune(p[i:]) {
				return i
			}
			break
		}
	}
	return len(p)
}
