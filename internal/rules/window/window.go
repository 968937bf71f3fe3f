// Package window is a maintenance window: the days and hours, in a time
// zone, when an upgrade may disrupt nodes — "Mon-Fri 22:00-06:00
// Asia/Seoul". Karpenter's own disruption budgets take a cron schedule in
// UTC only; a window here is in the team's own zone, and a window that
// crosses midnight belongs to the day it starts on, as people write them.
package window

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // zones without the host's zoneinfo (containers, Windows)
)

// Window is one or more spans of the week in a zone.
type Window struct {
	spans []span
	loc   *time.Location
	text  string
}

// span is a daily span on some weekdays: from start to start+length,
// starting on the days set.
type span struct {
	days   [7]bool // time.Weekday
	start  time.Duration
	length time.Duration
}

var weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

// Parse reads "DAYS HH:MM-HH:MM ZONE", spans separated by ";" sharing the
// last one's zone: DAYS is a day (Mon), a range (Mon-Fri, Fri-Mon wraps) or
// a list (Mon,Wed,Fri), or "*" for every day; the end may be earlier than
// the start (22:00-06:00 ends the next morning); ZONE is an IANA zone
// (Asia/Seoul, UTC).
func Parse(s string) (*Window, error) {
	w := &Window{text: strings.TrimSpace(s)}
	parts := strings.Split(s, ";")
	fields := strings.Fields(parts[len(parts)-1])
	if len(fields) != 3 {
		return nil, fmt.Errorf("window %q: want DAYS HH:MM-HH:MM ZONE, e.g. \"Mon-Fri 22:00-06:00 Asia/Seoul\"", s)
	}
	loc, err := time.LoadLocation(fields[2])
	if err != nil {
		return nil, fmt.Errorf("window %q: unknown time zone %q: use an IANA name such as Asia/Seoul or UTC", s, fields[2])
	}
	w.loc = loc
	for i, p := range parts {
		f := strings.Fields(p)
		if i == len(parts)-1 {
			f = f[:2]
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("window %q: span %q: want DAYS HH:MM-HH:MM (the zone once, at the end)", s, strings.TrimSpace(p))
		}
		sp, err := parseSpan(f[0], f[1])
		if err != nil {
			return nil, fmt.Errorf("window %q: %v", s, err)
		}
		w.spans = append(w.spans, sp)
	}
	return w, nil
}

func parseSpan(days, hours string) (span, error) {
	var sp span
	if days == "*" {
		for d := range sp.days {
			sp.days[d] = true
		}
	} else {
		for _, item := range strings.Split(days, ",") {
			from, to, isRange := strings.Cut(item, "-")
			a, ok := weekdays[strings.ToLower(from)]
			if !ok {
				return sp, fmt.Errorf("day %q: use Mon, Tue, Wed, Thu, Fri, Sat or Sun", from)
			}
			b := a
			if isRange {
				if b, ok = weekdays[strings.ToLower(to)]; !ok {
					return sp, fmt.Errorf("day %q: use Mon, Tue, Wed, Thu, Fri, Sat or Sun", to)
				}
			}
			for d := a; ; d = (d + 1) % 7 {
				sp.days[d] = true
				if d == b {
					break
				}
			}
		}
	}
	from, to, ok := strings.Cut(hours, "-")
	if !ok {
		return sp, fmt.Errorf("hours %q: want HH:MM-HH:MM", hours)
	}
	start, err := clock(from)
	if err != nil {
		return sp, err
	}
	end, err := clock(to)
	if err != nil {
		return sp, err
	}
	sp.start, sp.length = start, end-start
	if sp.length <= 0 {
		sp.length += 24 * time.Hour // ends the next day
	}
	return sp, nil
}

func clock(s string) (time.Duration, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, fmt.Errorf("time %q: want HH:MM (24-hour)", s)
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, nil
}

// String is the window as written.
func (w *Window) String() string { return w.text }

// Open reports whether t is inside the window.
func (w *Window) Open(t time.Time) bool {
	_, open := w.state(t)
	return open
}

// state is whether t is inside, and the next instant it opens (t itself
// when open) or, when open, when it closes.
func (w *Window) state(t time.Time) (time.Time, bool) {
	local := t.In(w.loc)
	// A span that started yesterday may still be open: look from the day
	// before for a week and a day.
	day := time.Date(local.Year(), local.Month(), local.Day()-1, 0, 0, 0, 0, w.loc)
	var next time.Time
	for i := 0; i < 9; i++ {
		d := time.Date(day.Year(), day.Month(), day.Day()+i, 0, 0, 0, 0, w.loc)
		for _, sp := range w.spans {
			if !sp.days[d.Weekday()] {
				continue
			}
			// Wall-clock times of that day: a DST change keeps "22:00" 22:00.
			from := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, w.loc).Add(sp.start)
			from = time.Date(d.Year(), d.Month(), d.Day(), from.Hour(), from.Minute(), 0, 0, w.loc)
			until := from.Add(sp.length)
			if !t.Before(from) && t.Before(until) {
				return until, true
			}
			if from.After(t) && (next.IsZero() || from.Before(next)) {
				next = from
			}
		}
	}
	return next, false
}

// NextOpen is the first instant at or after t inside the window.
func (w *Window) NextOpen(t time.Time) time.Time {
	at, open := w.state(t)
	if open {
		return t
	}
	return at
}

// Closes is when the window t is in closes (zero when t is outside).
func (w *Window) Closes(t time.Time) time.Time {
	at, open := w.state(t)
	if !open {
		return time.Time{}
	}
	return at
}
