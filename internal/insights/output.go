package insights

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strings"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// OutputOptions choose what the writers show.
type OutputOptions struct {
	// ShowPassing includes the PASSING finding of each check that found nothing.
	ShowPassing bool
	// Wide puts the recommendation in a table column (text only) instead of
	// a section below the table.
	Wide bool
}

// shown yields the findings the options show, in report order, without
// copying them: a report of a large tree holds hundreds of thousands.
func (r *Report) shown(o OutputOptions) iter.Seq[*Finding] {
	return func(yield func(*Finding) bool) {
		for i := range r.Findings {
			if f := &r.Findings[i]; f.Severity != Passing || o.ShowPassing {
				if !yield(f) {
					return
				}
			}
		}
	}
}

// WriteText writes the findings as a table, like EKS Upgrade Insights and
// kubectl print them: STATUS CHECK OBJECT SOURCE MESSAGE (a HOP column when
// the report covers several hops), then the recommendations and a summary.
// The table is written as text/tabwriter aligns it, in two passes over the
// findings (the column widths, then the rows) rather than through a
// tabwriter, which would hold the whole table.
func (r *Report) WriteText(w io.Writer, o OutputOptions) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := r.writeText(bw, o); err != nil {
		return err
	}
	return bw.Flush()
}

func (r *Report) writeText(w *bufio.Writer, o OutputOptions) error {
	multi := len(r.Hops()) > 1
	cols := []string{"STATUS", "CHECK", "OBJECT", "SOURCE", "MESSAGE"}
	if multi {
		cols = append([]string{"HOP"}, cols...)
	}
	if o.Wide {
		cols = append(cols, "RECOMMENDATION")
	}
	// Every cell is escaped (termtext): names, sources and messages hold
	// what manifests and clusters wrote.
	row := func(f *Finding) []string {
		row := []string{string(f.Severity), f.Check, dash(termtext.Escape(f.Object.String())), dash(termtext.Escape(f.Object.Source)), termtext.Escape(f.Message)}
		if multi {
			row = append([]string{dash(termtext.Escape(f.Hop))}, row...)
		}
		if o.Wide {
			row = append(row, dash(termtext.Escape(f.Recommendation)))
		}
		return row
	}
	if r.CurrentSource != "" {
		// Not the API server's own version: the reader should know why
		// the kubelets are judged against another.
		termtext.Fprintf(w, "Control plane %s (%s).\n\n", r.Current, r.CurrentSource)
	}
	t := newTable(cols)
	rows := 0
	for f := range r.shown(o) {
		t.measure(row(f))
		rows++
	}
	if rows > 0 {
		if err := t.write(w, func(yield func([]string) bool) {
			for f := range r.shown(o) {
				if !yield(row(f)) {
					return
				}
			}
		}); err != nil {
			return err
		}
	}
	if !o.Wide {
		first := true
		for f := range r.shown(o) {
			if f.Severity == Passing || f.Recommendation == "" {
				continue
			}
			obj := f.Object.String()
			if obj == "" {
				obj = f.Object.Source
			}
			if first {
				w.WriteString("\nRecommendations:\n")
			} else {
				w.WriteString("\n")
			}
			first = false
			termtext.Fprintf(w, "  %s %s: %s", f.Check, obj, f.Recommendation)
		}
		if !first {
			w.WriteString("\n")
		}
	}
	if rows > 0 {
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintln(w, termtext.Escape(r.summaryLine()))
	if err == nil && len(r.Skipped) > 0 {
		var parts []string
		for _, s := range r.Skipped {
			parts = append(parts, fmt.Sprintf("%s (needs %s)", s.Check, s.Needs))
		}
		_, err = termtext.Fprintf(w, "Not run without a cluster or scenario: %s.\n", strings.Join(parts, ", "))
	}
	return err
}

func (r *Report) summaryLine() string {
	s := r.Summary()
	target := "Target " + r.Target.String()
	if !r.Current.IsZero() {
		target = fmt.Sprintf("Upgrade %s → %s", r.Current, r.Target)
	}
	passed := 0
	for _, f := range r.Findings {
		if f.Severity == Passing {
			passed++
		}
	}
	line := fmt.Sprintf("%s: %d ERROR, %d WARNING in %s; %s passed",
		target, s[Error], s[Warning], plural(r.Objects, "object"), plural(passed, "check"))
	if sk := r.FilesSkipped; sk.Total() > 0 {
		// "412 files skipped: not Kubernetes manifests", or by reason when
		// there are several.
		reasons := []struct {
			n         int
			one, many string
		}{
			{sk.NotManifests, "not a Kubernetes manifest", "not Kubernetes manifests"},
			{sk.Templates, "an unrendered Helm/Go template", "unrendered Helm/Go templates"},
			{sk.Special, "a special file (pipe, socket, device)", "special files (pipes, sockets, devices)"},
		}
		var parts []string
		for _, r := range reasons {
			what := r.many
			if r.n == 1 {
				what = r.one
			}
			switch {
			case r.n == 0:
			case r.n == sk.Total():
				parts = append(parts, what)
			case r.n == 1:
				parts = append(parts, "1 "+strings.TrimPrefix(strings.TrimPrefix(what, "a "), "an "))
			default:
				parts = append(parts, fmt.Sprintf("%d %s", r.n, what))
			}
		}
		line += fmt.Sprintf("; %s skipped: %s", plural(sk.Total(), "file"), strings.Join(parts, ", "))
	}
	return line + "."
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// jsonReport is the -o json document.
type jsonReport struct {
	// Current and CurrentSource only when the version did not come from
	// the scenario or the API server (Report.CurrentSource).
	Current       string           `json:"current,omitempty"`
	CurrentSource string           `json:"currentSource,omitempty"`
	Target        string           `json:"target"`
	Findings      []Finding        `json:"findings"`
	Summary       map[Severity]int `json:"summary"`
	Skipped       *SkippedFiles    `json:"skipped,omitempty"`
}

// WriteJSON writes {"target", "findings": [...], "summary": {"ERROR",
// "WARNING"}}, and "skipped": {"notManifests", "templates", "specialFiles"}
// when files were skipped. Findings are encoded one at a time, so the
// document is never whole in memory; the bytes are encoding/json's for the
// whole report, indented.
func (r *Report) WriteJSON(w io.Writer, o OutputOptions) error {
	rep := jsonReport{Target: r.Target.String(), Findings: []Finding{}, Summary: r.Summary()}
	if r.CurrentSource != "" {
		rep.Current, rep.CurrentSource = r.Current.String(), r.CurrentSource
	}
	if r.FilesSkipped.Total() > 0 {
		rep.Skipped = &r.FilesSkipped
	}
	return writeJSONList(w, rep, `"findings": []`, "  ", r.shown(o))
}

// writeJSONList writes doc, indented by two spaces, with the items of one
// of its lists encoded one by one: empty is how the list, empty, encodes in
// doc (`"findings": []`), and indent is the list's own indentation.
func writeJSONList[T any](w io.Writer, doc any, empty, indent string, items iter.Seq[T]) error {
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	before, after, ok := bytes.Cut(head.Bytes(), []byte(empty))
	if !ok {
		return fmt.Errorf("insights: %s is not in the document", empty)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(before)
	bw.WriteString(strings.TrimSuffix(empty, "]"))
	var item bytes.Buffer
	enc = json.NewEncoder(&item)
	enc.SetIndent(indent+"  ", "  ")
	enc.SetEscapeHTML(false)
	n := 0
	for v := range items {
		item.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n" + indent + "  ")
		bw.Write(bytes.TrimSuffix(item.Bytes(), []byte("\n")))
		n++
	}
	if n > 0 {
		bw.WriteString("\n" + indent)
	}
	bw.WriteByte(']')
	bw.Write(after)
	return bw.Flush()
}

// SARIF 2.1.0, the subset code scanning reads.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Version        string      `json:"version,omitempty"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string       `json:"id"`
		Name             string       `json:"name"`
		ShortDescription sarifText    `json:"shortDescription"`
		FullDescription  sarifText    `json:"fullDescription"`
		HelpURI          string       `json:"helpUri"`
		Help             sarifText    `json:"help"`
		Properties       sarifRuleTag `json:"properties"`
	}
	sarifRuleTag struct {
		Tags []string `json:"tags"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID     string          `json:"ruleId"`
		RuleIndex  int             `json:"ruleIndex"`
		Kind       string          `json:"kind,omitempty"`
		Level      string          `json:"level"`
		Message    sarifText       `json:"message"`
		Locations  []sarifLocation `json:"locations,omitempty"`
		Properties map[string]any  `json:"properties,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
		LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
	sarifLogical struct {
		Name               string `json:"name,omitempty"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
)

// DocsURL is where each check is documented; a rule's helpUri is DocsURL#id.
const DocsURL = "https://github.com/ladder-eks/ladder/blob/main/docs/check.md"

// WriteSARIF writes a SARIF 2.1.0 log for code scanning: one rule per
// check, one result per finding, located at the file and line of the
// finding's field (or of its object) for manifest sources.
func (r *Report) WriteSARIF(w io.Writer, o OutputOptions, toolVersion string) error {
	checks := Checks()
	index := map[string]int{}
	rules := make([]sarifRule, 0, len(checks))
	for i, c := range checks {
		info := c.Info()
		index[info.ID] = i
		rules = append(rules, sarifRule{ID: info.ID, Name: ruleName(info.ID),
			ShortDescription: sarifText{info.Title}, FullDescription: sarifText{info.Help},
			HelpURI: DocsURL + "#" + info.ID, Help: sarifText{info.Help},
			Properties: sarifRuleTag{Tags: []string{"kubernetes", "upgrade"}}})
	}
	var files docFiles
	results := func(yield func(sarifResult) bool) {
		for f := range r.shown(o) {
			res := sarifResult{RuleID: f.Check, RuleIndex: index[f.Check], Message: sarifText{f.Message}}
			if f.Recommendation != "" {
				res.Message.Text += " Recommendation: " + f.Recommendation
			}
			switch f.Severity {
			case Error:
				res.Level = "error"
			case Warning:
				res.Level = "warning"
			default:
				res.Kind, res.Level = "pass", "none"
			}
			if f.Hop != "" {
				res.Properties = map[string]any{"hop": f.Hop}
			}
			var loc sarifLocation
			if file, line := f.location(&files); f.source.IsFile() {
				loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: fileURI(file)}}
				if line > 0 {
					loc.PhysicalLocation.Region = &sarifRegion{StartLine: line}
				}
			}
			if name := f.Object.String(); name != "" {
				loc.LogicalLocations = []sarifLogical{{Name: f.Object.Name, FullyQualifiedName: name, Kind: "resource"}}
			}
			if loc.PhysicalLocation != nil || loc.LogicalLocations != nil {
				res.Locations = []sarifLocation{loc}
			}
			if !yield(res) {
				return
			}
		}
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:    sarifTool{Driver: sarifDriver{Name: "ladder", InformationURI: "https://github.com/ladder-eks/ladder", Version: toolVersion, Rules: rules}},
			Results: []sarifResult{},
		}},
	}
	return writeJSONList(w, log, `"results": []`, "      ", results)
}

// ruleName turns "removed-api" into "RemovedApi", SARIF's rule name style.
func ruleName(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// fileURI makes a SARIF artifact URI: relative paths stay relative (to the
// repository root code scanning resolves them against), with forward slashes.
func fileURI(path string) string {
	p := filepath.ToSlash(filepath.Clean(path))
	if filepath.IsAbs(path) {
		return "file://" + p
	}
	return strings.TrimPrefix(p, "./")
}
