package live

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// These tests check the plumbing on client-go's fake clientset, which
// implements none of the API server's rules: what each call sends and that
// errors come back untouched. The behaviour is checked against a real API
// server by the conformance suite (lab_test.go, -tags lab).

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"keep": "yes"}}}
}

func pod(ns, name, node string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func TestEvictSendsPolicyV1EvictionAndReturnsTheStatusError(t *testing.T) {
	cs := fake.NewClientset(pod("ns", "web-1", "n1", nil))
	refusal := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	refusal.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget web needs 2 healthy pods and has 2 currently"}}
	var sent *policyv1.Eviction
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		sent = a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		return true, nil, refusal
	})
	err := New(cs, Options{}).Evict(context.Background(), "ns", "web-1")
	if sent == nil || sent.Name != "web-1" || sent.Namespace != "ns" {
		t.Fatalf("eviction sent = %+v, want policy/v1 Eviction ns/web-1", sent)
	}
	var st *apierrors.StatusError
	if !errors.As(err, &st) || st != refusal || !apierrors.IsTooManyRequests(err) {
		t.Fatalf("Evict error = %#v, want the reactor's 429 StatusError itself", err)
	}
}

func TestListPodsSendsSelectorsAndSorts(t *testing.T) {
	cs := fake.NewClientset(
		pod("b", "x", "n1", map[string]string{"app": "web"}),
		pod("a-b", "y", "n1", map[string]string{"app": "web"}),
		pod("a", "z", "n1", map[string]string{"app": "web"}),
	)
	var restrictions k8stesting.ListRestrictions
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		restrictions = a.(k8stesting.ListAction).GetListRestrictions()
		return false, nil, nil
	})
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	pods, err := New(cs, Options{}).ListPods(context.Background(), kubeport.PodQuery{Node: "n1", Selector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if got := restrictions.Fields.String(); got != "spec.nodeName=n1" {
		t.Errorf("field selector = %q, want spec.nodeName=n1", got)
	}
	if got := restrictions.Labels.String(); got != "app=web" {
		t.Errorf("label selector = %q, want app=web", got)
	}
	var got []string
	for _, p := range pods {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	want := []string{"a/z", "a-b/y", "b/x"} // namespace, then name
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestPatchNodeRetriesAConflict(t *testing.T) {
	n := node("n1")
	n.Spec.Taints = []corev1.Taint{{Key: "old", Effect: corev1.TaintEffectNoSchedule}}
	cs := fake.NewClientset(n)
	conflicts := 1
	cs.PrependReactor("update", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("the object has been modified"))
		}
		return false, nil, nil
	})
	v := "batch"
	got, err := New(cs, Options{}).PatchNode(context.Background(), "n1", kubeport.NodePatch{
		Labels:       map[string]*string{"role": &v, "keep": nil},
		AddTaints:    []corev1.Taint{{Key: "new", Value: "1", Effect: corev1.TaintEffectNoExecute}},
		RemoveTaints: []string{"old"},
	})
	if err != nil {
		t.Fatalf("PatchNode after one conflict: %v", err)
	}
	if conflicts != 0 {
		t.Fatal("the conflicting update was never attempted")
	}
	if got.Labels["role"] != "batch" || got.Labels["keep"] != "" || len(got.Spec.Taints) != 1 || got.Spec.Taints[0].Key != "new" {
		t.Errorf("patched node = labels %v taints %v, want role=batch only and taint new only", got.Labels, got.Spec.Taints)
	}
}

func TestCordonAndMissingNode(t *testing.T) {
	cs := fake.NewClientset(node("n1"))
	p := New(cs, Options{})
	ctx := context.Background()
	if err := p.Cordon(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	n, _ := p.GetNode(ctx, "n1")
	if !n.Spec.Unschedulable {
		t.Error("Cordon did not set spec.unschedulable")
	}
	if err := p.Uncordon(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if n, _ = p.GetNode(ctx, "n1"); n.Spec.Unschedulable {
		t.Error("Uncordon did not clear spec.unschedulable")
	}
	if err := p.Cordon(ctx, "nope"); !apierrors.IsNotFound(err) {
		t.Errorf("Cordon(missing) = %v, want NotFound", err)
	}
	if err := p.Drain(ctx, "nope", kubeport.DrainOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Drain(missing) = %v, want NotFound", err)
	}
}

// TestDrainRefusalIsKubectls: the filters are kubectl's own, so an
// unreplicated pod refuses the drain with kubectl's message, after the
// cordon and before any eviction.
func TestDrainRefusalIsKubectls(t *testing.T) {
	cs := fake.NewClientset(node("n1"), pod("ns", "lonely", "n1", nil))
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		t.Errorf("unexpected %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		return true, nil, nil
	})
	p := New(cs, Options{})
	err := p.Drain(context.Background(), "n1", kubeport.DrainOptions{})
	want := "cannot delete Pods that declare no controller (use --force to override): ns/lonely"
	if err == nil || err.Error() != want {
		t.Fatalf("Drain = %v, want %q", err, want)
	}
	if n, _ := p.GetNode(context.Background(), "n1"); !n.Spec.Unschedulable {
		t.Error("a refused drain must leave the node cordoned, as kubectl does")
	}
}

func TestWaitReturnsCondErrorAndTimesOut(t *testing.T) {
	p := New(fake.NewClientset(), Options{PollInterval: time.Millisecond})
	ctx := context.Background()
	boom := errors.New("boom")
	if err := p.Wait(ctx, time.Minute, func(context.Context) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("Wait = %v, want the condition's error", err)
	}
	calls := 0
	err := p.Wait(ctx, 20*time.Millisecond, func(context.Context) (bool, error) { calls++; return false, nil })
	if !errors.Is(err, kubeport.ErrWaitTimeout) {
		t.Errorf("Wait = %v, want ErrWaitTimeout", err)
	}
	if calls < 2 {
		t.Errorf("condition checked %d times in 20ms at a 1ms interval, want it polled", calls)
	}
	if err := p.Wait(ctx, time.Minute, func(context.Context) (bool, error) { return true, nil }); err != nil {
		t.Errorf("Wait on a true condition = %v", err)
	}
}

// pagedNodes serves a node list in pages of the request's limit, with
// continue tokens "page-N"; expire names a token to refuse with 410.
func pagedNodes(t *testing.T, cs *fake.Clientset, names []string, expire string, requests *[]metav1.ListOptions) {
	cs.PrependReactor("list", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).GetListOptions()
		*requests = append(*requests, opts)
		if opts.Continue != "" && opts.Continue == expire {
			return true, nil, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result.")
		}
		from := 0
		if opts.Continue != "" {
			if _, err := fmt.Sscanf(opts.Continue, "page-%d", &from); err != nil {
				t.Errorf("bad continue token %q", opts.Continue)
			}
		}
		to := len(names)
		if opts.Limit > 0 {
			to = min(to, from+int(opts.Limit))
		}
		l := &corev1.NodeList{}
		for _, n := range names[from:to] {
			l.Items = append(l.Items, *node(n))
		}
		if to < len(names) {
			l.Continue = fmt.Sprintf("page-%d", to)
		}
		return true, l, nil
	})
}

func nodeNames(nodes []corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

// TestListsPaginate: lists go in pages of ChunkSize (kubectl's 500 by
// default), following continue tokens; an expired token restarts the list
// in one request, as client-go's pager does.
func TestListsPaginate(t *testing.T) {
	names := []string{"e", "d", "c", "b", "a"}
	want := []string{"a", "b", "c", "d", "e"}
	ctx := context.Background()

	var reqs []metav1.ListOptions
	cs := fake.NewClientset()
	pagedNodes(t, cs, names, "", &reqs)
	got, err := New(cs, Options{ChunkSize: 2}).ListNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(nodeNames(got), want) {
		t.Errorf("ListNodes in pages of 2 = %v, want %v", nodeNames(got), want)
	}
	var sent []string
	for _, r := range reqs {
		sent = append(sent, fmt.Sprintf("limit=%d continue=%q", r.Limit, r.Continue))
	}
	wantSent := []string{`limit=2 continue=""`, `limit=2 continue="page-2"`, `limit=2 continue="page-4"`}
	if !reflect.DeepEqual(sent, wantSent) {
		t.Errorf("requests = %v, want %v", sent, wantSent)
	}

	reqs = nil
	if _, err := New(cs, Options{}).ListNodes(ctx); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].Limit != 500 {
		t.Errorf("default requests = %+v, want one with limit 500 (kubectl's --chunk-size)", reqs)
	}

	reqs = nil
	cs = fake.NewClientset()
	pagedNodes(t, cs, names, "page-2", &reqs)
	got, err = New(cs, Options{ChunkSize: 2}).ListNodes(ctx)
	if err != nil {
		t.Fatalf("ListNodes with an expired continue token: %v", err)
	}
	if !reflect.DeepEqual(nodeNames(got), want) {
		t.Errorf("ListNodes after an expired token = %v, want %v (no duplicates)", nodeNames(got), want)
	}
	if last := reqs[len(reqs)-1]; len(reqs) != 3 || last.Limit != 0 || last.Continue != "" {
		t.Errorf("requests = %+v, want the first page, the expired one, then one full list", reqs)
	}
}

func forbiddenErr(verb, resource, name string) *apierrors.StatusError {
	return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, name,
		fmt.Errorf("User %q cannot %s resource %q", "system:serviceaccount:ns:sa", verb, resource))
}

// evictionDiscovery makes the fake clientset announce policy/v1 evictions,
// as an API server does, so kubectl's drain evicts rather than deletes.
func evictionDiscovery(cs *fake.Clientset) {
	cs.Resources = []*metav1.APIResourceList{{
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{{Name: "pods/eviction", Kind: "Eviction", Group: "policy", Version: "v1"}},
	}}
}

// TestErrorsAreTheAPIServers: a refusal reaches the caller as the
// StatusError client-go returned — the very value for single calls and
// Cordon, kubectl's message unwrapping to it for Drain.
func TestErrorsAreTheAPIServers(t *testing.T) {
	ctx := context.Background()
	refuse := func(cs *fake.Clientset, verb, resource, sub string, err error) {
		cs.PrependReactor(verb, resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetSubresource() != sub {
				return false, nil, nil
			}
			return true, nil, err
		})
	}

	t.Run("lists", func(t *testing.T) {
		cs := fake.NewClientset()
		refusal := forbiddenErr("list", "pods", "")
		refuse(cs, "list", "pods", "", refusal)
		if _, err := New(cs, Options{}).ListPods(ctx, kubeport.PodQuery{}); err != refusal {
			t.Errorf("ListPods = %#v, want the 403 itself", err)
		}
	})

	t.Run("cordon", func(t *testing.T) {
		cs := fake.NewClientset(node("n1"))
		refusal := forbiddenErr("patch", "nodes", "n1")
		refuse(cs, "patch", "nodes", "", refusal)
		p := New(cs, Options{})
		if err := p.Cordon(ctx, "n1"); err != refusal {
			t.Errorf("Cordon = %#v, want the 403 itself (not kubectl's \"cordon error: ...\")", err)
		}
		if err := p.Drain(ctx, "n1", kubeport.DrainOptions{}); err != refusal {
			t.Errorf("Drain = %#v, want the cordon's 403 itself", err)
		}
	})

	t.Run("drain lists the node's pods", func(t *testing.T) {
		cs := fake.NewClientset(node("n1"))
		refusal := forbiddenErr("list", "pods", "")
		refuse(cs, "list", "pods", "", refusal)
		if err := New(cs, Options{}).Drain(ctx, "n1", kubeport.DrainOptions{}); err != refusal {
			t.Errorf("Drain = %#v, want the list's 403 itself (RunNodeDrain aggregates it alone)", err)
		}
	})

	t.Run("drain evicts", func(t *testing.T) {
		web := pod("ns", "web-1", "n1", nil)
		web.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", Controller: ptr(true)}}
		api := pod("ns", "api-1", "n1", nil)
		api.OwnerReferences = web.OwnerReferences
		cs := fake.NewClientset(node("n1"), web, api)
		evictionDiscovery(cs)
		forbidden := forbiddenErr("create", "pods/eviction", "web-1")
		twoPDBs := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}}
		cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetSubresource() != "eviction" {
				return false, nil, nil
			}
			if a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction).Name == "web-1" {
				return true, nil, forbidden
			}
			return true, nil, twoPDBs
		})
		err := New(cs, Options{}).Drain(ctx, "n1", kubeport.DrainOptions{})
		if err == nil {
			t.Fatal("Drain succeeded, want both evictions' errors")
		}
		// kubectl's words, in the order the pods finished.
		msgs := []string{
			`error when evicting pods/"web-1" -n "ns": ` + forbidden.Error(),
			`error when evicting pods/"api-1" -n "ns": ` + twoPDBs.Error(),
		}
		if got := err.Error(); got != "["+msgs[0]+", "+msgs[1]+"]" && got != "["+msgs[1]+", "+msgs[0]+"]" {
			t.Errorf("Drain error = %q, want kubectl's aggregate of %q", got, msgs)
		}
		var agg utilerrors.Aggregate
		if !errors.As(err, &agg) || len(agg.Errors()) != 2 {
			t.Errorf("Drain error is not kubectl's aggregate of two: %#v", err)
		}
		var st *apierrors.StatusError
		if !apierrors.IsForbidden(err) || !errors.As(err, &st) || (st != forbidden && st != twoPDBs) {
			t.Errorf("Drain error does not unwrap to the 403: IsForbidden=%v As=%v", apierrors.IsForbidden(err), st)
		}
		if !errors.Is(err, twoPDBs) || !errors.Is(err, forbidden) {
			t.Error("Drain error does not unwrap to both eviction errors")
		}
	})
}

func TestDrainErrorLeavesKubectlsErrorsAlone(t *testing.T) {
	if drainError(nil, nil) != nil {
		t.Error("drainError(nil) != nil")
	}
	plain := errors.New("boom")
	if got := drainError(plain, nil); got != plain {
		t.Errorf("drainError(plain) = %#v, want it unchanged", got)
	}
	refusal := utilerrors.NewAggregate([]error{errors.New("cannot delete Pods that declare no controller (use --force to override): ns/lonely")})
	if got := drainError(refusal, nil); got.Error() != refusal.Error() {
		t.Errorf("drainError(filter refusal) = %q, want %q", got, refusal)
	}
}

func ptr[T any](v T) *T { return &v }

// Whatever order kubectl's concurrent evictions finished in, Drain's error
// unwraps first to a 403, so apierrors.IsForbidden tells a caller that
// permissions are missing.
func TestDrainErrorPutsTheForbiddenFirst(t *testing.T) {
	forbidden := forbiddenErr("create", "pods/eviction", "web-1")
	twoPDBs := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: "two PDBs"}}
	kubectl := utilerrors.NewAggregate([]error{errors.New(`error when evicting pods/"api-1" -n "ns": two PDBs`),
		errors.New(`error when evicting pods/"web-1" -n "ns": forbidden`)})
	for _, evictions := range [][]error{{twoPDBs, forbidden}, {forbidden, twoPDBs}} {
		err := drainError(kubectl, evictions)
		var st *apierrors.StatusError
		if !apierrors.IsForbidden(err) || !errors.As(err, &st) || st != forbidden {
			t.Errorf("evictions finished as %v: IsForbidden=%v, As=%v", evictions, apierrors.IsForbidden(err), st)
		}
		if err.Error() != kubectl.Error() || !errors.Is(err, twoPDBs) {
			t.Errorf("evictions finished as %v: %q lost kubectl's message or the 500", evictions, err)
		}
	}
}
