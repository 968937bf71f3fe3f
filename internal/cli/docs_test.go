package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The example outputs in README.md and docs/*.md are what the tree prints.
//
// A fenced block is checked when the line right before its opening fence is
// one of these HTML comments (invisible on GitHub):
//
//	<!-- ladder ARGS -->               the block is the standard output of `ladder ARGS`
//	<!-- ladder ARGS 2>&1 -->          ... followed by its standard error
//	<!-- cd DIR && ladder ARGS -->     ... run in DIR, relative to the repository root
//	<!-- cat FILE -->                  the block is FILE (relative to the repository root)
//	<!-- not checked: REASON -->       not compared, with the reason (a real cluster, ...)
//
// ARGS are split as a shell splits them (single and double quotes). A block
// whose first line is `$ ladder ...` shows the command: that line (less a
// trailing `# comment`) must be the marker's command, less `--now T` — the
// flag that pins `ladder check`'s clock so support windows stay put — and is
// not compared with the output.
//
// A block is compared line by line with the output, trailing spaces ignored:
// the block must equal the output, except that
//   - a line `...` stands for any number of output lines (zero included): a
//     block may show selected runs of lines, in the order the output has them;
//   - a line ending in `...` stands for one output line that starts with the
//     text before the `...`.
//
// Exit status 2 (findings, a failed rehearsal) is output like any other; exit
// status 1 (Ladder could not run) fails the block unless the marker ends
// with 2>&1, which shows the error.
//
// Every block without a language, or marked `text` or `json`, and every block
// holding a `$ ladder` line, must carry one of the markers, so no example
// output escapes the test.
func TestDocsExamplesMatchOutput(t *testing.T) {
	root := repositoryRoot(t)
	checked := 0
	outputs := map[string][]string{} // by directory and command: many blocks show one run
	for _, f := range readDocs(t, root) {
		rel := f.rel
		for _, b := range f.blocks {
			where := fmt.Sprintf("%s:%d", rel, b.line)
			if b.marker == "" {
				if b.needsMarker() {
					t.Errorf("%s: example output without a marker: put <!-- ladder ARGS --> (or <!-- not checked: why -->) on the line before the block", where)
				}
				continue
			}
			if strings.HasPrefix(b.marker, "not checked:") {
				if strings.TrimSpace(strings.TrimPrefix(b.marker, "not checked:")) == "" {
					t.Errorf("%s: <!-- not checked: --> needs a reason", where)
				}
				continue
			}
			checked++
			t.Run(where, func(t *testing.T) {
				want, got, err := b.run(t, root, outputs)
				if err != nil {
					t.Fatalf("%s: <!-- %s -->: %v", where, b.marker, err)
				}
				if n, msg := matchExample(want, got); n >= 0 {
					// The block's lines start on the line after the fence,
					// and after the `$ ladder` line when it shows one.
					line := b.line + 1 + len(b.body) - len(want) + n
					t.Errorf("%s:%d: the block after <!-- %s --> is not what the tree prints: %s\n"+
						"Run the command and update the block (TestDocsExamplesMatchOutput has the rules for trimmed blocks).",
						rel, line, b.marker, msg)
				}
			})
		}
	}
	if checked == 0 {
		t.Fatal("no checked example in README.md or docs/*.md")
	}
}

// TestDocsCommandLinesParse: every `ladder ...` command line in a `sh` block
// of README.md and docs/*.md names a command that exists and flags it takes
// (parsed, not run: they read clusters and files the reader has). A line
// may pipe into ladder or out of it, and end with a `# comment`.
func TestDocsCommandLinesParse(t *testing.T) {
	lines := 0
	for _, f := range readDocs(t, repositoryRoot(t)) {
		for _, b := range f.blocks {
			if b.lang != "sh" {
				continue
			}
			for i, line := range b.body {
				for _, cmd := range ladderCommands(line) {
					lines++
					if err := parseCommandLine(cmd); err != nil {
						t.Errorf("%s:%d: `%s`: %v", f.rel, b.line+1+i, cmd, err)
					}
				}
			}
		}
	}
	if lines == 0 {
		t.Fatal("no ladder command line in a sh block")
	}
}

// ladderCommands returns the `ladder ...` commands of a shell line: each
// part of a pipeline that starts with ladder, without its redirections and
// the line's comment.
func ladderCommands(line string) []string {
	if c := strings.Index(line, " #"); c >= 0 {
		line = line[:c]
	}
	var cmds []string
	for _, part := range strings.Split(line, "|") {
		part = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), "$ "))
		if !strings.HasPrefix(part, "ladder ") {
			continue
		}
		if r := strings.IndexAny(part, "<>"); r >= 0 {
			part = strings.TrimSuffix(strings.TrimSpace(part[:r]), " 2")
		}
		cmds = append(cmds, part)
	}
	return cmds
}

// parseCommandLine finds cmd's command in the command tree and parses its
// flags, without running it.
func parseCommandLine(cmd string) error {
	words, err := shellWords(cmd)
	if err != nil {
		return err
	}
	root, _ := newRootCommand(io.Discard, io.Discard)
	c, args, err := root.Find(words[1:])
	if err != nil {
		return err
	}
	if c == root {
		return fmt.Errorf("no command %q", words[1])
	}
	return c.ParseFlags(args)
}

// docFile is a Markdown file of the documentation and its fenced blocks.
type docFile struct {
	rel    string // the path from the repository root
	text   string
	blocks []docBlock
}

// readDocs reads README.md and docs/*.md.
func readDocs(t *testing.T, root string) []docFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []docFile
	for _, path := range append([]string{filepath.Join(root, "README.md")}, paths...) {
		rel, _ := filepath.Rel(root, path)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := docBlocks(string(text))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		docs = append(docs, docFile{rel: rel, text: string(text), blocks: blocks})
	}
	return docs
}

// repositoryRoot is the directory holding go.mod above this package.
func repositoryRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// docBlock is one fenced block of a Markdown file.
type docBlock struct {
	line   int    // the opening fence's line, 1-based
	lang   string // the fence's info string
	marker string // the HTML comment on the line before the fence, trimmed; "" if none
	body   []string
}

var (
	fenceLine  = regexp.MustCompile("^(\\s*)```\\s*([A-Za-z0-9_-]*)\\s*$")
	markerLine = regexp.MustCompile(`^\s*<!--\s*(.*?)\s*-->\s*$`)
)

// docBlocks returns the fenced blocks of a Markdown text.
func docBlocks(text string) ([]docBlock, error) {
	lines := strings.Split(text, "\n")
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		m := fenceLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := docBlock{line: i + 1, lang: m[2]}
		if i > 0 {
			if mm := markerLine.FindStringSubmatch(lines[i-1]); mm != nil {
				b.marker = mm[1]
			}
		}
		indent := m[1]
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "```" {
				closed = true
				break
			}
			b.body = append(b.body, strings.TrimPrefix(lines[i], indent))
		}
		if !closed {
			return nil, fmt.Errorf("line %d: the block is never closed", b.line)
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// needsMarker reports whether the block shows output: no language, text or
// json, or a `$ ladder` line.
func (b docBlock) needsMarker() bool {
	switch b.lang {
	case "", "text", "json":
		return true
	}
	for _, l := range b.body {
		if strings.HasPrefix(l, "$ ladder ") {
			return true
		}
	}
	return false
}

// run carries out the block's marker and returns the block's lines to
// compare and the output's. outputs holds the commands already run, by
// directory and command line.
func (b docBlock) run(t *testing.T, root string, outputs map[string][]string) (want, got []string, err error) {
	cmd := b.marker
	dir := root
	if rest, ok := strings.CutPrefix(cmd, "cd "); ok {
		d, after, ok := strings.Cut(rest, " && ")
		if !ok {
			return nil, nil, fmt.Errorf("write `cd DIR && ladder ARGS`")
		}
		dir, cmd = filepath.Join(root, d), after
	}
	words, err := shellWords(cmd)
	if err != nil {
		return nil, nil, err
	}
	want = b.body
	switch {
	case len(words) == 2 && words[0] == "cat":
		data, err := os.ReadFile(filepath.Join(dir, words[1]))
		if err != nil {
			return nil, nil, err
		}
		return want, outputLines(string(data)), nil
	case len(words) >= 2 && words[0] == "ladder":
	default:
		return nil, nil, fmt.Errorf("a marker is `ladder ARGS`, `cd DIR && ladder ARGS`, `cat FILE` or `not checked: REASON`")
	}
	args := words[1:]
	withStderr := false
	if args[len(args)-1] == "2>&1" {
		withStderr, args = true, args[:len(args)-1]
	}
	if len(want) > 0 && strings.HasPrefix(want[0], "$ ") {
		shown := strings.TrimSpace(want[0][2:])
		if c := strings.Index(shown, " # "); c >= 0 {
			shown = strings.TrimSpace(shown[:c])
		}
		if wantShown := "ladder " + strings.Join(withoutNow(args), " "); shown != wantShown {
			return nil, nil, fmt.Errorf("the block shows `%s`, the marker runs `%s`", shown, wantShown)
		}
		want = want[1:]
	}
	key := dir + "\x00" + cmd
	if out, ok := outputs[key]; ok {
		return want, out, nil
	}
	t.Chdir(dir)
	code, stdout, stderr := runLadder(args...)
	if code == 1 && !withStderr {
		return nil, nil, fmt.Errorf("exit 1: %s", stderr)
	}
	out := stdout
	if withStderr {
		out += stderr
	}
	outputs[key] = outputLines(out)
	return want, outputs[key], nil
}

// withoutNow drops `--now T` (and `--now=T`) from args.
func withoutNow(args []string) []string {
	var kept []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--now":
			i++
		case strings.HasPrefix(args[i], "--now="):
		default:
			kept = append(kept, args[i])
		}
	}
	return kept
}

// outputLines splits text into lines, without the final newline's empty line.
func outputLines(text string) []string {
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// shellWords splits s as a shell does words: blanks separate, single and
// double quotes group (no escapes, no expansion).
func shellWords(s string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c in %q", quote, s)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// lineMatches reports whether the block's line doc stands for the output's
// line out: equal, trailing spaces ignored, or `PREFIX...` for a line that
// starts with PREFIX.
func lineMatches(doc, out string) bool {
	doc, out = strings.TrimRight(doc, " "), strings.TrimRight(out, " ")
	if prefix, ok := strings.CutSuffix(doc, "..."); ok && strings.TrimSpace(prefix) != "" {
		return strings.HasPrefix(out, prefix)
	}
	return doc == out
}

// isCut reports whether the block's line is a `...` cut.
func isCut(doc string) bool { return strings.TrimSpace(doc) == "..." }

// matchExample compares a block with the output by the rules of
// TestDocsExamplesMatchOutput. It returns -1 when they agree, else the index
// in doc of the first line that differs and a message naming the output's
// line there.
func matchExample(doc, out []string) (int, string) {
	// The runs of lines between cuts, each with its index in doc; each run
	// must appear whole, in order. The first run starts the output and the
	// last ends it (either is empty when the block starts or ends with a cut).
	type run struct {
		start int
		lines []string
	}
	runs := []run{{start: 0}}
	for i, l := range doc {
		if isCut(l) {
			runs = append(runs, run{start: i + 1})
			continue
		}
		runs[len(runs)-1].lines = append(runs[len(runs)-1].lines, l)
	}
	pos := 0
	for i, r := range runs {
		first, last := i == 0, i == len(runs)-1
		at := pos
		switch {
		case last && !first:
			// The last run ends the output.
			if len(out)-len(r.lines) > at {
				at = len(out) - len(r.lines)
			}
			if n, _ := firstDifference(r.lines, out, at); n >= 0 {
				near := nearest(r.lines, out, pos)
				n, msg := firstDifference(r.lines, out, near)
				if n < 0 { // the lines are there, but more output follows them
					n, msg = len(r.lines)-1, fmt.Sprintf("the output goes on after this line with its line %d %q", near+len(r.lines)+1, out[near+len(r.lines)])
				}
				return r.start + n, fmt.Sprintf("the block's last lines do not end the output; nearest: %s", msg)
			}
		case !first:
			if at = find(r.lines, out, pos); at < 0 {
				n, msg := firstDifference(r.lines, out, nearest(r.lines, out, pos))
				return r.start + n, fmt.Sprintf("not found in order after the output's line %d; nearest: %s", pos, msg)
			}
		}
		if n, msg := firstDifference(r.lines, out, at); n >= 0 {
			return r.start + n, msg
		}
		pos = at + len(r.lines)
	}
	if pos < len(out) && (len(doc) == 0 || !isCut(doc[len(doc)-1])) {
		return len(doc), fmt.Sprintf("the block ends where the output goes on with its line %d %q", pos+1, out[pos])
	}
	return -1, ""
}

// find returns the first position at or after from where run matches out,
// or -1.
func find(run, out []string, from int) int {
	for p := from; p+len(run) <= len(out); p++ {
		if n, _ := firstDifference(run, out, p); n < 0 {
			return p
		}
	}
	return -1
}

// nearest returns the position at or after from where the most of run's
// first lines match out, to report a difference against.
func nearest(run, out []string, from int) int {
	at, most := from, -1
	for p := from; p < len(out); p++ {
		n := 0
		for n < len(run) && p+n < len(out) && lineMatches(run[n], out[p+n]) {
			n++
		}
		if n > most {
			at, most = p, n
		}
	}
	return at
}

// firstDifference compares run with out from position at. It returns -1 when
// run matches there, else the index in run of the first line that differs
// and a message naming both lines.
func firstDifference(run, out []string, at int) (int, string) {
	for n, l := range run {
		if at+n >= len(out) {
			return n, fmt.Sprintf("the block has %q where the output has ended (after %d lines)", l, len(out))
		}
		if !lineMatches(l, out[at+n]) {
			return n, fmt.Sprintf("the block has\n\t%q\nwhere the output's line %d is\n\t%q", l, at+n+1, out[at+n])
		}
	}
	return -1, ""
}

func TestMatchExample(t *testing.T) {
	out := []string{"Scenario workshop: succeeded after 36m42s", "  note: 13 Service", "", "HOP  STEP", "1.31 pre-checks   ", "1.31 control-plane", "", "NODES"}
	for _, tc := range []struct {
		name string
		doc  []string
		line int // the block's first differing line, -1 for none
	}{
		{"the whole output", out, -1},
		{"trailing spaces ignored", append(append([]string{}, out[:4]...), "1.31 pre-checks", "1.31 control-plane   ", "", "NODES"), -1},
		{"a cut between runs", []string{"Scenario workshop: succeeded after 36m42s", "...", "1.31 pre-checks", "1.31 control-plane", "..."}, -1},
		{"a cut at the start", []string{"...", "NODES"}, -1},
		{"a cut standing for nothing", []string{"Scenario workshop: succeeded after 36m42s", "...", "  note: 13 Service", "..."}, -1},
		{"a line cut short", []string{"Scenario workshop: succeeded after...", "..."}, -1},
		{"a time that differs", []string{"Scenario workshop: succeeded after 36m40s", "..."}, 0},
		{"a time that differs after a cut", []string{"Scenario workshop: succeeded after 36m42s", "...", "HOP  STEP", "1.31 control-plane", "..."}, 3},
		{"runs out of order", []string{"...", "1.31 control-plane", "...", "1.31 pre-checks", "..."}, 3},
		{"the block stops early", out[:5], 5},
		{"the output stops early", append(append([]string{}, out...), "ip-10-0-1-1"), 8},
		{"the last run must end the output", []string{"...", "HOP  STEP"}, 1},
		{"a blank line missing before the last run", []string{"...", "1.31 control-plane", "NODES"}, 2},
		{"a cut short line must start the same", []string{"Scenario karpenter-drift...", "..."}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, msg := matchExample(tc.doc, out)
			if line != tc.line {
				t.Errorf("first differing line %d (%s), want %d", line, msg, tc.line)
			}
			if line >= 0 && msg == "" {
				t.Error("a difference without a message")
			}
		})
	}
}

func TestDocBlocksMarkers(t *testing.T) {
	blocks, err := docBlocks("text\n<!-- ladder rehearse -->\n```\nScenario\n```\n\n```sh\nmake test\n```\n  <!-- not checked: a lab -->\n  ```text\n  $ ladder lab up\n  ```\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 {
		t.Fatalf("%d blocks, want 3", len(blocks))
	}
	for i, want := range []struct {
		line        int
		marker      string
		body        string
		needsMarker bool
	}{
		{3, "ladder rehearse", "Scenario", true},
		{7, "", "make test", false},
		{11, "not checked: a lab", "$ ladder lab up", true},
	} {
		b := blocks[i]
		if b.line != want.line || b.marker != want.marker || strings.Join(b.body, "\n") != want.body || b.needsMarker() != want.needsMarker {
			t.Errorf("block %d: line %d, marker %q, body %q, needs a marker %v; want %+v", i, b.line, b.marker, b.body, b.needsMarker(), want)
		}
	}
	if _, err := docBlocks("```\nopen\n"); err == nil {
		t.Error("an unclosed block is not reported")
	}
}

func TestShellWords(t *testing.T) {
	got, err := shellWords(`ladder check -f shop.yaml --set 'a=b c' --values "x y.yaml"`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ladder", "check", "-f", "shop.yaml", "--set", "a=b c", "--values", "x y.yaml"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%q, want %q", got, want)
	}
	if _, err := shellWords(`ladder 'open`); err == nil {
		t.Error("an unclosed quote is not reported")
	}
}

// TestArchitectureMap holds docs/architecture.md to the tree: the packages
// it lists exist and every package of the tree is listed, and each function
// of "Where is X decided" is declared in the file named beside it. When it
// fails, the code moved: update the page.
func TestArchitectureMap(t *testing.T) {
	root := repositoryRoot(t)
	text, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	packages, decisions := architectureTables(string(text))
	if len(packages) == 0 || len(decisions) == 0 {
		t.Fatal("docs/architecture.md: no package table or no \"Where is X decided\" table")
	}

	tree, err := goPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packages {
		if !slices.Contains(tree, p) {
			t.Errorf("docs/architecture.md lists package %s, which the tree does not have: remove or rename it", p)
		}
	}
	for _, p := range tree {
		if !slices.Contains(packages, p) {
			t.Errorf("package %s is not in docs/architecture.md's package table: add a row saying what it decides", p)
		}
	}

	for _, d := range decisions {
		decls, err := funcDecls(filepath.Join(root, d.file))
		if err != nil {
			t.Errorf("docs/architecture.md, %q: %v", d.question, err)
			continue
		}
		if !slices.Contains(decls, d.function) {
			t.Errorf("docs/architecture.md, %q: %s declares no %s (it declares %s): update the row to where it is decided now",
				d.question, d.file, d.function, strings.Join(decls, ", "))
		}
	}
}

// TestDocsNameTestsThatExist: every Test or Benchmark function README.md
// and docs/*.md name in backquotes — the performance table's benchmarks, the
// tests that hold a claim — is declared in a _test.go file of the tree, so
// renaming one tells you to update the page that cites it.
func TestDocsNameTestsThatExist(t *testing.T) {
	root := repositoryRoot(t)
	declared := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil {
				declared[fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Z0-9][A-Za-z0-9_]*)`")
	cited := 0
	for _, f := range readDocs(t, root) {
		for i, line := range strings.Split(f.text, "\n") {
			for _, m := range named.FindAllStringSubmatch(line, -1) {
				cited++
				if !declared[m[1]] {
					t.Errorf("%s:%d names %s, which no _test.go file declares: update the page to the test's name now", f.rel, i+1, m[1])
				}
			}
		}
	}
	if cited == 0 {
		t.Fatal("the docs name no test or benchmark")
	}
}

// decision is a row of "Where is X decided".
type decision struct{ question, file, function string }

var (
	packageRow  = regexp.MustCompile("^\\| `([^`]+)` \\|")
	decisionRow = regexp.MustCompile("^\\| *(.*?) *\\| *`([^`]+)` *\\| *`([^`]+)` *\\|")
)

// architectureTables reads the package table (rows `| \`pkg\` | ... |`) and
// the decision table (rows `| question | \`file\` | \`function\` |`) of
// docs/architecture.md.
func architectureTables(text string) (packages []string, decisions []decision) {
	section := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimPrefix(line, "## ")
			continue
		}
		switch section {
		case "Packages":
			if m := packageRow.FindStringSubmatch(line); m != nil {
				packages = append(packages, m[1])
			}
		case "Where is X decided":
			if m := decisionRow.FindStringSubmatch(line); m != nil {
				decisions = append(decisions, decision{question: m[1], file: m[2], function: m[3]})
			}
		}
	}
	return packages, decisions
}

// goPackages lists the directories under cmd/ and internal/ holding non-test
// Go files, relative to root, testdata left out.
func goPackages(root string) ([]string, error) {
	var pkgs []string
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(pkgs, rel) {
				pkgs = append(pkgs, rel)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return pkgs, nil
}

// funcDecls parses a Go file and names its functions as the page writes
// them: `Name`, `Type.Name` for a value receiver, `(*Type).Name` for a
// pointer receiver.
func funcDecls(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			typ := fn.Recv.List[0].Type
			if idx, ok := typ.(*ast.IndexExpr); ok { // a generic receiver, T[K]
				typ = idx.X
			}
			switch r := typ.(type) {
			case *ast.StarExpr:
				if id, ok := r.X.(*ast.Ident); ok {
					name = fmt.Sprintf("(*%s).%s", id.Name, name)
				}
			case *ast.Ident:
				name = r.Name + "." + name
			}
		}
		names = append(names, name)
	}
	return names, nil
}

func TestFuncDeclsNamesReceivers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.go")
	src := "package x\n\ntype T struct{}\n\nfunc F() {}\nfunc (T) V() {}\nfunc (t *T) P() {}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := funcDecls(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"F", "T.V", "(*T).P"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestLadderCommands(t *testing.T) {
	for line, want := range map[string][]string{
		"ladder check -f ./manifests --target 1.32 -o sarif > ladder.sarif   # CI": {"ladder check -f ./manifests --target 1.32 -o sarif"},
		"helm template shop ./chart | ladder check -f - --target 1.32":             {"ladder check -f - --target 1.32"},
		"$ ladder inventory 2>/dev/null":                                           {"ladder inventory"},
		"kubectl get nodes":                                                        nil,
		"go run ./cmd/ladder rehearse":                                             nil,
	} {
		if got := ladderCommands(line); !slices.Equal(got, want) {
			t.Errorf("ladderCommands(%q) = %q, want %q", line, got, want)
		}
	}
	if err := parseCommandLine("ladder check --no-such-flag"); err == nil {
		t.Error("an unknown flag parses")
	}
	if err := parseCommandLine("ladder nothing"); err == nil {
		t.Error("an unknown command parses")
	}
}
