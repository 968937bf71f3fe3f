package live

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// fakeServer is a tiny API server for unit tests: legacy discovery, lists
// that paginate (limit, continue), PartialObjectMetadataList for the
// metadata client, GETs of single objects, /version, /metrics, and any
// response replaced by a status (403, 401, 410, ...).
type fakeServer struct {
	t       *testing.T
	version string
	metrics string
	// groups: group → versions, preferred first; "" is the core group.
	groups map[string][]string
	// resources: "gv" → resources.
	resources map[string][]metav1.APIResource
	// lists: the collection path ("/api/v1/pods") → items.
	lists map[string][]map[string]any
	// status: a path → the HTTP status it answers with.
	status map[string]int
	// expire: a collection path whose continue tokens have expired.
	expire map[string]bool

	mu       sync.Mutex
	requests []string // "path?query"
	srv      *httptest.Server
}

func newFakeServer(t *testing.T, version string) *fakeServer {
	f := &fakeServer{t: t, version: version, groups: map[string][]string{}, resources: map[string][]metav1.APIResource{},
		lists: map[string][]map[string]any{}, status: map[string]int{}, expire: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) config() *rest.Config { return &rest.Config{Host: f.srv.URL} }

// serveKind registers a resource of a group-version.
func (f *fakeServer) serveKind(gv, resource, kind string, namespaced bool) {
	group := ""
	if i := strings.Index(gv, "/"); i >= 0 {
		group = gv[:i]
	}
	found := false
	for _, v := range f.groups[group] {
		found = found || v == gv
	}
	if !found {
		f.groups[group] = append(f.groups[group], gv)
	}
	f.resources[gv] = append(f.resources[gv], metav1.APIResource{Name: resource, Kind: kind, Namespaced: namespaced,
		Verbs: metav1.Verbs{"get", "list", "watch", "create"}})
}

func (f *fakeServer) collection(gv, resource string) string {
	if strings.Contains(gv, "/") {
		return "/apis/" + gv + "/" + resource
	}
	return "/api/" + gv + "/" + resource
}

// add adds an object to its collection (and, for GETs, under its own path).
func (f *fakeServer) add(gv, resource string, obj map[string]any) {
	p := f.collection(gv, resource)
	f.lists[p] = append(f.lists[p], obj)
}

func (f *fakeServer) requested(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeServer) writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		f.t.Errorf("fake server: %v", err)
	}
}

func (f *fakeServer) writeStatus(w http.ResponseWriter, r *http.Request, code int) {
	reason := map[int]metav1.StatusReason{401: metav1.StatusReasonUnauthorized, 403: metav1.StatusReasonForbidden,
		404: metav1.StatusReasonNotFound, 410: metav1.StatusReasonExpired, 500: metav1.StatusReasonInternalError}[code]
	msg := map[int]string{401: "Unauthorized", 410: "The provided continue parameter is too old to display a consistent list result.",
		403: fmt.Sprintf(`forbidden: User "jane" cannot %s resource at %s`, strings.ToLower(r.Method), r.URL.Path)}[code]
	if code == 403 {
		// As the API server words it: a list, or a get of one object.
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		verb, resource := "list", parts[len(parts)-1]
		if strings.Contains(r.URL.Path, "/namespaces/") {
			verb, resource = "get", parts[len(parts)-2]
		}
		msg = fmt.Sprintf(`%s is forbidden: User "jane" cannot %s resource "%s" in API group "" at the cluster scope`, resource, verb, resource)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(code), Reason: reason, Message: msg})
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.URL.Path+"?"+r.URL.RawQuery)
	f.mu.Unlock()
	if code, ok := f.status[r.URL.Path]; ok {
		f.writeStatus(w, r, code)
		return
	}
	q := r.URL.Query()
	switch p := r.URL.Path; {
	case p == "/version":
		f.writeJSON(w, map[string]string{"gitVersion": f.version, "major": "1"})
	case p == "/metrics":
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, f.metrics)
	case p == "/api":
		f.writeJSON(w, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: f.groups[""]})
	case p == "/apis":
		l := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		for g, vs := range f.groups {
			if g == "" {
				continue
			}
			ag := metav1.APIGroup{Name: g, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: vs[0], Version: strings.TrimPrefix(vs[0], g+"/")}}
			for _, v := range vs {
				ag.Versions = append(ag.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v, Version: strings.TrimPrefix(v, g+"/")})
			}
			l.Groups = append(l.Groups, ag)
		}
		f.writeJSON(w, l)
	case f.isDiscovery(p):
		gv := strings.TrimPrefix(strings.TrimPrefix(p, "/apis/"), "/api/")
		f.writeJSON(w, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv, APIResources: f.resources[gv]})
	case f.lists[p] != nil || f.isCollection(p):
		items := f.lists[p]
		if sel := q.Get("labelSelector"); sel != "" {
			items = filterLabels(items, sel)
		}
		start := 0
		if c := q.Get("continue"); c != "" {
			if f.expire[p] {
				f.writeStatus(w, r, http.StatusGone)
				return
			}
			start, _ = strconv.Atoi(c)
		}
		end := len(items)
		if l, _ := strconv.Atoi(q.Get("limit")); l > 0 && start+l < end {
			end = start + l
		}
		next := ""
		if end < len(items) {
			next = strconv.Itoa(end)
		}
		page := items[start:end]
		kind, apiVersion := f.listKind(p), f.listGV(p)
		if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList") {
			kind, apiVersion = "PartialObjectMetadataList", "meta.k8s.io/v1"
			meta := make([]map[string]any, len(page))
			for i, it := range page {
				meta[i] = map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": it["metadata"]}
			}
			page = meta
		}
		f.writeJSON(w, map[string]any{"kind": kind, "apiVersion": apiVersion, "metadata": map[string]any{"continue": next, "resourceVersion": "1"}, "items": page})
	default:
		// A single object: /api/v1/namespaces/NS/secrets/NAME.
		parts := strings.Split(strings.Trim(p, "/"), "/")
		if n := len(parts); n >= 5 && parts[n-4] == "namespaces" {
			coll := "/" + strings.Join(append(parts[:n-4:n-4], parts[n-2]), "/")
			for _, it := range f.lists[coll] {
				m := it["metadata"].(map[string]any)
				if m["namespace"] == parts[n-3] && m["name"] == parts[n-1] {
					f.writeJSON(w, it)
					return
				}
			}
		}
		f.writeStatus(w, r, http.StatusNotFound)
	}
}

func (f *fakeServer) isDiscovery(p string) bool {
	gv := strings.TrimPrefix(strings.TrimPrefix(p, "/apis/"), "/api/")
	_, ok := f.resources[gv]
	return ok && gv != p
}

func (f *fakeServer) isCollection(p string) bool {
	for gv, rs := range f.resources {
		for _, r := range rs {
			if f.collection(gv, r.Name) == p {
				return true
			}
		}
	}
	return false
}

func (f *fakeServer) listGV(p string) string {
	for gv, rs := range f.resources {
		for _, r := range rs {
			if f.collection(gv, r.Name) == p {
				return gv
			}
		}
	}
	return ""
}

func (f *fakeServer) listKind(p string) string {
	for gv, rs := range f.resources {
		for _, r := range rs {
			if f.collection(gv, r.Name) == p {
				return r.Kind + "List"
			}
		}
	}
	return "List"
}

// filterLabels applies a selector of k=v terms.
func filterLabels(items []map[string]any, sel string) []map[string]any {
	var out []map[string]any
	for _, it := range items {
		labels, _ := it["metadata"].(map[string]any)["labels"].(map[string]any)
		ok := true
		for term := range strings.SplitSeq(sel, ",") {
			k, v, _ := strings.Cut(term, "=")
			ok = ok && labels[k] == v
		}
		if ok {
			out = append(out, it)
		}
	}
	return out
}

// obj builds an object for the fake server's lists.
func obj(apiVersion, kind, namespace, name string, extra map[string]any) map[string]any {
	meta := map[string]any{"name": name, "uid": namespace + "/" + name, "resourceVersion": "1"}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range extra {
		if k == "metadata" {
			for mk, mv := range v.(map[string]any) {
				meta[mk] = mv
			}
			continue
		}
		o[k] = v
	}
	return o
}
