package live

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/kubelist"
)

// helmReleaseType is the type of the Secrets Helm 3 stores releases in
// (its default "secret" storage driver), one per revision, labelled
// owner=helm, name=RELEASE, version=REVISION, status=deployed|superseded|...
const helmReleaseType = "helm.sh/release.v1"

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// Release is what Ladder reads of a Helm 3 release revision.
type Release struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Version   int    `json:"version"`
	Info      struct {
		Status string `json:"status"`
	} `json:"info"`
	Chart struct {
		Metadata struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"metadata"`
	} `json:"chart"`
	// Manifest is the rendered manifest Helm applied, and compares with on
	// the next upgrade.
	Manifest string `json:"manifest"`
	Hooks    []struct {
		Path     string `json:"path"`
		Manifest string `json:"manifest"`
	} `json:"hooks"`
}

// DecodeRelease decodes the "release" value of a Helm 3 release Secret (as
// the Secret's data holds it, after the API's own base64): base64, then
// gzip (Helm compresses since 3.0; plain JSON is accepted too), then JSON.
func DecodeRelease(data []byte) (*Release, error) {
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(raw, bytes.TrimSpace(data))
	if err != nil {
		return nil, fmt.Errorf("not base64: %v", err)
	}
	raw = raw[:n]
	if len(raw) > 3 && raw[0] == 0x1f && raw[1] == 0x8b && raw[2] == 0x08 {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("not gzip: %v", err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("not gzip: %v", err)
		}
	}
	var r Release
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("not a Helm release: %v", err)
	}
	return &r, nil
}

// Origin is "helm:NAMESPACE/RELEASE (revision N)".
func (r *Release) Origin() string {
	return fmt.Sprintf("helm:%s/%s (revision %d)", r.Namespace, r.Name, r.Version)
}

// Objects decodes the release's manifest and hooks with the manifest
// decoder, for the API-version checks (Typed is left nil: the live objects
// are what the other checks read). Each object's source is the release and the line in its
// manifest, with the chart template it was rendered from:
// "helm:shop/web (revision 3) manifest:12 (web/templates/pdb.yaml)".
func (r *Release) Objects() ([]*insights.Object, []insights.Problem) {
	objs, problems := decodeEmbedded(r.Origin(), "manifest", r.Manifest)
	for _, h := range r.Hooks {
		o, p := decodeEmbedded(r.Origin(), "hook "+h.Path, h.Manifest)
		objs, problems = append(objs, o...), append(problems, p...)
	}
	return objs, problems
}

func decodeEmbedded(origin, part, manifest string) ([]*insights.Object, []insights.Problem) {
	if strings.TrimSpace(manifest) == "" {
		return nil, nil
	}
	objs, problems := insights.DecodeAt(insights.Source{Line: 1}, []byte(manifest))
	templates := templateLines(manifest)
	src := func(s insights.Source) insights.Source {
		o := fmt.Sprintf("%s %s:%d", origin, part, s.Line)
		if t := templateAt(templates, s.Line); t != "" && !strings.HasPrefix(part, "hook ") {
			o += " (" + t + ")"
		}
		// Not a file on disk: File stays empty, so SARIF gives no physical
		// location; the origin says where.
		return insights.Source{Origin: o, Line: s.Line}
	}
	for _, o := range objs {
		o.Source = src(o.Source)
		// The live objects are what the workload, budget and Karpenter
		// checks read: the release's copies would report each twice. The
		// manifest matters for its API versions — the next helm upgrade
		// reads it — so only the API checks see it.
		o.Typed = nil
	}
	kept := problems[:0]
	for _, p := range problems {
		// Unknown or duplicate fields: the API server took the manifest.
		if p.Severity == insights.Warning {
			continue
		}
		p.Source = src(p.Source)
		p.Object.Source = p.Source.String()
		kept = append(kept, p)
	}
	return objs, kept
}

type templateLine struct {
	line int
	path string
}

// templateLines finds Helm's "# Source: chart/templates/x.yaml" comments.
func templateLines(manifest string) []templateLine {
	var out []templateLine
	line := 0
	for l := range strings.SplitSeq(manifest, "\n") {
		line++
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "# Source: "); ok {
			out = append(out, templateLine{line, strings.TrimSpace(rest)})
		}
	}
	return out
}

func templateAt(ts []templateLine, line int) string {
	path := ""
	for _, t := range ts {
		if t.line > line {
			break
		}
		path = t.path
	}
	return path
}

// readHelm reads the latest deployed revision of every Helm 3 release in
// the cluster's Secrets: their metadata is listed (owner=helm, type
// helm.sh/release.v1) to pick the revisions, then only those are fetched.
// A release without a deployed revision (its first install failed, or an
// upgrade is pending) is read at its latest revision.
func readHelm(ctx context.Context, c *clients, chunk int64, workers int) ([]*insights.Object, []insights.Problem, error) {
	type pick struct {
		namespace, secret string
		version           int
		deployed          bool
	}
	latest := map[string]pick{} // namespace/release
	ri := c.meta.Resource(secrets)
	opts := metav1.ListOptions{LabelSelector: "owner=helm", FieldSelector: "type=" + helmReleaseType}
	err := kubelist.Each(ctx, chunk, opts, kubelist.Page(ri.List), func(s *metav1.PartialObjectMetadata) error {
		name := s.Labels["name"]
		v, err := strconv.Atoi(s.Labels["version"])
		if name == "" || err != nil {
			return nil
		}
		p := pick{s.Namespace, s.Name, v, s.Labels["status"] == "deployed"}
		key := s.Namespace + "/" + name
		old, ok := latest[key]
		if !ok || (p.deployed && !old.deployed) || (p.deployed == old.deployed && p.version > old.version) {
			latest[key] = p
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, 0, len(latest))
	for k := range latest {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	type result struct {
		objs     []*insights.Object
		problems []insights.Problem
		err      error
	}
	results := make([]result, len(keys))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for i := range next {
				p := latest[keys[i]]
				s, err := c.cs.CoreV1().Secrets(p.namespace).Get(ctx, p.secret, metav1.GetOptions{})
				if err != nil {
					results[i].err = err
					continue
				}
				r, err := DecodeRelease(s.Data["release"])
				if err != nil {
					results[i].problems = []insights.Problem{{Source: insights.Source{Origin: liveOrigin("secrets", p.namespace, p.secret)},
						Severity: insights.Error, Message: fmt.Sprintf("the Helm release secret could not be read: %v; the release's manifest was not checked", err),
						Fix: "check it with: helm get manifest -n " + p.namespace + " " + strings.TrimPrefix(keys[i], p.namespace+"/")}}
					continue
				}
				if r.Namespace == "" {
					r.Namespace = p.namespace
				}
				results[i].objs, results[i].problems = r.Objects()
			}
		})
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	var objs []*insights.Object
	var problems []insights.Problem
	for _, r := range results {
		if r.err != nil {
			return nil, nil, r.err
		}
		objs = append(objs, r.objs...)
		problems = append(problems, r.problems...)
	}
	return objs, problems, nil
}
