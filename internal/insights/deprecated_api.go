package insights

import "fmt"

func init() { Register(deprecatedAPI{}) }

// deprecatedAPI finds objects written with an API version that is
// deprecated at the target but still served: a later hop breaks them.
// Always WARNING.
type deprecatedAPI struct{}

func (deprecatedAPI) Info() Info {
	return Info{
		ID:    "deprecated-api",
		Title: "API versions deprecated at the target, removed later",
		Help: "An apiVersion that is deprecated at the target still works, and the API server answers with a warning; " +
			"a later upgrade removes it. WARNING, with the release that removes it.",
		Needs: NeedsObjects,
	}
}

func (deprecatedAPI) Run(in *Input) []Finding {
	var out []Finding
	advisor := newMigrateAdvisor(in)
	for _, o := range in.Objects {
		for _, av := range apiVersionsOf(o) {
			if sev, msg, rec, ok := customResourceAPI(in, o, av); ok {
				if sev == Warning {
					out = append(out, o.Finding(Warning, "apiVersion", msg, rec))
				}
				continue
			}
			e, ok := in.APIs.Lookup(av, o.Kind)
			if !ok || !e.DeprecatedBy(in.Target) || e.RemovedBy(in.Target) {
				continue
			}
			msg := fmt.Sprintf("%s %s is deprecated since Kubernetes %s", av, o.Kind, e.Deprecated)
			if e.Removed.IsZero() {
				msg += "; no removal is scheduled yet"
			} else {
				msg += fmt.Sprintf(" and removed in %s, %s after the target %s", e.Removed,
					plural(e.Removed.Sub(in.Target), "minor"), in.Target)
			}
			if av != o.APIVersion {
				msg += fmt.Sprintf(" — the object was last written with %s", av)
			}
			rec := advisor.advice(e)
			if advice, ok := emptyV1beta1BudgetAdvice(in, o); ok {
				rec = advice
			}
			out = append(out, o.Finding(Warning, "apiVersion", msg, rec))
		}
	}
	return out
}
