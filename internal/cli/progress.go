package cli

import (
	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/progress"
)

// addProgressFlag gives every command --progress: how long commands (the
// lab's build, a big rehearsal, an upgrade) show what they are doing, on
// standard error only — standard output is the same in every mode.
func addProgressFlag(root *cobra.Command) {
	root.PersistentFlags().String("progress", string(progress.Auto),
		"progress of long commands on standard error: auto (live lines on a terminal, timestamped lines otherwise), plain or none; NO_COLOR turns colours off")
}

// progressOf is the command's progress reporter, nil with --progress none.
func progressOf(cmd *cobra.Command) (*progress.Reporter, error) {
	mode, err := progress.ParseMode(cmd.Flag("progress").Value.String())
	if err != nil {
		return nil, err
	}
	return progress.Stderr(mode, cmd.ErrOrStderr()), nil
}
