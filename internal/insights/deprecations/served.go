package deprecations

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// notServedGroups are groups k8s.io/api registers in client-go's scheme
// whose types are payloads, not resources an API server's discovery lists:
// webhook requests (admission.k8s.io, imagepolicy.k8s.io) and the
// aggregated discovery documents themselves (apidiscovery.k8s.io).
var notServedGroups = map[string]bool{
	"admission.k8s.io":    true,
	"imagepolicy.k8s.io":  true,
	"apidiscovery.k8s.io": true,
}

// betaOffByDefault is the first release whose new beta APIs are off by
// default (KEP-3136, "Beta APIs Off by Default", Kubernetes 1.24): a beta
// version introduced then or later is served only when the cluster
// enables it, which EKS does not.
var betaOffByDefault = kubeversion.Minor{Major: 1, Minor: 24}

var (
	servedAtMu    sync.Mutex
	servedAtCache = map[kubeversion.Minor][]string{}
)

// ServedAt lists the built-in API versions a Kubernetes API server of
// minor v serves, in the form Helm's .Capabilities.APIVersions takes from a
// cluster's discovery (helm.sh/helm/v4/pkg/action.GetVersionSet): each
// "group/version" ("v1" for the core group) and each
// "group/version/Kind", sorted. Helm without a cluster uses every version
// client-go knows instead (helm.sh/helm/v4/pkg/chart/common
// DefaultVersionSet: policy/v1beta1 at any target, and no kinds), so a
// chart that picks its apiVersion with
// `.Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget"` renders
// the version the target does not serve.
//
// The kinds are those of client-go's scheme (the k8s.io/api types linked
// into Ladder) and of this package's tables (kinds k8s.io/api no longer
// has, apiregistration.k8s.io, apiextensions.k8s.io), less what v does
// not serve: versions removed by v (the tables' removed column), versions
// first served after v (introduced, apis_served.csv, or the release that
// deprecated their predecessor), alpha versions (off unless a feature
// gate turns them on) and beta versions introduced from 1.24 on
// (betaOffByDefault). A version k8s.io/api has whose first release the
// tables do not know is taken as served.
func ServedAt(v kubeversion.Minor) []string {
	servedAtMu.Lock()
	defer servedAtMu.Unlock()
	if out, ok := servedAtCache[v]; ok {
		return slices.Clone(out)
	}
	out := servedAt(v)
	servedAtCache[v] = out
	return slices.Clone(out)
}

func servedAt(v kubeversion.Minor) []string {
	loadOnce.Do(load)
	versionsOnce.Do(func() { versions = versionsOf() })
	known := map[key]servedVersion{}
	for _, svs := range versions {
		for _, sv := range svs {
			known[key{sv.apiVersion, sv.kind}] = sv
		}
	}
	kinds := map[key]bool{}
	for gvk, t := range scheme.Scheme.AllKnownTypes() {
		if !strings.HasSuffix(gvk.Kind, "List") && isResourceType(t) {
			kinds[key{gvk.GroupVersion().String(), gvk.Kind}] = true
		}
	}
	for k := range known {
		kinds[k] = true
	}
	set := map[string]bool{}
	for k := range kinds {
		gv, err := schema.ParseGroupVersion(k.apiVersion)
		if err != nil || notServedGroups[gv.Group] || strings.Contains(gv.Version, "alpha") {
			continue
		}
		sv, ok := known[k]
		switch {
		case !ok:
			// Only in k8s.io/api, never deprecated: served.
		case !sv.removed.IsZero() && !v.Less(sv.removed):
			continue
		case !sv.introduced.IsZero() && v.Less(sv.introduced):
			continue
		case strings.Contains(gv.Version, "beta") && !sv.introduced.IsZero() && !sv.introduced.Less(betaOffByDefault):
			continue
		}
		set[k.apiVersion] = true
		set[k.apiVersion+"/"+k.kind] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// isResourceType reports whether a registered Go type is an object an API
// server stores or accepts (it has ObjectMeta), not an option or event
// type every group registers (ListOptions, WatchEvent, ...).
func isResourceType(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	_, ok := t.FieldByName("ObjectMeta")
	return ok
}
