// Package progress shows what a long command is doing while it does it: the
// step it is in, how far along (a bar, or a spinner when the total is not
// known), how long it has taken, and each step's end.
//
// A command picks one rendering when it starts. On a terminal the current
// step is one line redrawn in place (carriage return, erase line), coloured
// unless NO_COLOR is set (https://no-color.org) or TERM is dumb; finished
// steps stay above it as lines of their own. Anywhere else — a CI log, a
// file — each step's start and end is a timestamped line, and progress
// within a step at most one line per Interval, so a log of a four-hour
// upgrade stays readable.
//
// Steps, details, notes and errors are escaped (termtext): they name
// objects of the cluster and quote its API server. Progress is written to
// standard error only: what a command prints on
// standard output (reports, runbooks, JSON) is the same with or without it.
// The wall clock it reads only decides what it prints on standard error.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// Mode is the --progress flag's value.
type Mode string

// The modes: Auto draws live lines on a terminal and plain lines
// elsewhere; Plain always writes timestamped lines; None writes nothing.
const (
	Auto  Mode = "auto"
	Plain Mode = "plain"
	None  Mode = "none"
)

// ParseMode checks a --progress value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Plain, None:
		return m, nil
	}
	return "", fmt.Errorf("--progress %q: use auto, plain or none", s)
}

// Options choose and feed a Reporter's rendering.
type Options struct {
	Mode Mode
	// Out is where progress goes: standard error.
	Out io.Writer
	// Terminal says Out is a terminal (Auto then draws live lines).
	Terminal bool
	// Getenv reads NO_COLOR and TERM; os.Getenv if nil.
	Getenv func(string) string
	// Now is the wall clock; time.Now if nil.
	Now func() time.Time
	// Interval is the least time between two plain progress lines of one
	// step; 30 seconds if zero.
	Interval time.Duration
}

// DefaultInterval is the least time between two plain progress lines.
const DefaultInterval = 30 * time.Second

// redrawEvery is the least time between two redraws of the live line: a
// caller may report thousands of updates a second.
const redrawEvery = 100 * time.Millisecond

// Stderr is a Reporter on standard error in the given mode, live when
// standard error is a terminal.
func Stderr(mode Mode, stderr io.Writer) *Reporter {
	tty := false
	if f, ok := stderr.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return New(Options{Mode: mode, Out: stderr, Terminal: tty})
}

// Reporter renders one command's progress. Its methods are safe for
// concurrent use and do nothing on a nil Reporter, so code that reports
// progress needs no check of whether anyone listens.
type Reporter struct {
	mu       sync.Mutex
	out      io.Writer
	live     bool // redraw a line in place
	color    bool
	ansi     bool // the terminal understands escape sequences
	now      func() time.Time
	interval time.Duration

	step      string
	began     time.Time
	done      int
	total     int
	detail    string
	frame     int
	drawn     int       // width of the live line on screen, 0 if none
	lastDraw  time.Time // live: the last redraw
	lastPrint time.Time // plain: the step's last line
}

// New is a Reporter with the rendering o chooses; nil for None.
func New(o Options) *Reporter {
	if o.Mode == None || o.Out == nil {
		return nil
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	r := &Reporter{out: o.Out, now: o.Now, interval: o.Interval}
	if r.now == nil {
		r.now = time.Now
	}
	if r.interval <= 0 {
		r.interval = DefaultInterval
	}
	if o.Mode != Plain && o.Terminal {
		r.live = true
		r.ansi = getenv("TERM") != "dumb"
		r.color = r.ansi && getenv("NO_COLOR") == ""
	}
	return r
}

// Start begins a step; a step still open ends first, as done.
func (r *Reporter) Start(step string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.step != "" {
		r.end("", nil)
	}
	step = termtext.Escape(step)
	r.step, r.began, r.done, r.total, r.detail = step, r.now(), 0, 0, ""
	if r.live {
		r.draw(true)
		return
	}
	r.lastPrint = r.began
	r.printf("%s started", step)
}

// Update says how far the current step is: done of total (total 0: not
// known, a spinner turns) and what it is doing. Live, the line is redrawn
// at most every 100 ms; plain, a line is written at most every Interval.
func (r *Reporter) Update(done, total int, detail string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.step == "" {
		return
	}
	// A bar replacing the spinner is drawn at once.
	bar := total > 0 && r.total == 0
	r.done, r.total, r.detail = done, total, termtext.Escape(detail)
	now := r.now()
	if r.live {
		r.draw(bar || now.Sub(r.lastDraw) >= redrawEvery)
		return
	}
	if now.Sub(r.lastPrint) >= r.interval {
		r.lastPrint = now
		r.printf("%s: %s", r.step, r.status(now))
	}
}

// Note is a line about the current step that stays (a resumed operation,
// the update it waits on): above the live line, or a plain line.
func (r *Reporter) Note(msg string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	msg = termtext.Escape(msg)
	if r.live {
		r.erase()
		fmt.Fprintf(r.out, "  %s\n", msg)
		if r.step != "" {
			r.draw(true)
		}
		return
	}
	r.printf("%s", msg)
}

// End ends the current step: done when err is nil, failed with err
// otherwise; note, if any, follows the step's name.
func (r *Reporter) End(note string, err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.step != "" {
		r.end(note, err)
	}
}

func (r *Reporter) end(note string, err error) {
	took := roundDuration(r.now().Sub(r.began))
	if note != "" {
		note = " " + termtext.Escape(note)
	}
	var why string
	if err != nil {
		why = termtext.Escape(err.Error())
	}
	if r.live {
		r.erase()
		mark, colour := "✓", green
		if err != nil {
			mark, colour = "✗", red
		}
		fmt.Fprintf(r.out, "%s %s%s (%s)", r.paint(colour, mark), r.step, note, took)
		if err != nil {
			fmt.Fprintf(r.out, ": %s", why)
		}
		fmt.Fprintln(r.out)
	} else if err != nil {
		r.printf("%s failed%s after %s: %s", r.step, note, took, why)
	} else {
		r.printf("%s done%s in %s", r.step, note, took)
	}
	r.step = ""
}

// Writer is w with the live line moved out of the way of what w prints:
// a command's standard output on the same terminal as its progress. It is
// w itself unless the Reporter draws a live line.
func (r *Reporter) Writer(w io.Writer) io.Writer {
	if r == nil || !r.live {
		return w
	}
	return &aboveLive{r: r, w: w}
}

type aboveLive struct {
	r *Reporter
	w io.Writer
}

func (a *aboveLive) Write(p []byte) (int, error) {
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	a.r.erase()
	n, err := a.w.Write(p)
	if a.r.step != "" && len(p) > 0 && p[len(p)-1] == '\n' {
		a.r.draw(true)
	}
	return n, err
}

// spinner turns while a step has no known total.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

const barWidth = 20

// draw redraws the live line when force is set (the step or its text
// changed enough to be worth it).
func (r *Reporter) draw(force bool) {
	if !force {
		return
	}
	now := r.now()
	r.lastDraw = now
	var b strings.Builder
	if r.total > 0 {
		fill := min(r.done, r.total) * barWidth / r.total
		b.WriteString(r.paint(cyan, "["+strings.Repeat("=", fill)+strings.Repeat(" ", barWidth-fill)+"]"))
	} else {
		b.WriteString(r.paint(cyan, spinner[r.frame%len(spinner)]))
		r.frame++
	}
	b.WriteString(" " + r.step + " " + r.status(now))
	r.erase()
	line := b.String()
	io.WriteString(r.out, line)
	r.drawn = visibleWidth(line)
}

// status is "3/10 detail 12s", the parts there are.
func (r *Reporter) status(now time.Time) string {
	var parts []string
	if r.total > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d", r.done, r.total))
	}
	if r.detail != "" {
		parts = append(parts, r.detail)
	}
	parts = append(parts, roundDuration(now.Sub(r.began)).String())
	return strings.Join(parts, " ")
}

// erase clears the live line: erase-line where escape sequences work,
// spaces over it where they do not.
func (r *Reporter) erase() {
	if r.drawn == 0 {
		return
	}
	if r.ansi {
		io.WriteString(r.out, "\r\x1b[K")
	} else {
		io.WriteString(r.out, "\r"+strings.Repeat(" ", r.drawn)+"\r")
	}
	r.drawn = 0
}

// printf writes one plain, timestamped line.
func (r *Reporter) printf(format string, args ...any) {
	fmt.Fprintf(r.out, "%s  "+format+"\n", append([]any{r.now().UTC().Format("15:04:05")}, args...)...)
}

const (
	green = "\x1b[32m"
	red   = "\x1b[31m"
	cyan  = "\x1b[36m"
	reset = "\x1b[0m"
)

func (r *Reporter) paint(colour, s string) string {
	if !r.color {
		return s
	}
	return colour + s + reset
}

// visibleWidth is the number of characters of s a terminal shows: runes
// outside escape sequences.
func visibleWidth(s string) int {
	n, esc := 0, false
	for _, c := range s {
		switch {
		case esc:
			esc = c != 'm'
		case c == '\x1b':
			esc = true
		default:
			n++
		}
	}
	return n
}

func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
