package insights

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/ladder-eks/ladder/internal/insights/deprecations"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/render"
)

// ReadOptions are how ReadPaths builds the directories that are not plain
// manifests: a kustomization (built as `kubectl apply -k` builds it) and a
// Helm chart (rendered as `helm template` renders it).
type ReadOptions struct {
	// Helm are the values and the Kubernetes version a chart is rendered
	// with (--values, --set, and the target as .Capabilities.KubeVersion;
	// the API versions the target serves as .Capabilities.APIVersions
	// unless Helm.APIVersions says otherwise).
	Helm render.HelmOptions
	// Plain reads kustomizations and charts as plain files, unrendered.
	Plain bool
}

// renderDirectory builds dir when it is a kustomization or a Helm chart
// and queues the rendered objects, each with the source file and line it
// came from, the render's problems, and an object for each literal
// apiVersion/kind pair in a chart template that did not render (so the API
// checks still see it). It returns the files the render read — patches,
// values, templates: they are not judged as whole objects — and, for a
// chart, that its subcharts were rendered with it. ok is false when dir
// is a plain directory. An error is the user's options' (a --values file
// that does not exist): Ladder cannot run.
func (s *stream) renderDirectory(dir string) (consumed map[string]bool, chart bool, ok bool, err error) {
	if s.opts.Plain {
		return nil, false, false, nil
	}
	kind, ok := render.Kind(dir)
	if !ok {
		return nil, false, false, nil
	}
	var res render.Result
	switch kind {
	case render.Chart:
		res, err = render.Helm(dir, s.helmOptions())
	default:
		res, err = render.Kustomize(dir)
	}
	if err != nil {
		return nil, false, false, fmt.Errorf("%s (%s): %w", dir, kind, err)
	}
	for _, d := range res.Docs {
		if kind != render.Chart && s.builtBefore(dir, d) {
			continue
		}
		s.reserve(int64(len(d.Body)))
		// Each rendered object is queued as a document of its source
		// file, at the line its document starts there; named, so that
		// nothing rendered is skipped as a template.
		f := &fileRead{name: d.File, named: true, size: int64(len(d.Body))}
		s.add(entry{file: f, doc: manifest.Document{Line: d.Line, Body: d.Body}, isDoc: true, end: true})
	}
	for _, p := range res.Problems {
		sev := Error
		if p.Warning {
			sev = Warning
			// The same remote base, named by several kustomizations, is
			// one line: at the first. (A chart's missing dependencies
			// are its own: the fix names its directory.)
			key := p.Message + "\x00" + p.Fix
			if s.warned[key] {
				continue
			}
			if s.warned == nil {
				s.warned = map[string]bool{}
			}
			s.warned[key] = true
		}
		s.outcome(&fileRead{name: p.File, problem: &Problem{Source: Source{File: p.File, Line: p.Line}, Severity: sev,
			Message: p.Message, Fix: p.Fix}})
	}
	for _, l := range res.Literals {
		s.literal(l)
	}
	consumed = make(map[string]bool, len(res.Consumed))
	for _, c := range res.Consumed {
		consumed[filepath.Clean(c)] = true
	}
	return consumed, kind == render.Chart, true, nil
}

// builtBefore reports whether another kustomization of the walk built an
// object from the same source document before: a base that three
// overlays include is checked once, as the first build that reached it
// (in the walk's lexical order, usually the base's own) renders it. A
// document that one build renders twice (a base included through two
// kustomizations with different name suffixes) is kept each time.
func (s *stream) builtBefore(dir string, d render.Doc) bool {
	key := d.File + ":" + strconv.Itoa(d.Line)
	first, ok := s.built[key]
	if !ok {
		if s.built == nil {
			s.built = map[string]string{}
		}
		s.built[key] = dir
		return false
	}
	return first != dir
}

// helmOptions are the options charts render with: the target's API
// versions as .Capabilities.APIVersions (deprecations.ServedAt) when the
// target is known and the caller gave none.
func (s *stream) helmOptions() render.HelmOptions {
	opts := s.opts.Helm
	if opts.APIVersions == nil && opts.KubeVersion != "" {
		if v, err := kubeversion.Parse(opts.KubeVersion); err == nil {
			opts.APIVersions = deprecations.ServedAt(v)
		}
	}
	return opts
}

// literal queues an apiVersion/kind pair written literally in a template
// source as an object with no name and no typed body: only the API checks
// read it.
func (s *stream) literal(l render.Literal) {
	o := &Object{Source: Source{File: l.File, Line: l.Line}, APIVersion: l.APIVersion, Kind: l.Kind}
	if l.Branch != "" {
		// "the {{ else }} branch of {{ if … }} at line 2 in x.yaml:5"
		o.Source.Origin = l.Branch + " in"
	}
	s.outcome(&fileRead{name: l.File, literal: o})
}

// skipRendered reports whether a walk below a rendered directory leaves
// an entry alone: a file the render read, or a chart's subcharts and
// templates, which Helm rendered with their parent.
func skipRendered(p string, e fs.DirEntry, consumed map[string]bool, chart bool) bool {
	if consumed[filepath.Clean(p)] {
		return true
	}
	return chart && e.IsDir() && (e.Name() == "charts" || e.Name() == "templates")
}
