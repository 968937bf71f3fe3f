package render

import (
	"fmt"
	"path/filepath"
	"sort"
)

// Doc is one rendered object and the source it came from.
type Doc struct {
	File string // source file, joined onto the rendered directory as given
	Line int    // 1-based line of the object's document in File
	Body []byte // the object as YAML, one document, no "---"
}

// Problem is a finding about the render itself, reported at File:Line.
type Problem struct {
	File    string
	Line    int
	Message string // what went wrong
	Fix     string // what to do about it
	// Warning marks a Problem the render went on after (what it left
	// out), rather than one that stopped it.
	Warning bool
}

func (p Problem) String() string {
	s := fmt.Sprintf("%s:%d: %s", p.File, max(p.Line, 1), p.Message)
	if p.Fix != "" {
		s += "; " + p.Fix
	}
	return s
}

// Literal is an apiVersion/kind pair written literally in a template source.
type Literal struct {
	File       string
	Line       int // line of the apiVersion
	APIVersion string
	Kind       string
	// Branch says which {{ if }} branches of the template enclose the
	// literal, innermost first ("the {{ else }} branch of {{ if
	// semverCompare … }} at line 2"); empty when none does.
	Branch string
}

// Result is what a render produced; see the package documentation.
type Result struct {
	Docs     []Doc
	Consumed []string
	Problems []Problem
	Literals []Literal
}

// consumedSet collects the files a render read, as sorted unique paths.
type consumedSet map[string]struct{}

func (c consumedSet) add(path string) { c[filepath.Clean(path)] = struct{}{} }

func (c consumedSet) sorted() []string {
	out := make([]string, 0, len(c))
	for p := range c {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
