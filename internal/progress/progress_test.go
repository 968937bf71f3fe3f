package progress

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// clock is a wall clock the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// over is what a terminal without escape sequences gets to clear line:
// a carriage return, a space over each character, a carriage return.
func over(line string) string {
	return "\r" + strings.Repeat(" ", utf8.RuneCountInString(line)) + "\r"
}

// session plays the same steps on every rendering: a build of two
// binaries, the second with a bar, a note and a failure.
func session(r *Reporter, c *clock) {
	r.Start("building etcd")
	c.advance(2 * time.Second)
	r.Update(0, 0, "go build")
	c.advance(40 * time.Second)
	r.Update(0, 0, "go build")
	r.End("", nil)
	r.Start("node group initial")
	r.Update(1, 4, "")
	c.advance(50 * time.Millisecond)
	r.Update(2, 4, "") // within 100 ms of the last redraw and 30 s of the last line: not shown
	c.advance(time.Second)
	r.Note("waiting on update 5f1c")
	c.advance(30 * time.Second)
	r.Update(3, 4, "draining ip-10-0-1-7")
	r.End("", errors.New("PodEvictionFailure"))
}

func TestRenderings(t *testing.T) {
	// Without a terminal, and with --progress plain on one.
	plain := "21:00:00  building etcd started\n" +
		"21:00:42  building etcd: go build 42s\n" +
		"21:00:42  building etcd done in 42s\n" +
		"21:00:42  node group initial started\n" +
		"21:00:43  waiting on update 5f1c\n" +
		"21:01:13  node group initial: 3/4 draining ip-10-0-1-7 31s\n" +
		"21:01:13  node group initial failed after 31s: PodEvictionFailure\n"
	start := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		mode     Mode
		terminal bool
		env      map[string]string
		want     string
	}{{
		name: "plain without a terminal",
		mode: Auto,
		want: plain,
	}, {
		name:     "plain on a terminal when asked",
		mode:     Plain,
		terminal: true,
		want:     plain,
	}, {
		name:     "live with colours",
		mode:     Auto,
		terminal: true,
		env:      map[string]string{"TERM": "xterm-256color"},
		want: "\x1b[36m⠋\x1b[0m building etcd 0s" +
			"\r\x1b[K\x1b[36m⠙\x1b[0m building etcd go build 2s" +
			"\r\x1b[K\x1b[36m⠹\x1b[0m building etcd go build 42s" +
			"\r\x1b[K\x1b[32m✓\x1b[0m building etcd (42s)\n" +
			"\x1b[36m⠸\x1b[0m node group initial 0s" +
			"\r\x1b[K\x1b[36m[=====               ]\x1b[0m node group initial 1/4 0s" +
			"\r\x1b[K  waiting on update 5f1c\n" +
			"\x1b[36m[==========          ]\x1b[0m node group initial 2/4 1s" +
			"\r\x1b[K\x1b[36m[===============     ]\x1b[0m node group initial 3/4 draining ip-10-0-1-7 31s" +
			"\r\x1b[K\x1b[31m✗\x1b[0m node group initial (31s): PodEvictionFailure\n",
	}, {
		name:     "live with NO_COLOR",
		mode:     Auto,
		terminal: true,
		env:      map[string]string{"TERM": "xterm", "NO_COLOR": "1"},
		want: "⠋ building etcd 0s" +
			"\r\x1b[K⠙ building etcd go build 2s" +
			"\r\x1b[K⠹ building etcd go build 42s" +
			"\r\x1b[K✓ building etcd (42s)\n" +
			"⠸ node group initial 0s" +
			"\r\x1b[K[=====               ] node group initial 1/4 0s" +
			"\r\x1b[K  waiting on update 5f1c\n" +
			"[==========          ] node group initial 2/4 1s" +
			"\r\x1b[K[===============     ] node group initial 3/4 draining ip-10-0-1-7 31s" +
			"\r\x1b[K✗ node group initial (31s): PodEvictionFailure\n",
	}, {
		name:     "live on a dumb terminal: spaces over the line, no escapes",
		mode:     Auto,
		terminal: true,
		env:      map[string]string{"TERM": "dumb"},
		want: "⠋ building etcd 0s" +
			over("⠋ building etcd 0s") + "⠙ building etcd go build 2s" +
			over("⠙ building etcd go build 2s") + "⠹ building etcd go build 42s" +
			over("⠹ building etcd go build 42s") + "✓ building etcd (42s)\n" +
			"⠸ node group initial 0s" +
			over("⠸ node group initial 0s") + "[=====               ] node group initial 1/4 0s" +
			over("[=====               ] node group initial 1/4 0s") + "  waiting on update 5f1c\n" +
			"[==========          ] node group initial 2/4 1s" +
			over("[==========          ] node group initial 2/4 1s") + "[===============     ] node group initial 3/4 draining ip-10-0-1-7 31s" +
			over("[===============     ] node group initial 3/4 draining ip-10-0-1-7 31s") + "✗ node group initial (31s): PodEvictionFailure\n",
	}, {
		name:     "none",
		mode:     None,
		terminal: true,
		want:     "",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := &clock{t: start}
			r := New(Options{Mode: tc.mode, Out: &out, Terminal: tc.terminal, Getenv: env(tc.env), Now: c.now})
			session(r, c)
			if got := out.String(); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestWriterKeepsStdoutLinesWhole: a line a command prints on standard
// output while a live line is drawn takes the live line's place, and the
// live line is drawn again under it; the bytes of standard output are
// the ones written.
func TestWriterKeepsStdoutLinesWhole(t *testing.T) {
	var term, stdout bytes.Buffer
	c := &clock{t: time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)}
	r := New(Options{Mode: Auto, Out: &term, Terminal: true, Getenv: env(map[string]string{"NO_COLOR": "x"}), Now: c.now})
	w := r.Writer(&stdout)
	r.Start("hop 1.30 → 1.31")
	w.Write([]byte("21:00:00  control-plane started\n"))
	r.End("", nil)
	w.Write([]byte("done\n"))
	if got, want := stdout.String(), "21:00:00  control-plane started\ndone\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := term.String(), "⠋ hop 1.30 → 1.31 0s\r\x1b[K⠙ hop 1.30 → 1.31 0s\r\x1b[K✓ hop 1.30 → 1.31 (0s)\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	if plain := New(Options{Mode: Plain, Out: &term}); plain.Writer(&stdout) != &stdout {
		t.Error("a plain reporter wraps standard output")
	}
}

// TestNilReporter: code reports progress without asking whether anyone
// listens.
func TestNilReporter(t *testing.T) {
	var r *Reporter
	r.Start("x")
	r.Update(1, 2, "y")
	r.Note("z")
	r.End("", nil)
	var b bytes.Buffer
	if r.Writer(&b) != &b {
		t.Error("a nil reporter wraps standard output")
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"auto", "plain", "none"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("fancy"); err == nil || err.Error() != `--progress "fancy": use auto, plain or none` {
		t.Errorf("ParseMode(fancy): %v", err)
	}
}

// TestHostileTextIsInert: a step, a detail, a note or an error naming an
// object whose name holds escape sequences, CR or LF is written escaped
// (termtext): plain lines hold no control character at all, the live line
// none but its own erase and colour sequences.
func TestHostileTextIsInert(t *testing.T) {
	const hostile = "node x\x1b]0;pwned\x07\x1b[2J\u202e\r\ny"
	for _, tc := range []struct {
		name     string
		mode     Mode
		terminal bool
	}{{"plain", Plain, false}, {"live", Auto, true}} {
		var out bytes.Buffer
		c := &clock{}
		r := New(Options{Mode: tc.mode, Out: &out, Terminal: tc.terminal, Getenv: env(map[string]string{"NO_COLOR": "x", "TERM": "xterm"}), Now: c.now, Interval: time.Second})
		r.Start("drain " + hostile)
		c.advance(2 * time.Second)
		r.Update(1, 2, hostile)
		r.Note(hostile)
		r.End(hostile, errors.New(hostile))
		got := out.String()
		if tc.terminal {
			got = strings.ReplaceAll(got, "\r\x1b[K", "") // the live line's own erase
		}
		if i, ch := termtext.FirstRaw([]byte(got), true); i >= 0 {
			t.Errorf("%s: %U at %d reaches the terminal raw: %q", tc.name, ch, i, got)
		}
		if !strings.Contains(got, `x^[]0;pwned\a^[[2J\u202e\r\ny`) {
			t.Errorf("%s: the name is not shown escaped: %q", tc.name, got)
		}
	}
}
