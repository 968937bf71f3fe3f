package awsserve_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/awsserve"
)

// The exports, evaluated by a POSIX shell, set each variable to exactly
// its value — spaces, quotes and $ included — and plain values are
// written unquoted, as a user would type them.
func TestWriteExports(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	env := []awsserve.EnvVar{
		{"PLAIN", "http://127.0.0.1:4566"},
		{"SPACED", "/tmp/my lab/kubeconfig"},
		{"QUOTED", `it's "$HOME" and \n`},
		{"EMPTY", ""},
	}
	var b bytes.Buffer
	if err := awsserve.WriteExports(&b, env); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "export PLAIN=http://127.0.0.1:4566\n") {
		t.Errorf("a plain value is quoted:\n%s", b.String())
	}
	for _, v := range env {
		out, err := exec.Command(sh, "-c", `eval "$1"; printf %s "$`+v.Name+`"`, "sh", b.String()).Output()
		if err != nil {
			t.Fatalf("sh: %v\n%s", err, b.String())
		}
		if string(out) != v.Value {
			t.Errorf("after eval, %s=%q, want %q\nexports:\n%s", v.Name, out, v.Value, b.String())
		}
	}
}
