package insights

import (
	"fmt"

	"github.com/ladder-eks/ladder/internal/insights/deprecations"
)

func init() { Register(removedAPI{}) }

// removedAPI finds objects written with an API version that the target no
// longer serves: kubectl apply fails, Helm upgrades fail, and controllers
// that still use it break. Always ERROR.
type removedAPI struct{}

func (removedAPI) Info() Info {
	return Info{
		ID:    "removed-api",
		Title: "API versions removed at or before the target",
		Help: "An object written with an apiVersion the target no longer serves cannot be applied after the upgrade (kubectl and Helm fail), " +
			"and tools that still request it break. Always ERROR. The table (internal/insights/deprecations) is generated from k8s.io/api's lifecycle " +
			"methods and completed from the Kubernetes Deprecated API Migration Guide.",
		Needs: NeedsObjects,
	}
}

func (removedAPI) Run(in *Input) []Finding {
	first := in.FirstHop()
	return apiVersionFindings(in, Error, func(o *Object, av string, e deprecations.Entry) (string, string, bool) {
		if !e.RemovedBy(in.Target) {
			return "", "", false
		}
		hop := e.Removed
		if hop.Less(first) {
			hop = first
		}
		msg := fmt.Sprintf("%s %s is no longer served from Kubernetes %s", av, o.Kind, e.Removed)
		if !e.Deprecated.IsZero() {
			msg += fmt.Sprintf(" (deprecated in %s)", e.Deprecated)
		}
		switch {
		case in.Current.IsZero():
			msg += fmt.Sprintf("; the target %s does not serve it", in.Target)
		case !in.Current.Less(e.Removed):
			msg += fmt.Sprintf("; the cluster, at %s, already does not serve it", in.Current)
		default:
			msg += fmt.Sprintf("; the upgrade to %s removes it", hop)
		}
		return msg, hop.String(), true
	})
}

// apiVersionFindings is the walk removed-api and deprecated-api share: every
// apiVersion each object is or was last written with. A custom resource's
// version is judged by customResourceAPI and kept at severity sev; a built-in
// one in the table is described by describe, which says whether it applies
// and the hop that breaks it (named on the finding when the plan has several).
func apiVersionFindings(in *Input, sev Severity, describe func(o *Object, av string, e deprecations.Entry) (msg, hop string, ok bool)) []Finding {
	var out []Finding
	advisor := newMigrateAdvisor(in)
	for _, o := range in.Objects {
		for _, av := range apiVersionsOf(o) {
			if crSev, msg, rec, ok := customResourceAPI(in, o, av); ok {
				if crSev == sev {
					out = append(out, o.Finding(sev, "apiVersion", msg, rec))
				}
				continue
			}
			e, ok := in.APIs.Lookup(av, o.Kind)
			if !ok {
				continue
			}
			msg, hop, ok := describe(o, av, e)
			if !ok {
				continue
			}
			if av != o.APIVersion {
				msg += fmt.Sprintf(" — the object was last written with %s", av)
			}
			rec := advisor.advice(e)
			if advice, ok := emptyV1beta1BudgetAdvice(in, o); ok {
				rec = advice
			}
			f := o.Finding(sev, "apiVersion", msg, rec)
			if hop != "" && in.MultiHop() {
				f.Hop = hop
			}
			out = append(out, f)
		}
	}
	return out
}

// apiVersionsOf lists the apiVersion an object is written in and the ones
// it was last written with (live objects), without repeats.
func apiVersionsOf(o *Object) []string {
	if len(o.WrittenAs) == 0 {
		return []string{o.APIVersion}
	}
	out := []string{o.APIVersion}
	for _, v := range o.WrittenAs {
		dup := false
		for _, seen := range out {
			dup = dup || seen == v
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

// migrateAdvisor words migrateAdvice once per table entry: a repository
// holds thousands of objects of one removed kind, and each finding would
// otherwise hold its own copy of the same recommendation.
type migrateAdvisor struct {
	in    *Input
	words map[deprecations.Entry]string
}

func newMigrateAdvisor(in *Input) *migrateAdvisor {
	return &migrateAdvisor{in: in, words: map[deprecations.Entry]string{}}
}

func (a *migrateAdvisor) advice(e deprecations.Entry) string {
	s, ok := a.words[e]
	if !ok {
		s = migrateAdvice(e, a.in)
		a.words[e] = s
	}
	return s
}

// migrateAdvice is the recommendation for a deprecated or removed API at
// the target: the newest version of the kind (or of its replacement) the
// target serves (deprecations.ReplacementAt), so the advice is never a
// version the target no longer, or does not yet, serve. When the cluster
// does not serve that version yet, it says what to use until the upgrade.
func migrateAdvice(e deprecations.Entry, in *Input) string {
	var s string
	av, kind, introduced, ok := deprecations.ReplacementAt(e, in.Target)
	switch {
	case ok:
		s = fmt.Sprintf("Migrate to %s %s: change apiVersion to %s", av, kind, av)
		if kind != e.Kind {
			s += fmt.Sprintf(" and kind to %s", kind)
		}
		s += " (kubectl convert helps), then re-apply; update the Helm chart or tool that renders it"
		if !in.Current.IsZero() && in.Current.Less(introduced) {
			s += fmt.Sprintf("; the cluster, at %s, serves %s only from %s", in.Current, av, introduced)
			if cav, ckind, _, cok := deprecations.ReplacementAt(e, in.Current); cok && cav != av {
				s += fmt.Sprintf(": move to %s %s before the upgrade and to %s after it", cav, ckind, av)
			} else {
				s += ": change it once the control plane runs " + introduced.String()
			}
		}
	case e.Replacement() != "":
		s = fmt.Sprintf("Kubernetes %s serves no version of %s %s or of its replacement %s: remove the object and its users", in.Target, e.APIVersion, e.Kind, e.Replacement())
	default:
		s = fmt.Sprintf("%s %s has no replacement: remove the object and its users", e.APIVersion, e.Kind)
	}
	if e.Note != "" {
		s += "; " + e.Note
	}
	return s + "."
}
