package cli

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/outfile"
)

// addProfileFlags gives every command kubectl's --profile and
// --profile-output flags: a Go pprof profile of the run, for performance
// reports ("go tool pprof ladder profile.pprof"). The returned func writes
// the profile; Main calls it after the command, whether it failed or not.
// The profile is written whole, only to a new or a regular file
// (internal/outfile); its path is checked before the command runs.
func addProfileFlags(root *cobra.Command) (finish func() error) {
	var (
		kind   string
		output string
		cpu    *bytes.Buffer
	)
	root.PersistentFlags().StringVar(&kind, "profile", "none", "profile to capture: none, cpu, heap, allocs")
	root.PersistentFlags().StringVar(&output, "profile-output", "profile.pprof", "file to write the profile to")
	out := func() outfile.File { return outfile.File{Name: "--profile-output", Path: output} }
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		switch kind {
		case "none":
			return nil
		case "heap", "allocs":
			return out().Check()
		case "cpu":
			if err := out().Check(); err != nil {
				return err
			}
			var b bytes.Buffer
			if err := pprof.StartCPUProfile(&b); err != nil {
				return fmt.Errorf("--profile cpu: %w", err)
			}
			cpu = &b
			return nil
		default:
			return fmt.Errorf("--profile: %q is not a profile; use none, cpu, heap or allocs", kind)
		}
	}
	return func() error {
		switch kind {
		case "cpu":
			if cpu == nil {
				return nil
			}
			pprof.StopCPUProfile()
			return out().Write(cpu.Bytes())
		case "heap", "allocs":
			runtime.GC()
			var b bytes.Buffer
			if err := pprof.Lookup(kind).WriteTo(&b, 0); err != nil {
				return fmt.Errorf("--profile %s: %w", kind, err)
			}
			return out().Write(b.Bytes())
		}
		return nil
	}
}
