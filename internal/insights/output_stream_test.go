package insights

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// referenceText is WriteText as a tabwriter holding the whole table
// writes it, each value escaped for the terminal (termtext.Escape): the
// bytes the streamed writer must reproduce.
func referenceText(r *Report, o OutputOptions) string {
	var w bytes.Buffer
	var fs []Finding
	for _, f := range r.Findings {
		if f.Severity != Passing || o.ShowPassing {
			fs = append(fs, f)
		}
	}
	multi := len(r.Hops()) > 1
	tw := tabwriter.NewWriter(&w, 0, 0, 2, ' ', 0)
	if len(fs) > 0 {
		cols := []string{"STATUS", "CHECK", "OBJECT", "SOURCE", "MESSAGE"}
		if multi {
			cols = append([]string{"HOP"}, cols...)
		}
		if o.Wide {
			cols = append(cols, "RECOMMENDATION")
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
		for _, f := range fs {
			row := []string{string(f.Severity), f.Check, dash(termtext.Escape(f.Object.String())), dash(termtext.Escape(f.Object.Source)), termtext.Escape(f.Message)}
			if multi {
				row = append([]string{dash(termtext.Escape(f.Hop))}, row...)
			}
			if o.Wide {
				row = append(row, dash(termtext.Escape(f.Recommendation)))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
	}
	if !o.Wide {
		var recs []string
		for _, f := range fs {
			if f.Severity != Passing && f.Recommendation != "" {
				obj := f.Object.String()
				if obj == "" {
					obj = f.Object.Source
				}
				recs = append(recs, fmt.Sprintf("  %s %s: %s", f.Check, termtext.Escape(obj), termtext.Escape(f.Recommendation)))
			}
		}
		if len(recs) > 0 {
			fmt.Fprintf(&w, "\nRecommendations:\n%s\n", strings.Join(recs, "\n"))
		}
	}
	if len(fs) > 0 {
		fmt.Fprintln(&w)
	}
	fmt.Fprintln(&w, r.summaryLine())
	if len(r.Skipped) > 0 {
		var parts []string
		for _, s := range r.Skipped {
			parts = append(parts, fmt.Sprintf("%s (needs %s)", s.Check, s.Needs))
		}
		fmt.Fprintf(&w, "Not run without a cluster or scenario: %s.\n", strings.Join(parts, ", "))
	}
	return w.String()
}

// referenceJSON is WriteJSON as one encoding of the whole report.
func referenceJSON(r *Report, o OutputOptions) string {
	var w bytes.Buffer
	enc := json.NewEncoder(&w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	rep := jsonReport{Target: r.Target.String(), Findings: []Finding{}, Summary: r.Summary()}
	for f := range r.shown(o) {
		rep.Findings = append(rep.Findings, *f)
	}
	if r.FilesSkipped.Total() > 0 {
		rep.Skipped = &r.FilesSkipped
	}
	enc.Encode(rep)
	return w.String()
}

// TestStreamedOutputIsTheWholeReports: the text and JSON writers, which
// never hold the whole output, write the bytes a tabwriter and one JSON
// encoding of the whole report write — for one hop and several, every
// option, no findings, names in other scripts and a name with a tab.
func TestStreamedOutputIsTheWholeReports(t *testing.T) {
	corpus := string(benchCorpus(400)) + "---\n" + strings.ReplaceAll(deployment("ünïcode", "café-日本", 1, ""), "public.ecr", "x")
	tab := corpus + "---\n" + deployment("shop", `"tab\there"`, 1, "")
	for _, tc := range []struct {
		name, current, target, manifests string
	}{
		{"one hop", "", "1.32", corpus},
		{"several hops", "1.29", "1.32", corpus},
		{"a name with a tab", "", "1.32", tab},
		{"no findings", "", "1.32", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"},
	} {
		in := input(t, tc.current, tc.target, tc.manifests)
		rep := Run(in, nil)
		rep.FilesSkipped = SkippedFiles{NotManifests: 3}
		for _, o := range []OutputOptions{{}, {Wide: true}, {ShowPassing: true}, {ShowPassing: true, Wide: true}} {
			var text, js bytes.Buffer
			if err := rep.WriteText(&text, o); err != nil {
				t.Fatal(err)
			}
			if want := referenceText(rep, o); text.String() != want {
				t.Errorf("%s %+v: text differs:\n%s\nwant:\n%s", tc.name, o, text.String(), want)
			}
			if err := rep.WriteJSON(&js, o); err != nil {
				t.Fatal(err)
			}
			if want := referenceJSON(rep, o); js.String() != want {
				t.Errorf("%s %+v: JSON differs:\n%s\nwant:\n%s", tc.name, o, js.String(), want)
			}
		}
	}
}
