// Package materialize turns a scenario into objects of a real Kubernetes
// API server — the lab's (internal/lab) — so that real controllers, a real
// kube-scheduler and kubectl see the cluster the twin rehearses.
//
// The starting cluster is built by the twins first (twinbuild.Start), then
// copied: every node of every group becomes a KWOK node with the twin's
// labels, taints, capacity, providerID and kubelet version; each Karpenter
// node gets its NodeClaim and each bound claim its EBS volume; the
// scenario's manifests are applied as written, dependencies first, with the
// namespaces and ServiceAccounts they use but do not declare (EKS add-ons
// and Helm charts create their own accounts; their manifests in a scenario
// often only name them). Placing the pods is left to the real
// kube-scheduler — the twin's placement is not copied, only checked
// against — except for Fargate pods, which EKS's fargate-scheduler binds
// and which Apply binds to their Fargate nodes.
//
// What is not real: no kubelet (KWOK plays it: pods go Running, nothing
// runs), no AWS (no EC2 instance, EBS volume or ASG behind the objects), no
// Karpenter, EKS or Fargate controller acting after Apply returns.
package materialize

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/retry"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// FieldManager owns the fields Apply sets (server-side apply).
const FieldManager = "ladder"

// How long each phase may take before Apply gives up and says what is
// missing. A lab on two cores materializes the workshop in seconds; these
// leave room for a loaded machine without letting a broken lab hang.
var (
	crdTimeout  = time.Minute
	nodeTimeout = 90 * time.Second
	podTimeout  = 3 * time.Minute
	// pollInterval is how often a wait re-reads the API server.
	pollInterval = 250 * time.Millisecond
)

// twinSource marks the objects Apply makes from the twin's state rather
// than from a manifest.
var twinSource = manifest.Source{File: "the twin's starting cluster"}

// Apply materializes a scenario's starting cluster into the API server cfg
// points at, reporting each step to out, and returns once every pod the
// twin runs at the start runs there too. It may be run again on the same
// cluster: objects that exist are left or re-applied.
func Apply(ctx context.Context, cfg *rest.Config, sc *scenario.Scenario, out io.Writer) error {
	began := time.Now()
	snap, err := twinbuild.Start(sc)
	if err != nil {
		return err
	}
	docs, skipped, err := documents(sc)
	if err != nil {
		return err
	}
	c, err := newClient(cfg, out)
	if err != nil {
		return err
	}
	cl := sc.Spec.Cluster
	c.printf("Materializing scenario %s: cluster %s (EKS %s, %s), %d nodes, %d pods\n",
		sc.Metadata.Name, cl.Name, cl.Version, cl.Region, len(snap.Nodes), len(snap.Pods))
	if len(skipped) > 0 {
		c.printf("  note: the scenario's files could not be read again; not applied: %s\n", strings.Join(skipped, ", "))
	}
	if err := c.installCRDs(ctx); err != nil {
		return err
	}
	if err := c.createNodes(ctx, snap); err != nil {
		return err
	}
	plan, err := planObjects(snap, docs)
	if err != nil {
		return err
	}
	if err := c.applyAll(ctx, plan); err != nil {
		return err
	}
	if err := c.waitPods(ctx, snap); err != nil {
		return err
	}
	c.printf("Scenario %s materialized in %s\n", sc.Metadata.Name, since(began))
	return nil
}

// client is the API server and the progress output.
type client struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.ResettableRESTMapper
	out    io.Writer
}

func newClient(cfg *rest.Config, out io.Writer) (*client, error) {
	cfg = rest.CopyConfig(cfg)
	// A few hundred requests in a burst: client-go's default 5 QPS would
	// make materializing the workshop take a minute of throttling.
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("lab API server %s: %v", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("lab API server %s: %v", cfg.Host, err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	if out == nil {
		out = io.Discard
	}
	return &client{cs: cs, dyn: dyn, mapper: mapper, out: out}, nil
}

func (c *client) printf(format string, args ...any) { fmt.Fprintf(c.out, format, args...) }

// plan is everything Apply creates besides the nodes, in apply order.
type plan struct {
	docs []document
	// volumes, fargate and accounts say what the plan holds, for
	// progress lines.
	volumes  []string
	fargate  []string
	accounts []string
}

// planObjects lists what to apply: the manifests as written — but for the
// scheduler name of Fargate pods and the volume a bound claim names — and
// what the twin made that a manifest does not hold: the NodeClaims of
// Karpenter's nodes, the EBS volumes of bound claims, the claims of
// StatefulSets' volumeClaimTemplates, and any namespace or ServiceAccount
// used but not declared.
func planObjects(snap *twinbuild.Snapshot, manifests []document) (*plan, error) {
	p := &plan{}
	onFargate := fargateWorkloads(snap)
	bound := map[string]twinbuild.SnapshotVolume{} // namespace/name → volume
	for _, v := range snap.Volumes {
		if v.Zone != "" && v.Claim.Spec.VolumeName != "" {
			bound[v.Claim.Namespace+"/"+v.Claim.Name] = v
		}
	}
	declared := map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true}
	used := map[string]bool{}
	reclaim := map[string]corev1.PersistentVolumeReclaimPolicy{}
	fromManifest := map[string]bool{}
	accounts := map[string]bool{} // namespace/name → declared by a manifest
	for _, d := range manifests {
		u := d.obj.DeepCopy()
		key := u.GetNamespace() + "/" + u.GetName()
		switch u.GetKind() {
		case "Namespace":
			declared[u.GetName()] = true
		case "ServiceAccount":
			accounts[namespaceOf(u)+"/"+u.GetName()] = true
		case "StorageClass":
			if r, ok, _ := unstructured.NestedString(u.Object, "reclaimPolicy"); ok {
				reclaim[u.GetName()] = corev1.PersistentVolumeReclaimPolicy(r)
			}
		case "PersistentVolumeClaim":
			if u.GetNamespace() == "" {
				key = "default/" + u.GetName()
			}
			fromManifest[key] = true
			if v, ok := bound[key]; ok {
				if err := unstructured.SetNestedField(u.Object, v.Claim.Spec.VolumeName, "spec", "volumeName"); err != nil {
					return nil, fmt.Errorf("%s: %v", d, err)
				}
			}
		}
		if ns := u.GetNamespace(); ns != "" {
			used[ns] = true
		}
		if onFargate[workloadKey{u.GetKind(), namespaceOf(u), u.GetName()}] {
			if err := toFargate(u); err != nil {
				return nil, fmt.Errorf("%s: %v", d.src, err)
			}
			p.fargate = append(p.fargate, u.GetKind()+" "+namespaceOf(u)+"/"+u.GetName())
		}
		p.docs = append(p.docs, document{src: d.src, obj: u})
	}
	for _, v := range snap.Volumes {
		used[v.Claim.Namespace] = true
	}
	for _, d := range p.docs {
		key := namespaceOf(d.obj) + "/" + serviceAccountOf(d.obj)
		if _, ok := accounts[key]; ok || serviceAccountOf(d.obj) == "default" {
			continue
		}
		accounts[key] = false
		ns, name, _ := strings.Cut(key, "/")
		if err := p.add(&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			return nil, err
		}
		p.accounts = append(p.accounts, key)
	}
	sort.Strings(p.accounts)
	for _, ns := range sortedTrue(used) {
		if !declared[ns] {
			if err := p.add(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				return nil, err
			}
		}
	}
	for _, key := range sortedKeys(bound) {
		v := bound[key]
		class := ""
		if v.Claim.Spec.StorageClassName != nil {
			class = *v.Claim.Spec.StorageClassName
		}
		if err := p.add(ebsVolume(v, reclaim[class])); err != nil {
			return nil, err
		}
		if !fromManifest[key] {
			if err := p.add(templateClaim(v.Claim)); err != nil {
				return nil, err
			}
		}
		p.volumes = append(p.volumes, fmt.Sprintf("%s in %s", key, v.Zone))
	}
	nodes := map[string]*corev1.Node{}
	for _, n := range snap.Nodes {
		nodes[n.Name] = n
	}
	for _, nc := range snap.NodeClaims {
		n, ok := nodes[nc.Node]
		if !ok {
			continue // launched, not registered yet: no node to copy
		}
		u, err := nodeClaim(nc, n)
		if err != nil {
			return nil, err
		}
		p.docs = append(p.docs, document{src: twinSource, obj: u})
	}
	sort.SliceStable(p.docs, func(i, j int) bool { return kindRank(p.docs[i].obj.GetKind()) < kindRank(p.docs[j].obj.GetKind()) })
	return p, nil
}

// serviceAccountOf is the ServiceAccount a workload's pods run as
// ("default" when the template names none); "default" for an object that
// makes no pods.
func serviceAccountOf(u *unstructured.Unstructured) string {
	path, ok := podSpecPath[u.GetKind()]
	if !ok {
		return "default"
	}
	spec, _, _ := unstructured.NestedMap(u.Object, path...)
	for _, field := range []string{"serviceAccountName", "serviceAccount"} { // the second is deprecated, still honoured
		if name, ok := spec[field].(string); ok && name != "" {
			return name
		}
	}
	return "default"
}

// twinDoc is an object built from the twin's state, ready to apply.
func twinDoc(obj runtime.Object) (document, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return document{}, fmt.Errorf("converting a %T: %v", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "status")
	dropNulls(u.Object) // metadata.creationTimestamp, among others
	return document{src: twinSource, obj: u}, nil
}

func (p *plan) add(obj runtime.Object) error {
	d, err := twinDoc(obj)
	if err != nil {
		return err
	}
	p.docs = append(p.docs, d)
	return nil
}

// namespaceOf is an object's namespace as kubectl apply defaults it.
func namespaceOf(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns
	}
	return "default"
}

// workloadKey is a workload by kind, namespace and name.
type workloadKey struct{ kind, namespace, name string }

func (k workloadKey) String() string { return k.kind + " " + k.namespace + "/" + k.name }

// fargateWorkloads are the workloads whose pods the twin runs on Fargate
// nodes: the pods a Fargate profile selected at admission.
func fargateWorkloads(snap *twinbuild.Snapshot) map[workloadKey]bool {
	out := map[workloadKey]bool{}
	for _, p := range snap.Pods {
		if snap.Groups[p.Pod.Spec.NodeName].Type != "fargate" {
			continue
		}
		if p.Workload.Kind == "" {
			out[workloadKey{"Pod", p.Pod.Namespace, p.Pod.Name}] = true
		} else {
			out[workloadKey{p.Workload.Kind, p.Pod.Namespace, p.Workload.Name}] = true
		}
	}
	return out
}

// applyAll server-side applies the plan in order, and the status of the
// NodeClaims (a subresource, which Karpenter would fill in).
func (c *client) applyAll(ctx context.Context, p *plan) error {
	t := time.Now()
	kinds := map[string]int{}
	var order []string
	for _, d := range p.docs {
		if err := c.apply(ctx, d); err != nil {
			return err
		}
		k := d.obj.GetKind()
		if kinds[k] == 0 {
			order = append(order, k)
		}
		kinds[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d %s", kinds[k], k)
	}
	c.printf("  applied %d objects: %s (%s)\n", len(p.docs), strings.Join(parts, ", "), since(t))
	if len(p.volumes) > 0 {
		c.printf("  EBS volumes pre-provisioned and bound, as the twin placed them: %s\n", strings.Join(p.volumes, ", "))
	}
	if len(p.accounts) > 0 {
		c.printf("  ServiceAccounts the pods run as but no manifest declares, created as their add-on or chart would: %s\n", strings.Join(p.accounts, ", "))
	}
	if len(p.fargate) > 0 {
		c.printf("  Fargate: %s get schedulerName %s (EKS's admission webhook sets it; the lab has none)\n", strings.Join(p.fargate, ", "), FargateScheduler)
	}
	return nil
}

func (c *client) apply(ctx context.Context, d document) error {
	u := d.obj
	gvk := u.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("%s: the lab's API server does not serve %s in %s (install its CRD first, or remove the object from the scenario)", d, gvk.Kind, gvk.GroupVersion())
		}
		return fmt.Errorf("%s: %v", d, err)
	}
	ri := c.dyn.Resource(mapping.Resource)
	var r dynamic.ResourceInterface = ri
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		r = ri.Namespace(u.GetNamespace())
	}
	status, hasStatus, _ := unstructured.NestedMap(u.Object, "status")
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	if _, err := r.Apply(ctx, u.GetName(), u, opts); err != nil {
		return fmt.Errorf("applying %s: %v", d, apiReason(err))
	}
	if hasStatus && u.GetKind() == "NodeClaim" {
		s := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
			"metadata": map[string]any{"name": u.GetName()}, "status": status,
		}}
		if _, err := r.ApplyStatus(ctx, u.GetName(), s, opts); err != nil {
			return fmt.Errorf("applying the status of %s: %v", d, apiReason(err))
		}
	}
	return nil
}

// createNodes creates every node of the twin as a KWOK node and waits until
// KWOK has made each Ready (and the node lifecycle controller has lifted
// the not-ready taint), then checks that the kubelet and kube-proxy
// versions the twin gave them survived KWOK's initialization.
func (c *client) createNodes(ctx context.Context, snap *twinbuild.Snapshot) error {
	t := time.Now()
	existing := 0
	for _, n := range snap.Nodes {
		_, err := c.cs.CoreV1().Nodes().Create(ctx, KWOKNode(n), metav1.CreateOptions{FieldManager: FieldManager})
		switch {
		case apierrors.IsAlreadyExists(err):
			existing++
		case err != nil:
			return fmt.Errorf("creating node %s: %v", describeNode(n.Name, snap.Groups[n.Name]), apiReason(err))
		}
	}
	want := map[string]*corev1.Node{}
	for _, n := range snap.Nodes {
		want[n.Name] = n
	}
	var notReady []string
	err := poll(ctx, nodeTimeout, func(ctx context.Context) (bool, error) {
		l, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, fmt.Errorf("listing nodes: %v", apiReason(err))
		}
		notReady = notReady[:0]
		seen := map[string]bool{}
		for i := range l.Items {
			n := &l.Items[i]
			if want[n.Name] == nil {
				continue
			}
			seen[n.Name] = true
			if why := nodeNotReady(n); why != "" {
				notReady = append(notReady, n.Name+" "+why)
			}
		}
		for name := range want {
			if !seen[name] {
				notReady = append(notReady, name+" is gone")
			}
		}
		return len(notReady) == 0, nil
	})
	if err != nil {
		sort.Strings(notReady)
		return fmt.Errorf("%d of %d nodes not Ready after %s: %s (is KWOK running with --manage-nodes-with-annotation-selector=%s=%s, and kube-controller-manager?)",
			len(notReady), len(want), nodeTimeout, strings.Join(first(notReady, 3), "; "), KwokAnnotation, KwokValue)
	}
	restored, err := c.restoreNodeInfo(ctx, snap)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("  %d KWOK nodes Ready: %s", len(snap.Nodes), groupCounts(snap))
	if existing > 0 {
		msg += fmt.Sprintf("; %d already existed", existing)
	}
	if restored > 0 {
		msg += fmt.Sprintf("; status.nodeInfo of %d restored after KWOK changed it", restored)
	}
	c.printf("%s (%s)\n", msg, since(t))
	return nil
}

// nodeNotReady says why a node cannot take pods yet, or "".
func nodeNotReady(n *corev1.Node) string {
	ready := false
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			ready = cond.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return "is not Ready"
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return "still has the " + t.Key + " taint"
		}
	}
	return ""
}

// restoreNodeInfo puts the twin's kubelet and kube-proxy versions back on
// any node whose status.nodeInfo KWOK replaced; KWOK v0.8's node-initialize
// stage keeps the values it finds, so this normally finds nothing to do.
func (c *client) restoreNodeInfo(ctx context.Context, snap *twinbuild.Snapshot) (int, error) {
	restored := 0
	for _, twin := range snap.Nodes {
		want := twin.Status.NodeInfo
		changed := false
		// KWOK writes the node's status (heartbeats, conditions) while we
		// do: read it again on a conflict.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := c.cs.CoreV1().Nodes().Get(ctx, twin.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			got := n.Status.NodeInfo
			//lint:ignore SA1019 EKS nodes still report it; the twin sets it
			if got.KubeletVersion == want.KubeletVersion && got.KubeProxyVersion == want.KubeProxyVersion {
				return nil
			}
			n.Status.NodeInfo.KubeletVersion = want.KubeletVersion
			//lint:ignore SA1019 EKS nodes still report it; the twin sets it
			n.Status.NodeInfo.KubeProxyVersion = want.KubeProxyVersion
			_, err = c.cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{FieldManager: FieldManager})
			changed = err == nil
			return err
		})
		if err != nil {
			return restored, fmt.Errorf("restoring status.nodeInfo of node %s: %v", twin.Name, apiReason(err))
		}
		if changed {
			restored++
		}
	}
	return restored, nil
}

// groupCounts is "initial 3, custom-Y 2, …" in the order of the scenario's
// node groups.
func groupCounts(snap *twinbuild.Snapshot) string {
	counts := map[string]int{}
	var order []string
	for _, n := range snap.Nodes {
		g := snap.Groups[n.Name].Name
		if counts[g] == 0 {
			order = append(order, g)
		}
		counts[g]++
	}
	sort.Strings(order)
	parts := make([]string, len(order))
	for i, g := range order {
		parts[i] = fmt.Sprintf("%s %d", g, counts[g])
	}
	return strings.Join(parts, ", ")
}

// poll calls check every pollInterval until it reports done, fails, or the
// timeout (or ctx) ends.
func poll(ctx context.Context, timeout time.Duration, check func(context.Context) (bool, error)) error {
	return wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, check)
}

// apiReason is the API server's message for a failed request.
func apiReason(err error) string {
	var status apierrors.APIStatus
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s
	}
	if status != nil && status.Status().Message != "" {
		return fmt.Sprintf("%s (%s)", status.Status().Message, status.Status().Reason)
	}
	return err.Error()
}

func since(t time.Time) string { return time.Since(t).Round(10 * time.Millisecond).String() }

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}

func sortedTrue(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
