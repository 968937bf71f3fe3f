package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/catalog"
)

// Version is set at link time: -ldflags "-X github.com/ladder-eks/ladder/internal/cli.Version=v0.1.0".
var Version = "v0.1.0-dev"

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Ladder's version, the date of its embedded data and what the twin models",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "ladder %s\n", buildVersion())
			fmt.Fprintf(out, "data: %s\n", catalog.Describe())
			fmt.Fprintf(out, "twin: Karpenter %s semantics (sigs.k8s.io/karpenter, aws/karpenter-provider-aws), Kubernetes API %s\n",
				moduleVersion("sigs.k8s.io/karpenter", "v1.14.1"), moduleVersion("k8s.io/api", "v0.37.2"))
			fmt.Fprintf(out, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// moduleVersion is the version of a dependency linked into this binary.
func moduleVersion(path, fallback string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return fallback
}

func buildVersion() string {
	if Version != "v0.1.0-dev" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return Version
}
