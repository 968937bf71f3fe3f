package insights

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is an HTTP server on 127.0.0.1 that answers every request —
// a GET, or a CONNECT when it is used as a proxy — and remembers it.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.Host+req.URL.Path)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type": "object"}`))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// check never goes to the network: not for a values schema's $ref (which
// Helm v4 GETs when it validates the values), not for a chart
// dependency's repository, not for a remote kustomize base — with the
// proxy variables pointing at a recorder, and a $ref straight at it.
func TestReadMakesNoNetworkRequest(t *testing.T) {
	rec := newRecorder(t)
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		t.Setenv(v, rec.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	direct := rec.URL + "/image.schema.json"
	dir := writeTree(t, map[string]string{
		"direct/Chart.yaml":  "apiVersion: v2\nname: direct\nversion: 1.0.0\n",
		"direct/values.yaml": "image:\n  tag: \"1.0\"\n",
		"direct/values.schema.json": `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "image": {"$ref": "` + direct + `"}
  }
}
`,
		"direct/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: direct\ndata:\n  tag: {{ .Values.image.tag | quote }}\n",
		"proxied/Chart.yaml":       "apiVersion: v2\nname: proxied\nversion: 1.0.0\n",
		"proxied/values.schema.json": `{"$schema": "https://json-schema.org/draft/2020-12/schema",
 "properties": {"port": {"$ref": "https://schemas.example.com/port.json"}}}
`,
		"proxied/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: proxied\n",
		"deps/Chart.yaml": `apiVersion: v2
name: deps
version: 1.0.0
dependencies:
- name: redis
  version: 1.x.x
  repository: https://charts.example.com/stable
- name: postgresql
  version: 2.x.x
  repository: oci://registry.example.com/charts
`,
		"deps/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deps\n",
		"remote/kustomization.yaml": `resources:
- https://github.com/example/app//deploy/base?ref=v1.2.3
- ` + rec.URL + `/base.yaml
`,
	})
	opts := ReadOptions{}
	opts.Helm.KubeVersion = "1.32"
	m, err := Read([]string{dir}, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.requests(); len(got) != 0 {
		t.Fatalf("ladder made %d network requests: %q", len(got), got)
	}
	var msgs []string
	for _, p := range m.Problems {
		msgs = append(msgs, string(p.Severity)+" "+p.Source.String()+" "+p.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"WARNING " + dir + "/direct/values.schema.json:5 values not validated against the schema: \"" + direct + "\" was not fetched",
		"WARNING " + dir + "/proxied/values.schema.json:2 values not validated against the schema: \"https://schemas.example.com/port.json\" was not fetched",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack\n %s\ngot\n %s", want, all)
		}
	}
	// The charts whose schema was not fetched still render.
	names := map[string]bool{}
	for _, o := range m.Objects {
		names[o.Name] = true
	}
	if !names["direct"] || !names["proxied"] {
		t.Errorf("objects %v, want the ConfigMaps of direct and proxied", names)
	}
}
