// Command gen writes apis_generated.csv, the generated half of Ladder's API
// deprecation table (see package lifecycle). Run it with
// `go generate ./internal/insights/deprecations`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ladder-eks/ladder/internal/insights/deprecations/lifecycle"
)

func main() {
	out := flag.String("o", "apis_generated.csv", "file to write")
	flag.Parse()
	data, err := lifecycle.Render(lifecycle.APIModuleVersion())
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
