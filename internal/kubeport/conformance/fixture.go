package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// NodeLabel is set on every node the suite makes, to its name; the suite's
// pods select their node with it, so cases sharing a real cluster never
// land on each other's nodes.
const NodeLabel = "conformance.ladder.dev/node"

// fixture builds one case's objects and waits on the port.
type fixture struct {
	ctx context.Context
	env Env
	ns  string
}

// addNode registers a Ready node named <namespace>-<suffix>.
func (f *fixture) addNode(suffix string) (string, error) {
	name := f.ns + "-" + suffix
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			NodeLabel:                name,
			corev1.LabelHostname:     name,
			corev1.LabelOSStable:     "linux",
			corev1.LabelArchStable:   "amd64",
			corev1.LabelTopologyZone: "zone-a",
		}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if err := f.env.AddNode(f.ctx, n); err != nil {
		return "", fmt.Errorf("add node %s: %w", name, err)
	}
	return name, nil
}

func (f *fixture) create(obj metav1.Object) error {
	obj.SetNamespace(f.ns)
	if err := f.env.Create(f.ctx, obj); err != nil {
		return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// podSpec is a one-container pod pinned to node by NodeLabel.
func podSpec(node string) corev1.PodSpec {
	return corev1.PodSpec{
		NodeSelector: map[string]string{NodeLabel: node},
		Containers:   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
	}
}

// deployment creates Deployment name (pods labelled app=name) on node.
func (f *fixture) deployment(name string, replicas int32, node string, mutate ...func(*corev1.PodSpec)) error {
	spec := podSpec(node)
	for _, m := range mutate {
		m(&spec)
	}
	return f.create(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       spec,
			},
		},
	})
}

// daemonSet creates DaemonSet name (pods labelled app=name) on node only.
// deploymentOnNewNode adds node n0 and creates Deployment name on it.
func (f *fixture) deploymentOnNewNode(name string, replicas int32) error {
	n0, err := f.addNode("n0")
	if err != nil {
		return err
	}
	return f.deployment(name, replicas, n0)
}

func (f *fixture) daemonSet(name, node string) error {
	return f.create(&appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       podSpec(node),
			},
		},
	})
}

// statefulSet creates StatefulSet name (pods labelled app=name) on node.
func (f *fixture) statefulSet(name string, replicas int32, node string) error {
	return f.create(&appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       podSpec(node),
			},
		},
	})
}

// barePod creates a pod with no controller. node "" leaves it to the
// scheduler; otherwise it is bound to node through spec.nodeName, as a
// kubelet's static pods are.
func (f *fixture) barePod(name string, lbls, annotations map[string]string, spec corev1.PodSpec) error {
	return f.create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls, Annotations: annotations},
		Spec:       spec,
	})
}

// pdbSpec says how a PDB limits disruptions.
type pdbSpec struct {
	name           string
	app            string // selects pods labelled app=<app>
	minAvailable   *intstr.IntOrString
	maxUnavailable *intstr.IntOrString
	policy         *policyv1.UnhealthyPodEvictionPolicyType
}

func intOrStr(i int) *intstr.IntOrString { v := intstr.FromInt32(int32(i)); return &v }

func (f *fixture) pdb(s pdbSpec) error {
	return f.create(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: s.name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:                   &metav1.LabelSelector{MatchLabels: map[string]string{"app": s.app}},
			MinAvailable:               s.minAvailable,
			MaxUnavailable:             s.maxUnavailable,
			UnhealthyPodEvictionPolicy: s.policy,
		},
	})
}

func appSelector(app string) labels.Selector { return labels.SelectorFromSet(labels.Set{"app": app}) }

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyPods waits until exactly n pods labelled app=<app> exist, not
// terminating, all Running and Ready, and returns them sorted by name.
func (f *fixture) readyPods(app string, n int) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	var last string
	err := f.env.Wait(f.ctx, waitTimeout, func(ctx context.Context) (bool, error) {
		all, err := f.env.ListPods(ctx, kubeport.PodQuery{Namespace: f.ns, Selector: appSelector(app)})
		if err != nil {
			return false, err
		}
		pods = pods[:0]
		var states []string
		for i := range all {
			p := &all[i]
			states = append(states, fmt.Sprintf("%s %s ready=%v deleting=%v", p.Name, p.Status.Phase, isReady(p), p.DeletionTimestamp != nil))
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && isReady(p) {
				pods = append(pods, *p)
			}
		}
		last = strings.Join(states, "; ")
		return len(pods) == n && len(all) == n, nil
	})
	if err != nil {
		return nil, mismatchf("waiting for %d Ready pods of app=%s: %v (last seen: %s)", n, app, err, last)
	}
	return pods, nil
}

// pdbStatus is the part of a PDB's status the disruption controller
// computes (semantics.md §D.2).
type pdbStatus struct {
	CurrentHealthy, DesiredHealthy, DisruptionsAllowed, ExpectedPods int32
}

func statusOf(p *policyv1.PodDisruptionBudget) pdbStatus {
	return pdbStatus{p.Status.CurrentHealthy, p.Status.DesiredHealthy, p.Status.DisruptionsAllowed, p.Status.ExpectedPods}
}

// waitPDB waits until the PDB's status is observed for its generation and
// equals want.
func (f *fixture) waitPDB(name string, want pdbStatus) error {
	var last string
	err := f.env.Wait(f.ctx, waitTimeout, func(ctx context.Context) (bool, error) {
		pdbs, err := f.env.ListPDBs(ctx, f.ns)
		if err != nil {
			return false, err
		}
		for i := range pdbs {
			p := &pdbs[i]
			if p.Name != name {
				continue
			}
			got := statusOf(p)
			last = fmt.Sprintf("%+v observedGeneration=%d generation=%d", got, p.Status.ObservedGeneration, p.Generation)
			return p.Status.ObservedGeneration == p.Generation && got == want, nil
		}
		last = "no such PDB"
		return false, nil
	})
	if err != nil {
		return mismatchf("PDB %s: want status %+v: %v (last seen: %s)", name, want, err, last)
	}
	return nil
}

// gone waits until a pod no longer exists.
func (f *fixture) gone(name string) error {
	err := f.env.Wait(f.ctx, waitTimeout, func(ctx context.Context) (bool, error) {
		_, err := f.env.GetPod(ctx, f.ns, name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return mismatchf("pod %s should be gone: %v", name, err)
	}
	return nil
}

// untouched checks that a pod still exists and is not terminating.
func (f *fixture) untouched(name string) error {
	p, err := f.env.GetPod(f.ctx, f.ns, name)
	if err != nil {
		return mismatchf("pod %s should still exist: %v", name, err)
	}
	if p.DeletionTimestamp != nil {
		return mismatchf("pod %s should not be terminating, has deletionTimestamp %s", name, p.DeletionTimestamp)
	}
	return nil
}

// evicted checks a pod just evicted: gone, or terminating with the
// DisruptionTarget condition the eviction subresource adds before it
// deletes (semantics.md §D.1 addConditionAndDeletePod).
func (f *fixture) evicted(name string) error {
	p, err := f.env.GetPod(f.ctx, f.ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.DeletionTimestamp == nil {
		return mismatchf("pod %s was evicted but has no deletionTimestamp", name)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "EvictionByEvictionAPI" {
			return nil
		}
	}
	return mismatchf("evicted pod %s lacks condition DisruptionTarget=True reason EvictionByEvictionAPI: %+v", name, p.Status.Conditions)
}

// wantStatus is the API status an error must carry.
type wantStatus struct {
	Code       int32
	Reason     metav1.StatusReason
	Message    string
	Causes     []metav1.StatusCause
	RetryAfter int32
}

// check compares err's status with w, naming what was called.
func (w wantStatus) check(call string, err error) error {
	if err == nil {
		return mismatchf("%s: want HTTP %d %q, got success", call, w.Code, w.Message)
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return mismatchf("%s: want an API status error (HTTP %d), got %T: %v", call, w.Code, err, err)
	}
	s := st.Status()
	var causes []metav1.StatusCause
	var retry int32
	if s.Details != nil {
		causes, retry = s.Details.Causes, s.Details.RetryAfterSeconds
	}
	got := wantStatus{Code: s.Code, Reason: s.Reason, Message: s.Message, Causes: causes, RetryAfter: retry}
	if len(got.Causes) == 0 {
		got.Causes = nil
	}
	if !reflect.DeepEqual(got, w) {
		return mismatchf("%s:\n  want %+v\n  got  %+v", call, w, got)
	}
	return nil
}

// pdbViolation is the 429 of an exhausted PDB (semantics.md §D.1
// checkAndDecrement).
func pdbViolation(pdb string, desired, current int) wantStatus {
	return wantStatus{
		Code:    429,
		Reason:  metav1.StatusReasonTooManyRequests,
		Message: "Cannot evict pod as it would violate the pod's disruption budget.",
		Causes: []metav1.StatusCause{{
			Type:    policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb, desired, current),
		}},
	}
}

// notFound is the 404 for a missing object (resource "pods", "nodes").
func notFound(resource, name string) wantStatus {
	return wantStatus{
		Code:    404,
		Reason:  metav1.StatusReasonNotFound,
		Message: fmt.Sprintf("%s %q not found", resource, name),
	}
}

func ptr[T any](v T) *T { return &v }
