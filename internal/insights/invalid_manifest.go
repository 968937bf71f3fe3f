package insights

func init() { Register(invalidManifest{}) }

// invalidManifest reports the documents and fields the sources could not
// read: malformed YAML (ERROR: the document was not checked), a document
// without apiVersion or kind (ERROR), a value of the wrong type in a kind
// checks read (ERROR: only its apiVersion was checked), and unknown or
// duplicate fields (WARNING: the API server's strict field validation
// rejects them, but the rest was checked).
type invalidManifest struct{}

func (invalidManifest) Info() Info {
	return Info{
		ID:    "invalid-manifest",
		Title: "Documents Ladder could not read",
		Help: "A document that does not parse was not checked, so it may hide removed APIs or blocking budgets. " +
			"ERROR when the document, or the kind's fields, could not be read, or when the API server refuses a workload (a selector that does not select its template's labels); WARNING for unknown or duplicate fields, which the API server's strict field validation rejects.",
		Needs: NeedsObjects,
	}
}

func (invalidManifest) Run(in *Input) []Finding {
	var out []Finding
	for _, p := range in.Problems {
		msg := p.Message
		if p.Field != "" {
			msg = p.Field + ": " + msg
		}
		out = append(out, Finding{Severity: p.Severity, Object: p.Object, Field: p.Field,
			Message: msg, Recommendation: p.Fix, source: p.Source, doc: docText{held: p.doc}})
		if out[len(out)-1].Object.Source == "" {
			out[len(out)-1].Object.Source = p.Source.String()
		}
	}
	return out
}
