// Package live is the live-cluster source of `ladder check`: it reads a
// cluster through its API server into an insights.Input.
//
// What it reads, in this order:
//   - /version: the control plane's minor (Input.Current);
//   - GET /metrics, when permitted: the apiserver_requested_deprecated_apis
//     gauge, read before anything else so Ladder's own requests never show
//     in it (and Ladder never requests a deprecated version itself);
//   - discovery, then paginated lists (client-go's pager, Limit 500 +
//     Continue, kubectl's chunk) of the kinds the checks read in depth, decoded into their Go
//     types (Deployments, StatefulSets, ReplicaSets, DaemonSets, Pods,
//     PodDisruptionBudgets, HorizontalPodAutoscalers, StorageClasses,
//     Karpenter NodePools and EC2NodeClasses), and of every served kind the
//     deprecation table names (Ingress, CronJob, FlowSchema, RBAC, webhooks,
//     CRDs, ...), metadata only. Each object's WrittenAs is the apiVersions
//     its managedFields and kubectl's last-applied annotation were written
//     with;
//   - the nodes (Input.Cluster.Nodes: kubelet version, zone, node group);
//   - Helm 3 release secrets: the latest deployed revision of each release,
//     decoded without Helm, its manifest (and hooks) read by the manifest
//     decoder.
//
// Every object's Source.Origin names where it came from:
// "live:deployments.apps/shop/web", "helm:shop/web (revision 3)
// manifest:12 (web/templates/pdb.yaml)", "live:/metrics
// apiserver_requested_deprecated_apis ...".
//
// Errors: an unreachable server or refused credentials fail the read with
// one line naming the server and the fix; a forbidden list of a kind the
// checks need fails it naming the verb and resource; a forbidden optional
// source (the metric, Helm secrets, Karpenter and deprecated-API kinds) is
// a WARNING Problem — the invalid-manifest check reports it — and the read
// goes on.
package live

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/insights/deprecations"
	"github.com/ladder-eks/ladder/internal/kubelist"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// DefaultChunkSize is the page size of every list: kubectl's --chunk-size.
const DefaultChunkSize = kubelist.ChunkSize

// Options tune the read.
type Options struct {
	// ChunkSize is the Limit of each list request (default 500).
	ChunkSize int64
	// ClusterName is the EKS cluster's name (Input.Cluster.Name), e.g. from
	// the kubeconfig; when empty, the nodes' alpha.eksctl.io/cluster-name
	// label is used if any.
	ClusterName string
	// Workers is how many lists run at once (default 4).
	Workers int
}

// Read reads the cluster cfg talks to. The Input has Current, Cluster,
// Objects and Problems; Target and Now are the caller's.
func Read(ctx context.Context, cfg *rest.Config, opts Options) (*insights.Input, error) {
	c, err := newClients(cfg)
	if err != nil {
		return nil, err
	}
	return read(ctx, c, opts)
}

// clients are the API clients a read uses.
type clients struct {
	host string
	cs   kubernetes.Interface
	meta metadata.Interface
	dyn  dynamic.Interface
	// raw GETs a non-resource path (/metrics) as text.
	raw func(ctx context.Context, path string) ([]byte, error)
}

func newClients(in *rest.Config) (*clients, error) {
	cfg := rest.CopyConfig(in)
	if cfg.QPS == 0 {
		// client-go's default 5 QPS would make a read of a large cluster
		// wait on the client.
		cfg.QPS, cfg.Burst = 50, 100
	}
	// Ladder requests no deprecated version; warnings would be noise.
	cfg.WarningHandler = rest.NoWarnings{}
	proto := rest.CopyConfig(cfg)
	proto.ContentType = runtime.ContentTypeProtobuf
	proto.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(proto)
	if err != nil {
		return nil, fmt.Errorf("the API server at %s: %v", cfg.Host, err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("the API server at %s: %v", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("the API server at %s: %v", cfg.Host, err)
	}
	text := rest.CopyConfig(cfg)
	disc, err := discovery.NewDiscoveryClientForConfig(text)
	if err != nil {
		return nil, fmt.Errorf("the API server at %s: %v", cfg.Host, err)
	}
	return &clients{host: cfg.Host, cs: cs, meta: meta, dyn: dyn,
		raw: func(ctx context.Context, path string) ([]byte, error) {
			return disc.RESTClient().Get().AbsPath(path).SetHeader("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1").DoRaw(ctx)
		}}, nil
}

func read(ctx context.Context, c *clients, opts Options) (*insights.Input, error) {
	if opts.ChunkSize == 0 {
		opts.ChunkSize = DefaultChunkSize
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	info, err := c.cs.Discovery().ServerVersion()
	if err != nil {
		return nil, serverError(c.host, "reading /version", err)
	}
	current, err := kubeversion.Parse(info.GitVersion)
	if err != nil {
		return nil, fmt.Errorf("the API server at %s reports version %q: %v", c.host, info.GitVersion, err)
	}
	in := &insights.Input{Current: current, Cluster: &insights.Cluster{Name: opts.ClusterName, Version: current}}

	// The gauge first: every request after it could only add Ladder's own.
	requested, problem := readRequested(ctx, c)
	if problem != nil {
		in.Problems = append(in.Problems, *problem)
	}

	groups, resources, err := c.cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &failed) || len(resources) == 0 {
			return nil, serverError(c.host, "discovering the served APIs", err)
		}
		var gvs []string
		for gv := range failed.Groups {
			gvs = append(gvs, gv.String())
		}
		slices.Sort(gvs)
		in.Problems = append(in.Problems, insights.Problem{Source: insights.Source{Origin: "live:discovery"}, Severity: insights.Warning,
			Message: fmt.Sprintf("the API server could not list the resources of %s (an aggregated API that is down?); their objects were not checked", strings.Join(gvs, ", ")),
			Fix:     "fix the APIService (kubectl get apiservices shows which is not Available), or ignore it if it serves no objects of yours"})
	}
	served := newServed(groups, resources)
	in.Objects = append(in.Objects, requestedObjects(requested, served)...)

	targets := plan(served, current)
	type result struct {
		objs     []*insights.Object
		problems []insights.Problem
		err      error
	}
	results := make([]result, len(targets))
	var nodes []corev1.Node
	var nodesErr error
	var helmObjs []*insights.Object
	var helmProblems []insights.Problem
	var helmErr error
	var claims []corev1.PersistentVolumeClaim
	var pvs []corev1.PersistentVolume
	var volumesErr error

	jobs := make(chan func(), len(targets)+3)
	jobs <- func() { nodes, nodesErr = listNodes(ctx, c, opts.ChunkSize) }
	jobs <- func() { helmObjs, helmProblems, helmErr = readHelm(ctx, c, opts.ChunkSize, opts.Workers) }
	jobs <- func() { claims, pvs, volumesErr = listVolumes(ctx, c, opts.ChunkSize) }
	for i, t := range targets {
		jobs <- func() {
			r := &results[i]
			r.objs, r.problems, r.err = t.list(ctx, c, t, opts.ChunkSize)
		}
	}
	close(jobs)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Go(func() {
			for job := range jobs {
				job()
			}
		})
	}
	wg.Wait()

	// Errors: unreachable or unauthorized first (one line says it all),
	// then every forbidden kind the checks need, together.
	var forbidden []string
	var firstErr, firstRaw error
	fail := func(resource string, required bool, err error) bool {
		switch {
		case err == nil:
			return false
		case apierrors.IsForbidden(err) && required:
			forbidden = append(forbidden, resource)
		case apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
			return true // optional: a Problem below
		case firstRaw == nil || (isTransport(err) && !isTransport(firstRaw)):
			// An unreachable server says more than what failed because of it.
			firstErr, firstRaw = serverError(c.host, "listing "+resource, err), err
		}
		return false
	}
	fail("nodes", true, nodesErr)
	var optional []string
	var optionalErr error
	for i, t := range targets {
		if fail(t.resourceName(), t.required, results[i].err) {
			if optionalErr == nil || !apierrors.IsForbidden(optionalErr) {
				optionalErr = results[i].err
			}
			optional = append(optional, t.resourceName())
		}
	}
	if len(optional) > 0 {
		// One problem for them all: a user without list on RBAC or CRDs
		// lacks it on dozens of kinds.
		in.Problems = append(in.Problems, forbiddenProblem("list", optional,
			theirObjects(len(optional)), optionalErr))
	}
	if helmErr != nil {
		if apierrors.IsForbidden(helmErr) {
			in.Problems = append(in.Problems, forbiddenProblem(verbOf(helmErr, "list"), []string{"secrets"},
				"the manifests of Helm 3 releases (secrets of type "+helmReleaseType+") were not checked", helmErr))
		} else {
			fail("secrets", false, helmErr)
		}
	}
	if volumesErr != nil {
		if apierrors.IsForbidden(volumesErr) {
			in.Problems = append(in.Problems, forbiddenProblem("list", []string{resourceOf(volumesErr, "persistentvolumeclaims")},
				"which zone each EBS volume is in was not checked", volumesErr))
		} else {
			fail("persistentvolumeclaims", false, volumesErr)
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if len(forbidden) > 0 {
		return nil, forbiddenError(forbidden)
	}
	for _, r := range results {
		in.Objects = append(in.Objects, r.objs...)
		in.Problems = append(in.Problems, r.problems...)
	}
	in.Objects = append(in.Objects, helmObjs...)
	in.Problems = append(in.Problems, helmProblems...)
	fillCluster(in.Cluster, nodes, in.Objects)
	in.Cluster.Volumes = volumes(claims, pvs, in.Objects)
	if in.Cluster.Name == "" {
		for _, n := range nodes {
			if name := n.Labels["alpha.eksctl.io/cluster-name"]; name != "" {
				in.Cluster.Name = name
				break
			}
		}
	}
	in.Cluster.Source = "live:" + c.host
	if in.Cluster.Name != "" {
		in.Cluster.Source = "live:cluster " + in.Cluster.Name
	}
	return in, nil
}

func theirObjects(n int) string {
	if n == 1 {
		return "its objects were not checked for the apiVersions they were last written with"
	}
	return "their objects were not checked for the apiVersions they were last written with"
}

// served is what discovery says the cluster serves: per group-version,
// its resources by kind (subresources left out).
type served struct {
	preferred map[string]string // group → preferred group-version
	versions  map[string][]string
	byGV      map[string]map[string]metav1.APIResource // gv → kind → resource
}

func newServed(groups []*metav1.APIGroup, lists []*metav1.APIResourceList) *served {
	s := &served{preferred: map[string]string{}, versions: map[string][]string{}, byGV: map[string]map[string]metav1.APIResource{}}
	for _, g := range groups {
		s.preferred[g.Name] = g.PreferredVersion.GroupVersion
		for _, v := range g.Versions {
			s.versions[g.Name] = append(s.versions[g.Name], v.GroupVersion)
		}
	}
	for _, l := range lists {
		if l == nil {
			continue
		}
		m := s.byGV[l.GroupVersion]
		if m == nil {
			m = map[string]metav1.APIResource{}
			s.byGV[l.GroupVersion] = m
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			m[r.Kind] = r
		}
	}
	return s
}

// resourceFor finds the resource of a group-version by its plural name.
func (s *served) resourceFor(gv, resource string) (metav1.APIResource, bool) {
	for _, r := range s.byGV[gv] {
		if r.Name == resource {
			return r, true
		}
	}
	return metav1.APIResource{}, false
}

// target is one kind to list, at one served group-version.
type target struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	// required: a forbidden list fails the read (the kinds the checks read
	// in depth); otherwise it is a WARNING Problem.
	required bool
	list     func(ctx context.Context, c *clients, t target, chunk int64) ([]*insights.Object, []insights.Problem, error)
}

func (t target) apiVersion() string { return t.gvr.GroupVersion().String() }

// resourceName is "deployments.apps", "pods": as RBAC and kubectl name it.
func (t target) resourceName() string {
	if t.gvr.Group == "" {
		return t.gvr.Resource
	}
	return t.gvr.Resource + "." + t.gvr.Group
}

type typedKey struct{ apiVersion, kind string }

// typedListers list the kinds the checks read in depth into their Go
// types: built-in kinds with the clientset (protobuf), Karpenter's with the
// dynamic client. required marks the ones a forbidden list fails the read
// for.
var typedListers = map[typedKey]struct {
	required bool
	list     func(ctx context.Context, c *clients, t target, chunk int64) ([]*insights.Object, []insights.Problem, error)
}{
	{"v1", "Pod"}:              {true, typed[*corev1.Pod](func(c *clients) pager.ListPageFunc { return kubelist.Page(c.cs.CoreV1().Pods("").List) })},
	{"apps/v1", "Deployment"}:  {true, typed[*appsv1.Deployment](func(c *clients) pager.ListPageFunc { return kubelist.Page(c.cs.AppsV1().Deployments("").List) })},
	{"apps/v1", "StatefulSet"}: {true, typed[*appsv1.StatefulSet](func(c *clients) pager.ListPageFunc { return kubelist.Page(c.cs.AppsV1().StatefulSets("").List) })},
	{"apps/v1", "ReplicaSet"}:  {true, typed[*appsv1.ReplicaSet](func(c *clients) pager.ListPageFunc { return kubelist.Page(c.cs.AppsV1().ReplicaSets("").List) })},
	{"apps/v1", "DaemonSet"}:   {true, typed[*appsv1.DaemonSet](func(c *clients) pager.ListPageFunc { return kubelist.Page(c.cs.AppsV1().DaemonSets("").List) })},
	{"policy/v1", "PodDisruptionBudget"}: {true, typed[*policyv1.PodDisruptionBudget](func(c *clients) pager.ListPageFunc {
		return kubelist.Page(c.cs.PolicyV1().PodDisruptionBudgets("").List)
	})},
	{"autoscaling/v2", "HorizontalPodAutoscaler"}: {true, typed[*autoscalingv2.HorizontalPodAutoscaler](func(c *clients) pager.ListPageFunc {
		return kubelist.Page(c.cs.AutoscalingV2().HorizontalPodAutoscalers("").List)
	})},
	{"autoscaling/v1", "HorizontalPodAutoscaler"}: {true, typed[*autoscalingv1.HorizontalPodAutoscaler](func(c *clients) pager.ListPageFunc {
		return kubelist.Page(c.cs.AutoscalingV1().HorizontalPodAutoscalers("").List)
	})},
	{"storage.k8s.io/v1", "StorageClass"}:    {true, typed[*storagev1.StorageClass](func(c *clients) pager.ListPageFunc { return kubelist.Page(c.cs.StorageV1().StorageClasses().List) })},
	{"karpenter.sh/v1", "NodePool"}:          {false, unstructuredTyped(func() any { return &karpv1.NodePool{} })},
	{"karpenter.k8s.aws/v1", "EC2NodeClass"}: {false, unstructuredTyped(func() any { return &awsv1.EC2NodeClass{} })},
}

// skippedKinds are never listed: Events are many and live an hour, and
// none is written by a user.
var skippedKinds = map[string]bool{"Event": true}

// plan picks what to list: for every kind the checks read in depth or the
// deprecation table names (in any group its entries and replacements
// name), one served, listable version that is not deprecated at the
// cluster's version — a typed one when there is one, else the group's
// preferred. Kinds served only in a deprecated version (core/v1 Endpoints,
// ComponentStatus) are not listed: that would itself be a request of a
// deprecated API, which the apiserver_requested_deprecated_apis gauge then
// shows; the gauge says whether anything requests them.
func plan(s *served, current kubeversion.Minor) []target {
	type gk struct{ group, kind string }
	kinds := map[gk]bool{}
	group := func(apiVersion string) string {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return ""
		}
		return gv.Group
	}
	for k := range typedListers {
		kinds[gk{group(k.apiVersion), k.kind}] = true
	}
	for _, e := range deprecations.All() {
		kinds[gk{group(e.APIVersion), e.Kind}] = true
		if e.ReplacementAPIVersion != "" {
			kinds[gk{group(e.ReplacementAPIVersion), e.ReplacementKind}] = true
		}
	}
	var out []target
	for k := range kinds {
		if skippedKinds[k.kind] {
			continue
		}
		// Candidates: the group's versions, the preferred first.
		var versions []string
		if p := s.preferred[k.group]; p != "" {
			versions = append(versions, p)
		}
		for _, v := range s.versions[k.group] {
			if !slices.Contains(versions, v) {
				versions = append(versions, v)
			}
		}
		var chosen *target
		for _, gv := range versions {
			r, ok := s.byGV[gv][k.kind]
			if !ok || !slices.Contains(r.Verbs, "list") {
				continue
			}
			if e, ok := deprecations.Lookup(gv, k.kind); ok && !current.IsZero() && e.DeprecatedBy(current) {
				continue
			}
			pgv, _ := schema.ParseGroupVersion(gv)
			t := target{gvr: pgv.WithResource(r.Name), kind: k.kind, namespaced: r.Namespaced, list: listMetadata}
			if tl, ok := typedListers[typedKey{gv, k.kind}]; ok {
				t.required, t.list = tl.required, tl.list
				chosen = &t
				break
			}
			if chosen == nil {
				chosen = &t
			}
		}
		if chosen != nil {
			out = append(out, *chosen)
		}
	}
	slices.SortFunc(out, func(a, b target) int {
		return cmp.Or(cmp.Compare(a.gvr.Group, b.gvr.Group), cmp.Compare(a.kind, b.kind))
	})
	return out
}

// newObject is the insights.Object of a listed object. Its managedFields
// are read into WrittenAs and then dropped (they are most of a live
// object's size, and no check reads them).
func newObject(t target, m metav1.Object, typed any) *insights.Object {
	av := t.apiVersion()
	o := &insights.Object{
		Source:     insights.Source{Origin: liveOrigin(t.resourceName(), m.GetNamespace(), m.GetName())},
		APIVersion: av, Kind: t.kind, Namespace: m.GetNamespace(), Name: m.GetName(),
		Labels: m.GetLabels(), Annotations: m.GetAnnotations(),
		WrittenAs: WrittenAs(av, m), Typed: typed,
	}
	m.SetManagedFields(nil)
	return o
}

func liveOrigin(resource, namespace, name string) string {
	if namespace == "" {
		return "live:" + resource + "/" + name
	}
	return "live:" + resource + "/" + namespace + "/" + name
}

// WrittenAs lists the apiVersions, other than apiVersion, that an object
// was last written with: each manager's in metadata.managedFields, then
// the one of kubectl's kubectl.kubernetes.io/last-applied-configuration
// annotation. An object created through extensions/v1beta1 and read
// through networking.k8s.io/v1 says extensions/v1beta1 here until every
// manager that wrote it writes again.
func WrittenAs(apiVersion string, m metav1.Object) []string {
	var out []string
	add := func(v string) {
		if v != "" && v != apiVersion && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, f := range m.GetManagedFields() {
		add(f.APIVersion)
	}
	if a := m.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; a != "" {
		var h struct {
			APIVersion string `json:"apiVersion"`
		}
		if json.Unmarshal([]byte(a), &h) == nil {
			add(h.APIVersion)
		}
	}
	return out
}

// typed makes a lister of a built-in kind through the clientset.
func typed[PT interface {
	metav1.Object
	runtime.Object
}](page func(c *clients) pager.ListPageFunc) func(ctx context.Context, c *clients, t target, chunk int64) ([]*insights.Object, []insights.Problem, error) {
	return func(ctx context.Context, c *clients, t target, chunk int64) ([]*insights.Object, []insights.Problem, error) {
		var out []*insights.Object
		err := kubelist.Each(ctx, chunk, metav1.ListOptions{}, page(c), func(p PT) error {
			out = append(out, newObject(t, p, p))
			return nil
		})
		return out, nil, err
	}
}

// unstructuredTyped makes a lister of a custom resource the checks read in
// depth (Karpenter's): listed as JSON, converted into its Go type. An
// object that does not convert is kept with its metadata and a Problem.
func unstructuredTyped(newTyped func() any) func(ctx context.Context, c *clients, t target, chunk int64) ([]*insights.Object, []insights.Problem, error) {
	return func(ctx context.Context, c *clients, t target, chunk int64) ([]*insights.Object, []insights.Problem, error) {
		var out []*insights.Object
		var problems []insights.Problem
		ri := c.dyn.Resource(t.gvr)
		err := kubelist.Each(ctx, chunk, metav1.ListOptions{}, kubelist.Page(ri.List), func(u *unstructured.Unstructured) error {
			typed := newTyped()
			var tv any = typed
			convErr := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed)
			if convErr != nil {
				tv = nil
			}
			o := newObject(t, u, tv)
			if convErr != nil {
				problems = append(problems, insights.Problem{Source: o.Source, Object: o.Ref(), Severity: insights.Error,
					Message: fmt.Sprintf("could not be read as %s %s: %v; only its apiVersion was checked", t.apiVersion(), t.kind, convErr),
					Fix:     "check the object with kubectl get -o yaml; Ladder's Karpenter types may be older than the cluster's CRD"})
			}
			out = append(out, o)
			return nil
		})
		return out, problems, err
	}
}

// listMetadata lists a kind's objects as metadata only (apiVersion, kind,
// metadata with managedFields): what the API-version checks read.
func listMetadata(ctx context.Context, c *clients, t target, chunk int64) ([]*insights.Object, []insights.Problem, error) {
	var out []*insights.Object
	ri := c.meta.Resource(t.gvr)
	err := kubelist.Each(ctx, chunk, metav1.ListOptions{}, kubelist.Page(ri.List), func(m *metav1.PartialObjectMetadata) error {
		out = append(out, newObject(t, m, nil))
		return nil
	})
	return out, nil, err
}
