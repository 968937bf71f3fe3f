// Command ladder upgrades Kubernetes clusters — Amazon EKS first — one minor
// version at a time, after rehearsing the upgrade in a deterministic twin.
package main

import (
	"os"

	"github.com/ladder-eks/ladder/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
