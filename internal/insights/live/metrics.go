package live

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/insights/deprecations"
)

// RequestedMetric is the API server's gauge of deprecated APIs requested
// since it started: 1 for each group, version, resource and subresource
// some client asked for.
const RequestedMetric = "apiserver_requested_deprecated_apis"

// RequestedAPI is one series of the gauge.
type RequestedAPI struct {
	Group, Version, Resource, Subresource string
	// RemovedRelease is "1.40", or "" when no removal is scheduled.
	RemovedRelease string
}

// GroupVersion is "batch/v1beta1", "v1".
func (r RequestedAPI) GroupVersion() string {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
}

// ParseRequested reads the gauge from the API server's /metrics (the
// Prometheus text format). Only the gauge's lines are parsed, so the rest
// of the page (megabytes) costs a scan.
func ParseRequested(r io.Reader) ([]RequestedAPI, error) {
	var only bytes.Buffer
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte(RequestedMetric)) ||
			bytes.HasPrefix(line, []byte("# HELP "+RequestedMetric+" ")) || bytes.HasPrefix(line, []byte("# TYPE "+RequestedMetric+" ")) {
			only.Write(line)
			only.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(&only)
	if err != nil {
		return nil, err
	}
	var out []RequestedAPI
	mf := families[RequestedMetric]
	if mf == nil {
		return nil, nil
	}
	for _, m := range mf.GetMetric() {
		v := 0.0
		switch {
		case m.GetGauge() != nil:
			v = m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			v = m.GetUntyped().GetValue()
		}
		if v <= 0 {
			continue
		}
		var r RequestedAPI
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "group":
				r.Group = l.GetValue()
			case "version":
				r.Version = l.GetValue()
			case "resource":
				r.Resource = l.GetValue()
			case "subresource":
				r.Subresource = l.GetValue()
			case "removed_release":
				r.RemovedRelease = l.GetValue()
			}
		}
		if r.Version != "" && r.Resource != "" {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b RequestedAPI) int {
		return strings.Compare(a.GroupVersion()+" "+a.Resource+"/"+a.Subresource, b.GroupVersion()+" "+b.Resource+"/"+b.Subresource)
	})
	return out, nil
}

// readRequested GETs /metrics. Reading it is optional: a user without get
// on the non-resource URL /metrics gets a WARNING Problem.
func readRequested(ctx context.Context, c *clients) ([]RequestedAPI, *insights.Problem) {
	origin := insights.Source{Origin: "live:/metrics " + RequestedMetric}
	body, err := c.raw(ctx, "/metrics")
	if err != nil {
		p := insights.Problem{Source: origin, Severity: insights.Warning,
			Message: fmt.Sprintf("cannot read the API server's /metrics: %v; which deprecated APIs clients request was not checked", err),
			Fix:     "grant get on the non-resource URL /metrics (a ClusterRole rule nonResourceURLs: [/metrics], verbs: [get]; check with: kubectl auth can-i get /metrics)"}
		if apierrors.IsForbidden(err) {
			p.Message = fmt.Sprintf("cannot get /metrics%s (forbidden); which deprecated APIs clients request was not checked", userOf(err))
		}
		return nil, &p
	}
	reqs, err := ParseRequested(bytes.NewReader(body))
	if err != nil {
		return nil, &insights.Problem{Source: origin, Severity: insights.Warning,
			Message: fmt.Sprintf("cannot parse the API server's /metrics: %v; which deprecated APIs clients request was not checked", err),
			Fix:     "report it to Ladder with the output of kubectl get --raw /metrics | grep " + RequestedMetric}
	}
	return reqs, nil
}

// requestedObjects turns each requested deprecated API whose removal is
// scheduled into an object of
// its apiVersion and kind, with no name, whose source names the gauge: the
// removed-api and deprecated-api checks then report it as they report an
// object written with that version ("v1 Endpoints is deprecated since
// 1.33", source "live:/metrics apiserver_requested_deprecated_apis v1
// endpoints ..."). The kind comes from discovery, else from the
// deprecation table.
func requestedObjects(reqs []RequestedAPI, s *served) []*insights.Object {
	var out []*insights.Object
	for _, r := range reqs {
		if r.RemovedRelease == "" {
			// No removal scheduled (core/v1 Endpoints): nothing breaks at
			// any hop, and the control plane's own controllers request it,
			// so it would be reported on every cluster.
			continue
		}
		gv := r.GroupVersion()
		kind := ""
		if res, ok := s.resourceFor(gv, r.Resource); ok {
			kind = res.Kind
		} else {
			kind = kindFromTable(gv, r.Resource)
		}
		if kind == "" {
			continue
		}
		what := gv + " " + r.Resource
		if r.Subresource != "" {
			what += "/" + r.Subresource
		}
		origin := fmt.Sprintf("live:/metrics %s %s (requested by a client since the API server started", RequestedMetric, what)
		if r.RemovedRelease != "" {
			origin += "; removed in " + r.RemovedRelease
		}
		origin += ")"
		out = append(out, &insights.Object{Source: insights.Source{Origin: origin}, APIVersion: gv, Kind: kind})
	}
	return out
}

// kindFromTable finds the kind of a resource of a group-version in the
// deprecation table, by its plural.
func kindFromTable(gv, resource string) string {
	for _, e := range deprecations.All() {
		if e.APIVersion != gv {
			continue
		}
		l := strings.ToLower(e.Kind)
		for _, p := range []string{l, l + "s", l + "es", strings.TrimSuffix(l, "y") + "ies"} {
			if p == resource {
				return e.Kind
			}
		}
	}
	return ""
}
