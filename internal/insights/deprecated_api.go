package insights

import (
	"fmt"

	"github.com/ladder-eks/ladder/internal/insights/deprecations"
)

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
	return apiVersionFindings(in, Warning, func(o *Object, av string, e deprecations.Entry) (string, string, bool) {
		if !e.DeprecatedBy(in.Target) || e.RemovedBy(in.Target) {
			return "", "", false
		}
		msg := fmt.Sprintf("%s %s is deprecated since Kubernetes %s", av, o.Kind, e.Deprecated)
		if e.Removed.IsZero() {
			msg += "; no removal is scheduled yet"
		} else {
			msg += fmt.Sprintf(" and removed in %s, %s after the target %s", e.Removed,
				plural(e.Removed.Sub(in.Target), "minor"), in.Target)
		}
		return msg, "", true
	})
}
