package cli

import "github.com/spf13/cobra"

func newScenarioCommand() *cobra.Command {
	return &cobra.Command{Use: "scenario", Short: "Validate and generate scenario files", Hidden: true}
}
