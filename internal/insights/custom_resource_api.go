package insights

import (
	"fmt"

	"github.com/ladder-eks/ladder/internal/insights/deprecations"
)

// customResourceAPI grades an object written in a custom-resource API
// version that its component (Karpenter, cert-manager, the AWS Load
// Balancer Controller, or one an --additional-versions file names)
// deprecates or stops serving. Removal there is by the component's
// version, so the severity depends on what Ladder knows of it:
//   - the version the cluster runs is known (target-versions of an
//     --additional-versions file) and no longer serves it: ERROR, reported
//     by removed-api;
//   - it is known and deprecates it, or it is unknown: WARNING, reported
//     by deprecated-api — with an unknown version the object works only
//     while the component stays below the release that removes it.
//
// ok is false when the apiVersion is not in the component table or the
// known version does not deprecate it.
func customResourceAPI(in *Input, o *Object, av string) (sev Severity, msg, rec string, ok bool) {
	e, found := in.APIs.LookupComponent(av, o.Kind)
	if !found {
		return "", "", "", false
	}
	comp := e.ComponentName()
	v, raw, known := in.APIs.ComponentVersion(e.Component)
	switch {
	case known && e.RemovedBy(v):
		sev = Error
		msg = fmt.Sprintf("%s %s is no longer served from %s %s", av, o.Kind, comp, e.Removed)
		if e.Deprecated != e.Removed {
			msg += fmt.Sprintf(" (deprecated in %s)", e.Deprecated)
		}
		msg += fmt.Sprintf("; the cluster runs %s %s (--additional-versions target-versions)", comp, raw)
	case known && e.DeprecatedBy(v):
		sev = Warning
		msg = fmt.Sprintf("%s %s is deprecated since %s %s", av, o.Kind, comp, e.Deprecated)
		if e.Removed != "" {
			msg += fmt.Sprintf(" and no longer served from %s %s; the cluster runs %s %s", comp, e.Removed, comp, raw)
		} else {
			msg += "; no removal is scheduled"
		}
	case known:
		return "", "", "", false
	case e.Removed != "":
		sev = Warning
		msg = fmt.Sprintf("%s %s no longer serves %s %s: it is served only by %s < %s", comp, e.Removed, av, o.Kind, comp, e.Removed)
		if e.Deprecated != e.Removed {
			msg += fmt.Sprintf(" (deprecated in %s)", e.Deprecated)
		}
		msg += fmt.Sprintf(", and Ladder does not know the %s version this cluster runs", comp)
	default:
		sev = Warning
		msg = fmt.Sprintf("%s %s is deprecated since %s %s; no removal is scheduled", av, o.Kind, comp, e.Deprecated)
	}
	if av != o.APIVersion {
		msg += fmt.Sprintf(" — the object was last written with %s", av)
	}
	return sev, msg, componentAdvice(e, comp, known), true
}

// componentAdvice is the recommendation for a custom resource's API.
func componentAdvice(e deprecations.ComponentEntry, comp string, known bool) string {
	var s string
	if e.ReplacementAPIVersion != "" {
		s = fmt.Sprintf("Migrate to %s: change apiVersion to %s", e.Replacement(), e.ReplacementAPIVersion)
		if e.ReplacementKind != e.Kind {
			s += fmt.Sprintf(" and kind to %s", e.ReplacementKind)
		}
		s += fmt.Sprintf(", following %s's upgrade guide", comp)
	} else {
		s = fmt.Sprintf("%s %s has no replacement: remove the object", e.APIVersion, e.Kind)
	}
	if e.Removed != "" {
		s += fmt.Sprintf(", before %s is upgraded to %s or later", comp, e.Removed)
	}
	if !known && e.Removed != "" {
		s += fmt.Sprintf(" (to grade this against the cluster, give its %s version in the target-versions of an --additional-versions file)", comp)
	}
	return s + "."
}
