package window

import (
	"strings"
	"testing"
	"time"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestWindow: "Mon-Fri 22:00-06:00 Asia/Seoul" (UTC+9) is open each
// weekday night, 13:00 to 21:00 UTC, the span belonging to the day it
// starts on: Friday's runs into Saturday morning, Sunday night's is closed.
func TestWindow(t *testing.T) {
	w, err := Parse("Mon-Fri 22:00-06:00 Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t        string
		open     bool
		nextOpen string
	}{
		{"2026-12-07T12:59:00Z", false, "2026-12-07T13:00:00Z"}, // Mon 21:59 KST
		{"2026-12-07T13:00:00Z", true, "2026-12-07T13:00:00Z"},  // Mon 22:00 KST
		{"2026-12-07T20:59:00Z", true, "2026-12-07T20:59:00Z"},  // Tue 05:59 KST
		{"2026-12-07T21:00:00Z", false, "2026-12-08T13:00:00Z"}, // Tue 06:00 KST: closed till Tue 22:00
		{"2026-12-11T20:00:00Z", true, "2026-12-11T20:00:00Z"},  // Sat 05:00 KST, Friday's night
		{"2026-12-12T13:00:00Z", false, "2026-12-14T13:00:00Z"}, // Sat 22:00 KST: closed till Mon 22:00
		{"2026-12-13T20:00:00Z", false, "2026-12-14T13:00:00Z"}, // Mon 05:00 KST: Sunday night is closed
	} {
		now := at(t, c.t)
		if got := w.Open(now); got != c.open {
			t.Errorf("%s: open %v, want %v", c.t, got, c.open)
		}
		if got := w.NextOpen(now).UTC().Format(time.RFC3339); got != c.nextOpen {
			t.Errorf("%s: next open %s, want %s", c.t, got, c.nextOpen)
		}
	}
	if got := w.Closes(at(t, "2026-12-07T14:00:00Z")).UTC().Format(time.RFC3339); got != "2026-12-07T21:00:00Z" {
		t.Errorf("closes %s", got)
	}
}

// TestWindowSpans: several spans share the zone; lists and wrapping ranges.
func TestWindowSpans(t *testing.T) {
	w, err := Parse("Sat,Sun 00:00-23:59; Fri-Mon 12:00-13:00 UTC")
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{
		"2026-12-05T10:00:00Z": true,  // Sat
		"2026-12-07T12:30:00Z": true,  // Mon, the wrapped Fri-Mon range
		"2026-12-08T12:30:00Z": false, // Tue
		"2026-12-04T12:00:00Z": true,  // Fri
	} {
		if got := w.Open(at(t, s)); got != want {
			t.Errorf("%s: open %v, want %v", s, got, want)
		}
	}
}

// TestWindowParseErrors: each mistake says what to write.
func TestWindowParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"Mon-Fri 22:00-06:00":              "want DAYS HH:MM-HH:MM ZONE",
		"Mon-Fri 22:00-06:00 Asia/Nowhere": "unknown time zone \"Asia/Nowhere\"",
		"Mo-Fr 22:00-06:00 UTC":            "day \"Mo\": use Mon",
		"Mon 10pm-6am UTC":                 "want HH:MM (24-hour)",
		"Mon 22:00 UTC":                    "hours \"22:00\": want HH:MM-HH:MM",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}
