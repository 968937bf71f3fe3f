package labserve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/ladder-eks/ladder/internal/eviction"
	"github.com/ladder-eks/ladder/internal/twin/kube"
)

func exhaustedPDB() *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DesiredHealthy: 1, CurrentHealthy: 1, ExpectedPods: 1},
	}
}

func runningPod(name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: lbls},
		Spec:       corev1.PodSpec{NodeName: "ip-10-0-1-1.ec2.internal"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

// The API server's 429 for an exhausted budget reaches mng, through
// client-go's decoding, as the same blocking message the twin's eviction
// gives for the same pod and budget.
func TestEvictRefusalReadsAsTheTwins(t *testing.T) {
	pod, pdb := runningPod("web-0", map[string]string{"app": "web"}), exhaustedPDB()
	twin := eviction.Evict(eviction.Request{Pod: pod, PDBs: []*policyv1.PodDisruptionBudget{pdb}}).Err
	if twin == nil {
		t.Fatal("the twin's eviction was allowed; the budget should be exhausted")
	}
	want := eviction.BlockingMessage(twin)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/namespaces/shop/pods/web-0/eviction" {
			http.NotFound(w, r)
			return
		}
		// What the API server's eviction REST storage answers
		// (pkg/registry/core/pod/storage/eviction.go, checkAndDecrement).
		st := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		st.ErrStatus.Details.Causes = append(st.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    policyv1.DisruptionBudgetCause,
			Message: "The disruption budget web needs 1 healthy pods and has 1 currently",
		})
		st.ErrStatus.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(st.ErrStatus)
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	err = NewKube(context.Background(), cs, kube.Options{}).Evict("shop", "web-0")
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("Evict = %v, want a 429 StatusError", err)
	}
	if got := eviction.BlockingMessage(err); got != want {
		t.Errorf("blocking message\n got %q\nwant %q (the twin's)", got, want)
	}
}

// PDBsForPod finds the budgets of the pod's namespace that select it,
// including one with an empty selector, and not another namespace's.
func TestPDBsForPodMatchesSelectors(t *testing.T) {
	web := exhaustedPDB()
	other := exhaustedPDB()
	other.Name, other.Spec.Selector = "api", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
	all := exhaustedPDB()
	all.Name, all.Spec.Selector = "all", &metav1.LabelSelector{}
	elsewhere := exhaustedPDB()
	elsewhere.Namespace = "billing"
	cs := fake.NewSimpleClientset(runningPod("web-0", map[string]string{"app": "web"}), web, other, all, elsewhere)
	k := NewKube(context.Background(), cs, kube.Options{})
	var got []string
	for _, p := range k.PDBsForPod("shop", "web-0") {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	if len(got) != 2 || got[0] != "shop/all" || got[1] != "shop/web" {
		t.Errorf("PDBsForPod = %v, want [shop/all shop/web]", got)
	}
	if p := k.PDBsForPod("shop", "missing"); p != nil {
		t.Errorf("PDBsForPod of a missing pod = %v, want none", p)
	}
}

// A terminating instance's node leaves KWOK's management and reads NotReady,
// so KWOK cannot report it Ready again; RemoveNode deletes it.
func TestSetNodeReadyFalseLeavesKWOK(t *testing.T) {
	twin := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-1-1.ec2.internal", Labels: map[string]string{"eks.amazonaws.com/nodegroup": "initial"}}}
	cs := fake.NewSimpleClientset()
	k := NewKube(context.Background(), cs, kube.Options{})
	if err := k.AddNode(twin, false); err != nil {
		t.Fatal(err)
	}
	if n := k.Node(twin.Name); n == nil || n.Annotations["kwok.x-k8s.io/node"] != "fake" {
		t.Fatalf("added node = %v, want it under KWOK's management", n)
	}
	if err := k.SetNodeReady(twin.Name, false); err != nil {
		t.Fatal(err)
	}
	n := k.Node(twin.Name)
	if _, ok := n.Annotations["kwok.x-k8s.io/node"]; ok {
		t.Error("node still under KWOK's management")
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
			if c.Status != corev1.ConditionFalse {
				t.Errorf("Ready = %s, want False", c.Status)
			}
		}
	}
	if ready {
		t.Error("node still Ready")
	}
	if err := k.RemoveNode(twin.Name, "terminated"); err != nil {
		t.Fatal(err)
	}
	if k.Node(twin.Name) != nil {
		t.Error("node not deleted")
	}
	if err := k.RemoveNode(twin.Name, "terminated"); err != nil {
		t.Errorf("removing a gone node = %v, want nil", err)
	}
}
