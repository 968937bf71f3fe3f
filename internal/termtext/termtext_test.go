package termtext

import (
	"bytes"
	"errors"
	"testing"
)

// Hostile is text an attacker puts in a name, a label or a message: an
// OSC that sets the terminal's title, a screen clear, a right-to-left
// override, NUL, CR, a line feed that forges a line, a tab that forges a
// cell, BEL, DEL, a C1 CSI and a byte that is not UTF-8.
const Hostile = "a\x1b]0;pwned\x07b\x1b[2Jc\u202ed\x00e\rf\ng\th\x7fi\u0085j\u009b1mk\xffl\u2066m"

func TestEscape(t *testing.T) {
	got := Escape(Hostile)
	want := `a^[]0;pwned\ab^[[2Jc\u202ed\x00e\rf\ng\th\x7fi\u0085j\u009b1mk\xffl\u2066m`
	if got != want {
		t.Errorf("Escape:\n got %s\nwant %s", got, want)
	}
	if i, r := FirstRaw([]byte(got), false); i >= 0 {
		t.Errorf("Escape left %U at %d", r, i)
	}
	for _, s := range []string{"", "web-7d4f9", "café ✓ → 日本", `C:\path`, "^[ as typed"} {
		if Escape(s) != s {
			t.Errorf("Escape(%q) = %q; want it unchanged", s, Escape(s))
		}
	}
	if got := EscapeLines("one\x1b[2J\ntwo\r"); got != "one^[[2J\ntwo\\r" {
		t.Errorf("EscapeLines = %q", got)
	}
}

func TestFprintf(t *testing.T) {
	var b bytes.Buffer
	type named string
	Fprintf(&b, "%s\t%-6s|%d\t%v\t%q\t%v\n", "x\ty", named("n\x1b"), 42, errors.New("boom\r"), "q\x00", []string{"a\nb"})
	want := "x\\ty\tn^[    |42\tboom\\r\t\"q\\x00\"\t[a\\nb]\n"
	if b.String() != want {
		t.Errorf("Fprintf:\n got %q\nwant %q", b.String(), want)
	}
	if got := MarkdownCell("a|b\nc"); got != `a\|b\nc` {
		t.Errorf("MarkdownCell = %q", got)
	}
}

// TestWriter: the net escapes what reaches it, whatever way the writes
// cut the text, and keeps the layout's line feeds and tabs.
func TestWriter(t *testing.T) {
	in := "NAME\tSTATUS\n" + Hostile + "\t✓ ok\n"
	want := "NAME\tSTATUS\n" + `a^[]0;pwned\ab^[[2Jc\u202ed\x00e\rf` + "\n" + `g` + "\t" + `h\x7fi\u0085j\u009b1mk\xffl\u2066m` + "\t✓ ok\n"
	for step := 1; step <= len(in); step++ {
		var b bytes.Buffer
		w := NewWriter(&b)
		for i := 0; i < len(in); i += step {
			w.Write([]byte(in[i:min(i+step, len(in))]))
		}
		w.Flush()
		if b.String() != want {
			t.Fatalf("writes of %d bytes:\n got %q\nwant %q", step, b.String(), want)
		}
	}
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Write([]byte("end \xe2\x9c"))
	w.Flush()
	if b.String() != `end \xe2\x9c` {
		t.Errorf("a cut character at the end: %q", b.String())
	}
}
