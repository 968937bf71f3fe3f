package cli

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// --request-timeout reads as kubectl's: a duration, or whole seconds;
// never negative.
func TestRequestTimeoutFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30s", 30 * time.Second, true},
		{"2m", 2 * time.Minute, true},
		{"5", 5 * time.Second, true},
		{"0", 0, true},
		{"-1s", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var d time.Duration
		addRequestTimeout(fs, &d)
		if d != liveRequestTimeout {
			t.Fatalf("default %s, want %s", d, liveRequestTimeout)
		}
		err := fs.Set("request-timeout", tc.in)
		if (err == nil) != tc.ok || (tc.ok && d != tc.want) {
			t.Errorf("--request-timeout %s: %s, %v; want %s, ok %v", tc.in, d, err, tc.want, tc.ok)
		}
	}
}
