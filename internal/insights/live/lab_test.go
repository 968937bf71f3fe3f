//go:build lab

package live

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/insights/deprecations"
	"github.com/ladder-eks/ladder/internal/lab/labtest"
)

// The live source against a real control plane (internal/lab: etcd,
// kube-apiserver, controllers, KWOK). Run with
//
//	LADDER_LABTEST_DIR=$(mktemp -d) go test -tags lab -p 1 -count=1 ./internal/insights/live/

func TestMain(m *testing.M) { labtest.Main(m) }

// TestFindingsOnTheLab writes into a real API server what `ladder check`
// must find — objects written through deprecated group-versions, PDB
// traps, skewed nodes, a Helm release, a Karpenter NodePool whose budget
// blocks drift — reads it back with Read and runs every check.
func TestFindingsOnTheLab(t *testing.T) {
	cfg := labtest.Start(t)
	ns := labtest.Namespace(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	// Which deprecated group-versions does the lab still serve?
	_, lists, err := cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var servedDeprecated []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if e, ok := deprecations.Lookup(l.GroupVersion, r.Kind); ok && !strings.Contains(r.Name, "/") && e.DeprecatedBy(deprecations.MaxCovered) {
				servedDeprecated = append(servedDeprecated, l.GroupVersion+" "+r.Kind)
			}
		}
	}
	t.Logf("deprecated APIs the lab serves: %v", servedDeprecated)

	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// 1. v1 Endpoints, deprecated since 1.33 and still served — the only
	// deprecated kinds 1.37 serves are it and ComponentStatus, neither with
	// a removal scheduled: written through it by this test (a Service
	// without a selector, as users do).
	//lint:ignore SA1019 writing through the deprecated API is the point of this case
	_, err = cs.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "external-db"},
		//lint:ignore SA1019 see above
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}}, Ports: []corev1.EndpointPort{{Port: 5432}}}},
	}, metav1.CreateOptions{})
	must("creating Endpoints", err)

	// 2. An Ingress applied by kubectl when it was extensions/v1beta1: the
	// last-applied annotation still says so.
	lastApplied := `{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"shop","namespace":"` + ns + `"},"spec":{"backend":{"serviceName":"web","servicePort":80}}}`
	pathType := networkingv1.PathTypePrefix
	_, err = cs.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: lastApplied}},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pathType, Backend: networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
	}, metav1.CreateOptions{})
	must("creating Ingress", err)

	// 3. managedFields: an HPA written through autoscaling/v1 and read
	// through autoscaling/v2 says autoscaling/v1 in WrittenAs. (An entry of
	// a version the server no longer serves cannot be planted: the API
	// server drops managedFields it cannot convert, so removed versions
	// are shown with the last-applied annotation above and in unit tests.)
	minReplicas := int32(1)
	_, err = cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MinReplicas: &minReplicas, MaxReplicas: 5,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
	}, metav1.CreateOptions{})
	must("creating HPA", err)

	// 4. A PDB trap (replicas 1, minAvailable 1) and pods selected by two
	// PDBs.
	must("creating Deployment solo", create(ctx, cs, deployment(ns, "solo", 1)))
	must("creating PDB solo", createPDB(ctx, cs, pdb(ns, "solo", map[string]string{"app": "solo"}, intstr.FromInt32(1))))
	must("creating Deployment web", create(ctx, cs, deployment(ns, "web", 3)))
	must("creating PDB web", createPDB(ctx, cs, pdb(ns, "web", map[string]string{"app": "web"}, intstr.FromInt32(1))))
	must("creating PDB frontends", createPDB(ctx, cs, pdb(ns, "frontends", map[string]string{"tier": "frontend"}, intstr.FromInt32(1))))

	// 5. Nodes with skewed kubelets, written as internal/materialize writes
	// them: the object, then status.nodeInfo through the status subresource.
	// No KWOK annotation: nothing rewrites their status.
	group := "old-" + ns
	for i, kubelet := range []string{"v1.33.5-eks-113cf36", "v1.37.2-eks-0a1b2c3"} {
		name := fmt.Sprintf("%s-%d", group, i)
		_, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"eks.amazonaws.com/nodegroup": group, corev1.LabelTopologyZone: "us-west-2a", corev1.LabelTopologyRegion: "us-west-2"}}}, metav1.CreateOptions{})
		must("creating node", err)
		t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		// The node lifecycle controller taints a new node at once: write
		// the status over the node as it is then.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Status.NodeInfo.KubeletVersion = kubelet
			_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		})
		must("writing node status", err)
	}

	// 6. A Helm release, two revisions: the deployed one renders a
	// policy/v1beta1 PodDisruptionBudget; the superseded one a
	// batch/v1beta1 CronJob that must not be reported.
	pdbManifest := "---\n# Source: shop/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: shop\nspec:\n  ports:\n  - port: 80\n" +
		"---\n# Source: shop/templates/pdb.yaml\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: shop\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: shop\n"
	must("release 1", helmSecret(ctx, cs, ns, "shop", 1, "superseded", "---\n# Source: shop/templates/cron.yaml\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: old\n"))
	must("release 2", helmSecret(ctx, cs, ns, "shop", 2, "deployed", pdbManifest))

	// 7. Karpenter: the CRDs, and a NodePool whose budget never allows drift.
	karpenter := installKarpenterCRDs(t, ctx, dyn)
	if karpenter {
		np := map[string]any{}
		must("NodePool yaml", yaml.Unmarshal([]byte(`
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: frozen-`+ns+`}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  disruption:
    consolidateAfter: 0s
    budgets:
    - nodes: "0"
`), &np))
		npr := dyn.Resource(schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"})
		_, err := npr.Create(ctx, &unstructured.Unstructured{Object: np}, metav1.CreateOptions{})
		must("creating NodePool", err)
		t.Cleanup(func() { _ = npr.Delete(context.Background(), "frozen-"+ns, metav1.DeleteOptions{}) })
	}

	// The gauge of the real API server says v1 endpoints was requested
	// (by this test, and by the control plane's endpoints controller). No
	// removal is scheduled, so it is not a finding.
	c, err := newClients(cfg)
	must("clients", err)
	reqs, problem := readRequested(ctx, c)
	if problem != nil || !slices.Contains(reqs, RequestedAPI{Version: "v1", Resource: "endpoints"}) {
		t.Errorf("the gauge: %+v, problem %v", reqs, problem)
	}
	t.Logf("requested deprecated APIs: %+v", reqs)

	// Read the cluster as `ladder check --kubeconfig` does, and check.
	began := time.Now()
	in, err := Read(ctx, cfg, Options{ClusterName: "lab", ChunkSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read %d objects, %d problems, %d nodes in %s", len(in.Objects), len(in.Problems), len(in.Cluster.Nodes), time.Since(began).Round(time.Millisecond))
	for _, p := range in.Problems {
		t.Logf("problem: %s", p.Error())
	}
	if in.Current.String() != "1.37" || in.Cluster.Version != in.Current || in.Cluster.Name != "lab" {
		t.Errorf("current %s, cluster %+v", in.Current, in.Cluster.Name)
	}
	in.Target, in.Now = in.Current.Next(), time.Now()
	rep := insights.Run(in, nil)

	type want struct{ check, sev, object, source, message string }
	wants := []want{
		{"removed-api", "ERROR", "Ingress " + ns + "/shop", "live:ingresses.networking.k8s.io/" + ns + "/shop", "the object was last written with extensions/v1beta1"},
		{"pdb-blocks-drain", "ERROR", "PodDisruptionBudget " + ns + "/solo", "live:poddisruptionbudgets.policy/" + ns + "/solo", "minAvailable 1"},
		{"pdb-multiple", "ERROR", "Deployment " + ns + "/web", "live:deployments.apps/" + ns + "/web", "2 PodDisruptionBudgets"},
		{"removed-api", "ERROR", "PodDisruptionBudget shop", "helm:" + ns + "/shop (revision 2) manifest:", "policy/v1beta1 PodDisruptionBudget is no longer served"},
	}
	if karpenter {
		wants = append(wants, want{"karpenter-budget-blocks", "ERROR", "NodePool frozen-" + ns, "live:nodepools.karpenter.sh/frozen-" + ns, "never allows"})
	}
	if slices.ContainsFunc(insights.Checks(), func(c insights.Check) bool { return c.Info().ID == "kubelet-skew" }) {
		wants = append(wants, want{"kubelet-skew", "ERROR", "NodeGroup " + group, "live:cluster lab", "v1.33.5"})
	} else {
		t.Log("no kubelet-skew check registered: the skewed nodes are only asserted in Cluster.Nodes")
	}
	for _, w := range wants {
		found := false
		for _, f := range rep.Findings {
			if f.Check == w.check && string(f.Severity) == w.sev && f.Object.String() == w.object &&
				strings.HasPrefix(f.Object.Source, w.source) && strings.Contains(f.Message, w.message) {
				found = true
				t.Logf("found: %s %s %s [%s] %s", f.Severity, f.Check, f.Object, f.Object.Source, f.Message)
			}
		}
		if !found {
			t.Errorf("no %s %s finding for %s from %s containing %q", w.sev, w.check, w.object, w.source, w.message)
		}
	}
	for _, f := range rep.Findings {
		if f.Object.Kind == "Endpoints" {
			t.Errorf("v1 Endpoints, deprecated with no removal scheduled, was reported: %+v", f)
		}
		if strings.Contains(f.Object.Source, "revision 1") || (f.Object.Kind == "CronJob" && f.Object.Name == "old") {
			t.Errorf("a superseded Helm revision was checked: %+v", f)
		}
		if f.Object.Namespace == ns || strings.Contains(f.Object.Source, ns) {
			t.Logf("finding in the test's namespace: %s %s %s [%s] %s", f.Severity, f.Check, f.Object, f.Object.Source, f.Message)
		}
	}

	for _, o := range in.Objects {
		if o.Kind == "HorizontalPodAutoscaler" && o.Namespace == ns {
			if o.APIVersion != "autoscaling/v2" || !slices.Contains(o.WrittenAs, "autoscaling/v1") {
				t.Errorf("HPA %s/%s: apiVersion %s, written as %v; want autoscaling/v2 written as autoscaling/v1", ns, o.Name, o.APIVersion, o.WrittenAs)
			}
		}
	}

	// The cluster facts: the skewed nodes, their group and zone.
	var kubelets []string
	for _, n := range in.Cluster.Nodes {
		if n.Group == group {
			kubelets = append(kubelets, n.KubeletVersion+" "+n.Zone)
		}
	}
	slices.Sort(kubelets)
	if strings.Join(kubelets, ",") != "v1.33.5-eks-113cf36 us-west-2a,v1.37.2-eks-0a1b2c3 us-west-2a" {
		t.Errorf("nodes of group %s: %v", group, kubelets)
	}
	if g := in.Cluster.Group(group); g == nil || g.Type != insights.GroupManaged || len(g.Nodes) != 2 {
		t.Errorf("node group %s: %+v", group, g)
	}
}

// TestPermissionsOnTheLab: a user who may list nothing but nodes gets one
// line naming every kind to grant; granted those, the read works and the
// optional sources it may not read (the metric, Helm secrets, the
// deprecated-API kinds) are WARNING problems; a token the server does not
// know is a 401 with what to do.
func TestPermissionsOnTheLab(t *testing.T) {
	cfg := labtest.Start(t)
	ns := labtest.Namespace(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u := labtest.NewUser(t, cfg, ns, "viewer")
	viewer := u.Config
	u.Grant(rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}})

	user := u.Name
	want := "cannot list pods, daemonsets.apps, deployments.apps, replicasets.apps, statefulsets.apps, horizontalpodautoscalers.autoscaling, poddisruptionbudgets.policy, storageclasses.storage.k8s.io at cluster scope: grant list on them"
	var lastErr error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, lastErr = Read(ctx, viewer, Options{})
		return lastErr != nil && strings.Contains(lastErr.Error(), "cannot list pods"), nil
	})
	if lastErr == nil || !strings.HasPrefix(lastErr.Error(), want) {
		t.Errorf("with list on nodes only:\n got %v\nwant %s…", lastErr, want)
	}
	t.Logf("with list on nodes only: %v", lastErr)

	u.Grant(
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list"}},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets", "replicasets"}, Verbs: []string{"list"}},
		rbacv1.PolicyRule{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"list"}},
		rbacv1.PolicyRule{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: []string{"list"}},
		rbacv1.PolicyRule{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"list"}},
	)
	var in *insights.Input
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		in, lastErr = Read(ctx, viewer, Options{})
		return lastErr == nil, nil
	})
	if lastErr != nil {
		t.Fatalf("with list on the kinds the checks need: %v", lastErr)
	}
	var problems []string
	for _, p := range in.Problems {
		if p.Severity != insights.Warning {
			t.Errorf("problem %s is %s, want WARNING", p.Error(), p.Severity)
		}
		problems = append(problems, p.Error())
	}
	text := strings.Join(problems, "\n")
	t.Logf("problems:\n%s", text)
	for _, w := range []string{
		`cannot get /metrics (forbidden)`,
		`cannot list secrets at cluster scope for user "` + user + `"; the manifests of Helm 3 releases`,
		` ingresses.networking.k8s.io, `,
		`for user "` + user + `"; their objects were not checked for the apiVersions they were last written with`,
		"grant list on secrets",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("no problem says %q", w)
		}
	}

	bad := rest.AnonymousClientConfig(cfg)
	bad.BearerToken = "not-a-token"
	_, err := Read(ctx, bad, Options{})
	if err == nil || !strings.Contains(err.Error(), "refused the credentials (401 Unauthorized) while reading /version") {
		t.Errorf("unknown token: %v", err)
	}
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name, "tier": "frontend"}
	if name == "solo" {
		labels = map[string]string{"app": name}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "nginx:1.27"}}},
			},
		},
	}
}

func create(ctx context.Context, cs kubernetes.Interface, d *appsv1.Deployment) error {
	_, err := cs.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
	return err
}

func pdb(ns, name string, selector map[string]string, minAvailable intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: selector}}}
}

func createPDB(ctx context.Context, cs kubernetes.Interface, p *policyv1.PodDisruptionBudget) error {
	_, err := cs.PolicyV1().PodDisruptionBudgets(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	return err
}

// helmSecret writes a release secret as Helm 3's secret driver does.
func helmSecret(ctx context.Context, cs kubernetes.Interface, ns, name string, revision int, status, manifest string) error {
	rel := map[string]any{"name": name, "namespace": ns, "version": revision, "info": map[string]any{"status": status},
		"chart": map[string]any{"metadata": map[string]any{"name": name, "version": "1.0.0"}}, "manifest": manifest}
	data, err := EncodeRelease(rel)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, revision),
			Labels: map[string]string{"owner": "helm", "name": name, "status": status, "version": fmt.Sprint(revision)}},
		Type: helmReleaseType, Data: map[string][]byte{"release": data},
	}, metav1.CreateOptions{})
	return err
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installKarpenterCRDs installs the NodePool and EC2NodeClass CRDs the
// provider module embeds, waits until they are served, and deletes them
// after the test.
func installKarpenterCRDs(t *testing.T, ctx context.Context, dyn dynamic.Interface) bool {
	t.Helper()
	var names []string
	for _, raw := range [][]byte{awsapis.NodePoolCRD, awsapis.EC2NodeClassCRD} {
		obj := map[string]any{}
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if _, err := dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Logf("installing CRD %s: %v; the Karpenter part is skipped", u.GetName(), err)
			return false
		}
		names = append(names, u.GetName())
		t.Cleanup(func() { _ = dyn.Resource(crdGVR).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			u, err := dyn.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			ok := false
			for _, c := range conds {
				b, _ := json.Marshal(c)
				ok = ok || strings.Contains(string(b), `"type":"Established"`) && strings.Contains(string(b), `"status":"True"`)
			}
			if !ok {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the Karpenter CRDs were not established: %v", err)
	}
	return true
}
