package deprecations

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// groupKind is a kind in an API group, across its versions.
type groupKind struct{ group, kind string }

func groupKindOf(apiVersion, kind string) groupKind {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return groupKind{gv.Group, kind}
}

// servedVersion is the span of minors an API version is served in.
type servedVersion struct {
	apiVersion, kind string
	introduced       kubeversion.Minor // zero: unknown, never recommended
	removed          kubeversion.Minor // zero: still served
}

func (s servedVersion) servedAt(v kubeversion.Minor) bool {
	return !s.introduced.IsZero() && !v.Less(s.introduced) && (s.removed.IsZero() || v.Less(s.removed))
}

// versionsOf lists, per group and kind, every version the table knows: its
// rows, apis_served.csv, and the replacements neither lists, taken to be
// served from the release that deprecated what they replace (an API
// version may not be deprecated before a version at least as stable is
// served: Kubernetes Deprecation Policy, rule #4a).
func versionsOf() map[groupKind][]servedVersion {
	known := map[key]servedVersion{}
	for k, e := range table {
		sv := servedVersion{apiVersion: k.apiVersion, kind: k.kind, introduced: e.Introduced, removed: e.Removed}
		if v, ok := served[k]; ok {
			sv.introduced = v
		}
		known[k] = sv
	}
	for k, v := range served {
		if _, ok := known[k]; !ok {
			known[k] = servedVersion{apiVersion: k.apiVersion, kind: k.kind, introduced: v}
		}
	}
	for _, e := range table {
		if e.ReplacementAPIVersion == "" || e.Deprecated.IsZero() {
			continue
		}
		k := key{e.ReplacementAPIVersion, e.ReplacementKind}
		sv, ok := known[k]
		if !ok {
			sv = servedVersion{apiVersion: k.apiVersion, kind: k.kind}
		}
		if _, listed := served[k]; !listed && (sv.introduced.IsZero() || e.Deprecated.Less(sv.introduced)) {
			sv.introduced = e.Deprecated
		}
		known[k] = sv
	}
	out := map[groupKind][]servedVersion{}
	for _, sv := range known {
		gk := groupKindOf(sv.apiVersion, sv.kind)
		out[gk] = append(out[gk], sv)
	}
	return out
}

// family is the kind of e and every kind it is replaced by, transitively
// (extensions/v1beta1 ThirdPartyResource → apiextensions.k8s.io
// CustomResourceDefinition; extensions/v1beta1 Ingress → networking.k8s.io
// Ingress).
func family(e Entry) map[groupKind]bool {
	fam := map[groupKind]bool{groupKindOf(e.APIVersion, e.Kind): true}
	for grown := true; grown; {
		grown = false
		for _, r := range table {
			if r.ReplacementAPIVersion == "" || !fam[groupKindOf(r.APIVersion, r.Kind)] {
				continue
			}
			if gk := groupKindOf(r.ReplacementAPIVersion, r.ReplacementKind); !fam[gk] {
				fam[gk], grown = true, true
			}
		}
	}
	return fam
}

// ReplacementAt is what an object written in e's apiVersion should move to
// for Kubernetes minor target: the newest version of its kind, or of the
// kind that replaces it, that target serves and that was introduced no
// earlier than e's own (a successor, never autoscaling/v1 for an
// autoscaling/v2beta1 HorizontalPodAutoscaler) — flowcontrol.apiserver.k8s.io
// v1beta2 FlowSchema moves to v1beta3 at 1.28 and to v1 from 1.29, where
// its recorded replacement (v1beta3) is gone by 1.32. Newest is by
// Kubernetes version priority (v1 > v1beta2 > v1beta1 > v1alpha1,
// k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings); between
// groups serving the same version, e's recorded replacement's group wins.
// ok is false when target serves no such version (PodSecurityPolicy from
// 1.25): the entry's note names the successor.
func ReplacementAt(e Entry, target kubeversion.Minor) (apiVersion, kind string, introduced kubeversion.Minor, ok bool) {
	k := replacementKey{e.APIVersion, e.Kind, e.ReplacementAPIVersion, e.ReplacementKind, target}
	replacementMu.Lock()
	r, cached := replacementCache[k]
	replacementMu.Unlock()
	if !cached {
		r.apiVersion, r.kind, r.introduced, r.ok = replacementAt(e, target)
		replacementMu.Lock()
		replacementCache[k] = r
		replacementMu.Unlock()
	}
	return r.apiVersion, r.kind, r.introduced, r.ok
}

// The answers are pure functions of the entry's identity and replacement
// and the target, and every finding of a kind asks the same question:
// remember them.
type (
	replacementKey struct {
		apiVersion, kind, replacementAPIVersion, replacementKind string
		target                                                   kubeversion.Minor
	}
	replacementResult struct {
		apiVersion, kind string
		introduced       kubeversion.Minor
		ok               bool
	}
)

var (
	replacementMu    sync.Mutex
	replacementCache = map[replacementKey]replacementResult{}
)

func replacementAt(e Entry, target kubeversion.Minor) (apiVersion, kind string, introduced kubeversion.Minor, ok bool) {
	loadOnce.Do(load)
	versionsOnce.Do(func() { versions = versionsOf() })
	replacementGroup := ""
	if e.ReplacementAPIVersion != "" {
		replacementGroup = groupKindOf(e.ReplacementAPIVersion, e.ReplacementKind).group
	}
	var own kubeversion.Minor // when e's version was first served
	for _, sv := range versions[groupKindOf(e.APIVersion, e.Kind)] {
		if sv.apiVersion == e.APIVersion && sv.kind == e.Kind {
			own = sv.introduced
		}
	}
	var best *servedVersion
	for gk := range family(e) {
		for i := range versions[gk] {
			sv := &versions[gk][i]
			if (sv.apiVersion == e.APIVersion && sv.kind == e.Kind) || !sv.servedAt(target) || sv.introduced.Less(own) {
				continue // itself, not served, or older than it (autoscaling/v1 for v2beta1)
			}
			if best == nil || newer(*sv, *best, replacementGroup) {
				best = sv
			}
		}
	}
	if best == nil {
		return "", "", kubeversion.Minor{}, false
	}
	return best.apiVersion, best.kind, best.introduced, true
}

// newer orders candidate versions: higher version priority, then the
// replacement's group, then apiVersion and kind (determinism).
func newer(a, b servedVersion, replacementGroup string) bool {
	ga, gb := groupKindOf(a.apiVersion, a.kind), groupKindOf(b.apiVersion, b.kind)
	va, vb := versionPart(a.apiVersion), versionPart(b.apiVersion)
	if c := version.CompareKubeAwareVersionStrings(va, vb); c != 0 {
		return c > 0
	}
	if (ga.group == replacementGroup) != (gb.group == replacementGroup) {
		return ga.group == replacementGroup
	}
	return a.apiVersion+" "+a.kind < b.apiVersion+" "+b.kind
}

func versionPart(apiVersion string) string {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[i+1:]
	}
	return apiVersion
}
