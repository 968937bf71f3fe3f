package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addProfileFlags gives every command kubectl's --profile and
// --profile-output flags: a Go pprof profile of the run, for performance
// reports ("go tool pprof ladder profile.pprof"). The returned func writes
// the profile; Main calls it after the command, whether it failed or not.
func addProfileFlags(root *cobra.Command) (finish func() error) {
	var (
		kind   string
		output string
		cpu    *os.File
	)
	root.PersistentFlags().StringVar(&kind, "profile", "none", "profile to capture: none, cpu, heap, allocs")
	root.PersistentFlags().StringVar(&output, "profile-output", "profile.pprof", "file to write the profile to")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		switch kind {
		case "none", "heap", "allocs":
			return nil
		case "cpu":
			f, err := os.Create(output)
			if err != nil {
				return fmt.Errorf("--profile-output: %w", err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return fmt.Errorf("--profile cpu: %w", err)
			}
			cpu = f
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
			return cpu.Close()
		case "heap", "allocs":
			f, err := os.Create(output)
			if err != nil {
				return fmt.Errorf("--profile-output: %w", err)
			}
			runtime.GC()
			if err := pprof.Lookup(kind).WriteTo(f, 0); err != nil {
				f.Close()
				return fmt.Errorf("--profile %s: %w", kind, err)
			}
			return f.Close()
		}
		return nil
	}
}
