package render

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"text/template/parse"
)

// branchStep is one {{ if }} branch that encloses a piece of template text.
type branchStep struct {
	cond   string // the if's pipeline, as text/template/parse prints it
	pos    int    // byte offset of the if in the template
	inElse bool   // in the {{ else }} list
}

// textSpan is a run of literal text in a template and the branches that
// enclose it, outermost first.
type textSpan struct {
	start, end int
	chain      []branchStep
}

// templateBranches parses a template as Helm's engine does (Go's
// text/template parser; functions are not checked, so Helm's and Sprig's
// need not be known) and lists its text runs, in order, each with the
// {{ if }} branches that enclose it. Defined templates ({{ define }}) are
// walked too. A template that does not parse has no spans: its literals
// are then reported without a branch, and none is left out.
func templateBranches(name string, data []byte) []textSpan {
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck | parse.ParseComments
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(string(data), "", "", trees); err != nil {
		return nil
	}
	var spans []textSpan
	var walk func(n parse.Node, chain []branchStep)
	walkList := func(l *parse.ListNode, chain []branchStep) {
		if l == nil {
			return
		}
		for _, n := range l.Nodes {
			walk(n, chain)
		}
	}
	walk = func(n parse.Node, chain []branchStep) {
		switch n := n.(type) {
		case *parse.TextNode:
			spans = append(spans, textSpan{start: int(n.Pos), end: int(n.Pos) + len(n.Text), chain: chain})
		case *parse.IfNode:
			cond := n.Pipe.String()
			walkList(n.List, append(chain[:len(chain):len(chain)], branchStep{cond: cond, pos: int(n.Pos)}))
			walkList(n.ElseList, append(chain[:len(chain):len(chain)], branchStep{cond: cond, pos: int(n.Pos), inElse: true}))
		case *parse.RangeNode:
			walkList(n.List, chain)
			walkList(n.ElseList, chain)
		case *parse.WithNode:
			walkList(n.List, chain)
			walkList(n.ElseList, chain)
		case *parse.ListNode:
			walkList(n, chain)
		}
	}
	seen := map[*parse.Tree]bool{}
	for _, tr := range append([]*parse.Tree{t}, sortedTrees(trees)...) {
		if tr == nil || tr.Root == nil || seen[tr] {
			continue
		}
		seen[tr] = true
		walkList(tr.Root, nil)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	return spans
}

func sortedTrees(m map[string]*parse.Tree) []*parse.Tree {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*parse.Tree, 0, len(names))
	for _, n := range names {
		out = append(out, m[n])
	}
	return out
}

// branchesAt is the chain of branches enclosing the text at offset, or nil.
func branchesAt(spans []textSpan, offset int) []branchStep {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].end > offset })
	if i < len(spans) && spans[i].start <= offset {
		return spans[i].chain
	}
	return nil
}

// describeBranches says which branch encloses a literal — the innermost
// {{ if }}, and what its condition reads ("the {{ else }} branch of a
// .Capabilities check at line 2") — and whether the target takes every
// enclosing branch: taken is false when decide settles one of them against
// the literal's branch. A branch decide settles for the literal is said to
// be the one the target takes.
func describeBranches(data []byte, chain []branchStep, decide func(string) (bool, bool)) (desc string, taken bool) {
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		settled := false
		if decide != nil {
			if then, ok := decide(s.cond); ok {
				if then == s.inElse {
					return "", false
				}
				settled = true
			}
		}
		if i < len(chain)-1 {
			continue // only the innermost is described
		}
		what := "condition"
		switch capabilities, values := strings.Contains(s.cond, ".Capabilities"), strings.Contains(s.cond, ".Values"); {
		case capabilities && values:
			what = ".Capabilities and .Values check"
		case capabilities:
			what = ".Capabilities check"
		case values:
			what = ".Values check"
		}
		branch := "{{ if }}"
		if s.inElse {
			branch = "{{ else }}"
		}
		taken := ""
		if settled {
			taken = " the target takes"
		}
		desc = fmt.Sprintf("the %s branch%s of a %s at line %d", branch, taken, what, 1+bytes.Count(data[:min(s.pos, len(data))], []byte("\n")))
	}
	return desc, true
}
