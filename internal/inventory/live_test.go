package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// apiServer is a minimal Kubernetes API on 127.0.0.1: it answers List
// requests from fixed objects, one object per page (so every list is
// paginated), and answers with a Status for the paths given in errors.
type apiServer struct {
	lists  map[string][]any // path → items
	errors map[string]metav1.Status
	mu     sync.Mutex
	calls  map[string]int // path → requests
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls[r.URL.Path]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if st, ok := s.errors[r.URL.Path]; ok {
		st.Kind, st.APIVersion, st.Status = "Status", "v1", metav1.StatusFailure
		w.WriteHeader(int(st.Code))
		_ = json.NewEncoder(w).Encode(st)
		return
	}
	items, ok := s.lists[r.URL.Path]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: 404, Message: "the server could not find the requested resource"})
		return
	}
	i, _ := strconv.Atoi(r.URL.Query().Get("continue"))
	page := map[string]any{"apiVersion": listKinds[r.URL.Path][0], "kind": listKinds[r.URL.Path][1], "metadata": map[string]any{}, "items": []any{}}
	if i < len(items) {
		page["items"] = []any{items[i]}
		if i+1 < len(items) {
			page["metadata"] = map[string]any{"continue": strconv.Itoa(i + 1)}
		}
	}
	_ = json.NewEncoder(w).Encode(page)
}

// listKinds are the apiVersion and kind of each list the server answers.
var listKinds = map[string][2]string{
	"/api/v1/nodes":                    {"v1", "NodeList"},
	"/api/v1/pods":                     {"v1", "PodList"},
	"/apis/apps/v1/replicasets":        {"apps/v1", "ReplicaSetList"},
	"/apis/batch/v1/jobs":              {"batch/v1", "JobList"},
	"/apis/karpenter.sh/v1/nodeclaims": {"karpenter.sh/v1", "NodeClaimList"},
}

func startAPI(t *testing.T, s *apiServer) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	s.calls = map[string]int{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: s}}
	srv.Start()
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, dyn
}

func controlledBy(kind, name string) []metav1.OwnerReference {
	yes := true
	api := "apps/v1"
	if kind == "Job" || kind == "CronJob" {
		api = "batch/v1"
	}
	return []metav1.OwnerReference{{APIVersion: api, Kind: kind, Name: name, Controller: &yes}}
}

// FromCluster reads every page of each list, names Deployments and
// CronJobs rather than their ReplicaSets and Jobs, and takes a Karpenter
// node's AMI from its NodeClaim.
func TestFromClusterPagesAndOwners(t *testing.T) {
	karp := node("ip-10-0-6-1.us-west-2.compute.internal", v130, ec2Labels("us-west-2a", "m6i.large", LabelNodePool, "default", LabelCapacityType, "spot"))
	mng := node("ip-10-0-1-1.us-west-2.compute.internal", v130, ec2Labels("us-west-2a", "m5.large", LabelNodegroup, "initial", LabelNodegroupImage, ami))
	podOn := func(ns, name, node string, owner []metav1.OwnerReference) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owner},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	s := &apiServer{lists: map[string][]any{
		"/api/v1/nodes": {karp, mng},
		"/api/v1/pods": {
			podOn("checkout", "checkout-6d5fd5db9c-bjxtt", karp.Name, controlledBy("ReplicaSet", "checkout-6d5fd5db9c")),
			podOn("checkout", "checkout-6d5fd5db9c-xxxxx", karp.Name, controlledBy("ReplicaSet", "checkout-6d5fd5db9c")),
			podOn("batch", "report-29000000-abcde", mng.Name, controlledBy("Job", "report-29000000")),
			podOn("kube-system", "kube-proxy-abcde", mng.Name, controlledBy("DaemonSet", "kube-proxy")),
			podOn("default", "debug", mng.Name, nil),
		},
		"/apis/apps/v1/replicasets": {appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "checkout", Name: "checkout-6d5fd5db9c", OwnerReferences: controlledBy("Deployment", "checkout")}}},
		"/apis/batch/v1/jobs":       {batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "report-29000000", OwnerReferences: controlledBy("CronJob", "report")}}},
		"/apis/karpenter.sh/v1/nodeclaims": {map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": map[string]any{"name": "default-abcde"},
			"status": map[string]any{"nodeName": karp.Name, "imageID": "ami-0karpenter"}}},
	}}
	cs, dyn := startAPI(t, s)
	inv, err := FromCluster(context.Background(), cs, dyn, Source{Kind: "cluster", Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if s.calls["/api/v1/pods"] != 5 || s.calls["/api/v1/nodes"] != 2 {
		t.Errorf("requests %v: want every page of pods (5) and nodes (2)", s.calls)
	}
	if len(inv.Groups) != 2 {
		t.Fatalf("groups %+v", inv.Groups)
	}
	want := map[string][]WorkloadPods{
		"initial": {
			{Workload{"batch", "CronJob", "report"}, 1},
			{Workload{"default", "Pod", "debug"}, 1},
			{Workload{"kube-system", "DaemonSet", "kube-proxy"}, 1},
		},
		"default": {{Workload{"checkout", "Deployment", "checkout"}, 2}},
	}
	for _, g := range inv.Groups {
		if !reflect.DeepEqual(g.Workloads, want[g.Name]) {
			t.Errorf("%s carries %+v, want %+v", g.Name, g.Workloads, want[g.Name])
		}
	}
	if got := inv.Groups[1].AMIs; !reflect.DeepEqual(got, map[string]int{"ami-0karpenter": 1}) {
		t.Errorf("Karpenter AMIs %v, want the NodeClaim's status.imageID", got)
	}
}

// Without Karpenter (no nodeclaims resource) the inventory still works.
func TestFromClusterWithoutKarpenter(t *testing.T) {
	s := &apiServer{lists: map[string][]any{
		"/api/v1/nodes": {node("a", v130, map[string]string{LabelNodegroup: "initial"})},
		"/api/v1/pods":  {},
	}}
	cs, dyn := startAPI(t, s)
	inv, err := FromCluster(context.Background(), cs, dyn, Source{Kind: "cluster", Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Groups) != 1 || inv.Groups[0].Name != "initial" {
		t.Errorf("groups %+v", inv.Groups)
	}
}

func TestFromClusterErrors(t *testing.T) {
	forbidden := metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `pods is forbidden: User "dev" cannot list resource "pods" in API group "" at the cluster scope`}
	unauthorized := metav1.Status{Code: 401, Reason: metav1.StatusReasonUnauthorized, Message: "Unauthorized"}
	for _, tc := range []struct {
		name   string
		errors map[string]metav1.Status
		want   string
	}{
		{"forbidden", map[string]metav1.Status{"/api/v1/pods": forbidden},
			`forbidden to list pods at the cluster scope: pods is forbidden: User "dev" cannot list resource "pods" in API group "" at the cluster scope (grant the verb list on pods in every namespace; check with: kubectl auth can-i list pods --all-namespaces)`},
		{"forbidden replicasets", map[string]metav1.Status{"/apis/apps/v1/replicasets": forbidden},
			`forbidden to list replicasets.apps at the cluster scope`},
		{"unauthorized", map[string]metav1.Status{"/api/v1/nodes": unauthorized},
			`listing nodes: the API server refused the credentials (401 Unauthorized)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p", OwnerReferences: controlledBy("ReplicaSet", "rs")}}
			s := &apiServer{lists: map[string][]any{"/api/v1/nodes": {}, "/api/v1/pods": {pod}, "/apis/apps/v1/replicasets": {}}, errors: tc.errors}
			cs, dyn := startAPI(t, s)
			_, err := FromCluster(context.Background(), cs, dyn, Source{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestFromClusterUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromCluster(context.Background(), cs, nil, Source{})
	want := fmt.Sprintf("cannot reach the API server at http://%s: ", addr)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "(is the cluster up? check --kubeconfig and --context)") {
		t.Fatalf("error %v, want %q…", err, want)
	}
}

// A continue token that expired between two pages (410 Expired: etcd
// compacted the revision of the first page) does not fail the inventory:
// the pods are listed again in one request, as client-go's pager does, and
// each is counted once.
func TestListPodsContinueExpired(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	var sent []string
	cs := fake.NewClientset()
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).GetListOptions()
		sent = append(sent, fmt.Sprintf("limit=%d continue=%q", opts.Limit, opts.Continue))
		if opts.Continue != "" {
			return true, nil, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result.")
		}
		// Two pods a page however large the limit, everything without one.
		l := &corev1.PodList{}
		to := len(names)
		if opts.Limit > 0 {
			to, l.Continue = 2, "2"
		}
		for _, n := range names[:to] {
			l.Items = append(l.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: n}})
		}
		return true, l, nil
	})
	pods, err := ListPods(context.Background(), cs)
	if err != nil {
		t.Fatalf("ListPods with an expired continue token: %v", err)
	}
	var got []string
	for _, p := range pods {
		got = append(got, p.Pod.Name)
	}
	if !reflect.DeepEqual(got, names) {
		t.Errorf("pods %v, want %v, each once", got, names)
	}
	want := []string{`limit=500 continue=""`, `limit=500 continue="2"`, `limit=0 continue=""`}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("requests %v, want %v: the first page, the expired token, one full list", sent, want)
	}
}
