// Package cli holds Ladder's cobra commands. Commands parse flags, call the
// packages that do the work and print; they hold no upgrade logic themselves.
package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withExit wraps err so Main exits with code instead of 1.
func withExit(code int, err error) error { return &exitError{code: code, err: err} }

// Main runs the ladder command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	root, finish := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if perr := finish(); perr != nil && err == nil {
		err = perr
	}
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "error:", termtext.EscapeLines(ee.err.Error()))
		}
		return ee.code
	}
	// An error quotes names and messages from manifests, clusters and
	// AWS: printed escaped (termtext), keeping the lines of a joined error.
	fmt.Fprintln(stderr, "error:", termtext.EscapeLines(err.Error()))
	return 1
}

// writeText writes a text output through termtext's net: whatever a value
// holds, no control character or escape sequence reaches the terminal
// raw (the printers escape each value; the net catches one they missed).
func writeText(w io.Writer, write func(io.Writer) error) error {
	tw := termtext.NewWriter(w)
	err := write(tw)
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func newRootCommand(stdout, stderr io.Writer) (*cobra.Command, func() error) {
	root := &cobra.Command{
		Use:   "ladder",
		Short: "Upgrade Kubernetes clusters one minor version at a time, rehearsed first",
		Long: `Ladder upgrades Kubernetes clusters — Amazon EKS first — safely, one minor
version at a time: inventory → insights → plan → rehearse → execute → verify.

Its heart is a digital twin: a deterministic, virtual-time model of Kubernetes
(scheduler, controllers, Eviction API and PodDisruptionBudgets), Karpenter and
the EKS node mechanisms. "ladder rehearse" runs an upgrade in the twin in
seconds and reports what the real one would do.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	finish := addProfileFlags(root)
	addProgressFlag(root)
	root.CompletionOptions.HiddenDefaultCmd = true
	root.AddCommand(
		newRehearseCommand(),
		newBudgetsCommand(),
		newScenarioCommand(),
		newVersionCommand(),
		newInventoryCommand(),
		newCaptureCommand(),
		newPlanCommand(),
		newUpgradeCommand(),
		newLabCommand(),
		newCheckCommand(),
		newViewCommand(),
	)
	return root, finish
}
