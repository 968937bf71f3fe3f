package scenario

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The scenario format imports no twin and no twin imports the format
// (docs/architecture.md): the rules both read live in internal/rules.
// This reads the import lines of every non-test Go file of the format
// and of internal/twin/... .
func TestFormatAndTwinsStayApart(t *testing.T) {
	const module = "github.com/ladder-eks/ladder/internal/"
	check := func(dir, forbidden string) int {
		files := 0
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			files++
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == module+forbidden || strings.HasPrefix(p, module+forbidden+"/") {
					t.Errorf("%s imports %s", path, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	if n := check(".", "twin"); n < 10 {
		t.Fatalf("read %d files of the scenario format: the test reads nothing", n)
	}
	if n := check("../twin", "scenario"); n < 30 {
		t.Fatalf("read %d files of the twins: the test reads nothing", n)
	}
}
