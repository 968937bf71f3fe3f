package live

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// cluster is a small cluster at 1.34 on the fake server: 7 pods, an
// Ingress written with extensions/v1beta1 (managedFields) and one whose
// last-applied annotation says networking.k8s.io/v1beta1, a PDB trap, two
// nodes, a Helm release of three revisions, and the deprecated-API gauge.
func cluster(t *testing.T) *fakeServer {
	f := newFakeServer(t, "v1.34.2-eks-3025e55")
	f.serveKind("v1", "pods", "Pod", true)
	f.serveKind("v1", "nodes", "Node", false)
	f.serveKind("v1", "secrets", "Secret", true)
	f.serveKind("v1", "endpoints", "Endpoints", true)
	f.serveKind("apps/v1", "deployments", "Deployment", true)
	f.serveKind("apps/v1", "statefulsets", "StatefulSet", true)
	f.serveKind("apps/v1", "daemonsets", "DaemonSet", true)
	f.serveKind("apps/v1", "replicasets", "ReplicaSet", true)
	f.serveKind("policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", true)
	f.serveKind("autoscaling/v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true)
	f.serveKind("autoscaling/v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true)
	f.serveKind("storage.k8s.io/v1", "storageclasses", "StorageClass", false)
	f.serveKind("networking.k8s.io/v1", "ingresses", "Ingress", true)
	f.serveKind("batch/v1", "cronjobs", "CronJob", true)
	f.serveKind("v1", "persistentvolumeclaims", "PersistentVolumeClaim", true)
	f.serveKind("v1", "persistentvolumes", "PersistentVolume", false)
	f.add("v1", "persistentvolumeclaims", obj("v1", "PersistentVolumeClaim", "shop", "data", map[string]any{
		"spec": map[string]any{"volumeName": "pvc-1", "storageClassName": "gp3"}}))
	f.add("v1", "persistentvolumes", obj("v1", "PersistentVolume", "", "pvc-1", map[string]any{
		"spec": map[string]any{"nodeAffinity": map[string]any{"required": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{
			map[string]any{"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": []any{"us-west-2a"}}}}}}}}}))
	f.add("apps/v1", "replicasets", obj("apps/v1", "ReplicaSet", "shop", "web-1", map[string]any{
		"metadata": map[string]any{"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d", "controller": true}}},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "web:1"}}}}}}))

	for i := range 7 {
		f.add("v1", "pods", obj("v1", "Pod", "shop", fmt.Sprintf("web-%d", i), map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"},
				"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs", "controller": true}}},
			"spec": map[string]any{"nodeName": "ip-10-0-1-1", "containers": []any{map[string]any{"name": "web", "image": "web:1"}},
				"volumes": []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": fmt.Sprint("data", map[bool]string{true: "", false: "-other"}[i == 0])}}}}}))
	}
	f.add("apps/v1", "deployments", obj("apps/v1", "Deployment", "shop", "solo", map[string]any{
		"metadata": map[string]any{"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1"}}},
		"spec": map[string]any{"replicas": 1, "selector": map[string]any{"matchLabels": map[string]any{"app": "solo"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "solo"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "solo", "image": "solo:1"}}}}}}))
	f.add("policy/v1", "poddisruptionbudgets", obj("policy/v1", "PodDisruptionBudget", "shop", "solo", map[string]any{
		"spec": map[string]any{"minAvailable": 1, "selector": map[string]any{"matchLabels": map[string]any{"app": "solo"}}}}))
	f.add("networking.k8s.io/v1", "ingresses", obj("networking.k8s.io/v1", "Ingress", "shop", "old", map[string]any{
		"metadata": map[string]any{"managedFields": []any{
			map[string]any{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "extensions/v1beta1"},
			map[string]any{"manager": "ingress-controller", "operation": "Update", "apiVersion": "networking.k8s.io/v1", "subresource": "status"},
		}}}))
	f.add("networking.k8s.io/v1", "ingresses", obj("networking.k8s.io/v1", "Ingress", "shop", "applied", map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"networking.k8s.io/v1beta1","kind":"Ingress","metadata":{"name":"applied"}}` + "\n"}}}))
	f.add("v1", "nodes", obj("v1", "Node", "", "ip-10-0-1-1", map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"eks.amazonaws.com/nodegroup": "ng-1", "topology.kubernetes.io/zone": "us-west-2a", "topology.kubernetes.io/region": "us-west-2"}},
		"status":   map[string]any{"nodeInfo": map[string]any{"kubeletVersion": "v1.31.7-eks-473151a"}}}))
	f.add("v1", "nodes", obj("v1", "Node", "", "ip-10-0-2-1", map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"karpenter.sh/nodepool": "default", "topology.kubernetes.io/zone": "us-west-2b"}},
		"status":   map[string]any{"nodeInfo": map[string]any{"kubeletVersion": "v1.34.2-eks-3025e55"}}}))

	manifest := "---\n# Source: shop/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: shop\n" +
		"---\n# Source: shop/templates/cron.yaml\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: nightly\nspec:\n  schedule: \"0 3 * * *\"\n"
	for _, r := range []struct {
		version  int
		status   string
		manifest string
	}{{1, "superseded", "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: ancient\n"}, {2, "deployed", manifest}, {3, "failed", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\n"}} {
		data, err := EncodeRelease(map[string]any{"name": "shop", "namespace": "shop", "version": r.version, "info": map[string]any{"status": r.status},
			"manifest": r.manifest, "hooks": []any{map[string]any{"path": "shop/templates/hook.yaml", "manifest": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n"}}})
		if err != nil {
			t.Fatal(err)
		}
		f.add("v1", "secrets", obj("v1", "Secret", "shop", fmt.Sprintf("sh.helm.release.v1.shop.v%d", r.version), map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"owner": "helm", "name": "shop", "status": r.status, "version": fmt.Sprint(r.version)}},
			"type":     helmReleaseType, "data": map[string]any{"release": base64.StdEncoding.EncodeToString(data)}}))
	}
	f.metrics = `# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="pods",verb="LIST",version="v1"} 12
# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.
# TYPE apiserver_requested_deprecated_apis gauge
apiserver_requested_deprecated_apis{group="",removed_release="",resource="endpoints",subresource="",version="v1"} 1
apiserver_requested_deprecated_apis{group="flowcontrol.apiserver.k8s.io",removed_release="1.32",resource="flowschemas",subresource="",version="v1beta3"} 1
`
	return f
}

func TestReadCluster(t *testing.T) {
	f := cluster(t)
	in, err := Read(context.Background(), f.config(), Options{ChunkSize: 3, ClusterName: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Current != kubeversion.MustParse("1.34") || in.Cluster == nil || in.Cluster.Name != "prod" || in.Cluster.Region != "us-west-2" ||
		strings.Join(in.Cluster.Zones, ",") != "us-west-2a,us-west-2b" || in.Cluster.Source != "live:cluster prod" {
		t.Errorf("cluster facts: current %s, %+v", in.Current, in.Cluster)
	}

	// Pagination: 7 pods in pages of 3 are 3 requests, 2 continued.
	pods := f.requested("/api/v1/pods")
	if len(pods) != 3 || !strings.Contains(pods[0], "limit=3") || !strings.Contains(pods[1], "continue=3") || !strings.Contains(pods[2], "continue=6") {
		t.Errorf("pod requests: %v", pods)
	}
	if n := len(in.Kind("Pod")); n != 7 {
		t.Errorf("%d pods, want 7", n)
	}
	// v1 Endpoints is deprecated at 1.34: Ladder never requests it.
	if r := f.requested("/api/v1/endpoints"); len(r) != 0 {
		t.Errorf("Ladder requested a deprecated API: %v", r)
	}
	// The metrics were read before any list.
	if i, j := slices.IndexFunc(f.requests, func(r string) bool { return strings.HasPrefix(r, "/metrics?") }), slices.IndexFunc(f.requests, func(r string) bool { return strings.Contains(r, "limit=") }); i < 0 || i > j {
		t.Errorf("/metrics read at %d, first list at %d: %v", i, j, f.requests)
	}

	byName := map[string]*insights.Object{}
	for _, o := range in.Objects {
		byName[o.Kind+" "+o.Namespace+"/"+o.Name+" "+o.Source.String()] = o
	}
	get := func(key string) *insights.Object {
		t.Helper()
		o := byName[key]
		if o == nil {
			var keys []string
			for k := range byName {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			t.Fatalf("no object %q in\n%s", key, strings.Join(keys, "\n"))
		}
		return o
	}
	if o := get("Ingress shop/old live:ingresses.networking.k8s.io/shop/old"); !slices.Equal(o.WrittenAs, []string{"extensions/v1beta1"}) || o.APIVersion != "networking.k8s.io/v1" {
		t.Errorf("Ingress shop/old: %s written as %v", o.APIVersion, o.WrittenAs)
	}
	if o := get("Ingress shop/applied live:ingresses.networking.k8s.io/shop/applied"); !slices.Equal(o.WrittenAs, []string{"networking.k8s.io/v1beta1"}) {
		t.Errorf("Ingress shop/applied written as %v", o.WrittenAs)
	}
	if o := get("Deployment shop/solo live:deployments.apps/shop/solo"); len(o.WrittenAs) != 0 || o.Typed == nil {
		t.Errorf("Deployment shop/solo: written as %v, typed %T", o.WrittenAs, o.Typed)
	}
	// The latest deployed Helm revision, with the template of each object.
	get("CronJob /nightly helm:shop/shop (revision 2) manifest:9 (shop/templates/cron.yaml)")
	get("Job /migrate helm:shop/shop (revision 2) hook shop/templates/hook.yaml:1")
	for k := range byName {
		if strings.Contains(k, "revision 1") || strings.Contains(k, "revision 3") {
			t.Errorf("a release revision that is not the latest deployed was read: %s", k)
		}
	}
	if r := f.requested("/api/v1/namespaces/shop/secrets/"); len(r) != 1 || !strings.Contains(r[0], "sh.helm.release.v1.shop.v2") {
		t.Errorf("secrets fetched: %v (want only revision 2's)", r)
	}

	// Nodes: group, zone, kubelet.
	var nodes []string
	for _, n := range in.Cluster.Nodes {
		nodes = append(nodes, n.Name+" "+n.Group+" "+n.Zone+" "+n.KubeletVersion)
	}
	if got := strings.Join(nodes, "; "); got != "ip-10-0-1-1 ng-1 us-west-2a v1.31.7-eks-473151a; ip-10-0-2-1 default us-west-2b v1.34.2-eks-3025e55" {
		t.Errorf("nodes: %s", got)
	}
	if g := in.Cluster.Group("ng-1"); g == nil || g.Type != insights.GroupManaged || !slices.Equal(g.KubeletVersions, []string{"v1.31.7-eks-473151a"}) {
		t.Errorf("group ng-1: %+v", g)
	}

	if v := in.Cluster.Volumes; len(v) != 1 || fmt.Sprint(v[0]) != "{shop data gp3 us-west-2a [shop/web-0] [ip-10-0-1-1] [Deployment shop/web]}" {
		t.Errorf("volumes: %+v", v)
	}

	// The checks find what the cluster holds, each with its source.
	in.Target, in.Now = kubeversion.MustParse("1.35"), time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	rep := insights.Run(in, nil)
	var got []string
	for _, f := range rep.Findings {
		if f.Severity != insights.Passing && (f.Check == "removed-api" || f.Check == "deprecated-api" || f.Check == "pdb-blocks-drain") {
			got = append(got, fmt.Sprintf("%s %s %s [%s]", f.Severity, f.Check, f.Object, f.Object.Source))
		}
	}
	want := []string{
		"ERROR pdb-blocks-drain PodDisruptionBudget shop/solo [live:poddisruptionbudgets.policy/shop/solo]",
		"ERROR removed-api CronJob nightly [helm:shop/shop (revision 2) manifest:9 (shop/templates/cron.yaml)]",
		"ERROR removed-api FlowSchema [live:/metrics apiserver_requested_deprecated_apis flowcontrol.apiserver.k8s.io/v1beta3 flowschemas (requested by a client since the API server started; removed in 1.32)]",
		"ERROR removed-api Ingress shop/applied [live:ingresses.networking.k8s.io/shop/applied]",
		"ERROR removed-api Ingress shop/old [live:ingresses.networking.k8s.io/shop/old]",
	}
	slices.Sort(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExpiredContinue: a continue token etcd has compacted (410) makes the
// list start over in one request.
func TestExpiredContinue(t *testing.T) {
	f := cluster(t)
	f.expire["/api/v1/pods"] = true
	in, err := Read(context.Background(), f.config(), Options{ChunkSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(in.Kind("Pod")); n != 7 {
		t.Errorf("%d pods after the relist, want 7", n)
	}
	pods := f.requested("/api/v1/pods")
	if len(pods) != 3 || strings.Contains(pods[2], "limit") {
		t.Errorf("pod requests: %v (want a first page, a 410, one list without limit)", pods)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("unreachable", func(t *testing.T) {
		f := cluster(t)
		cfg := f.config()
		f.srv.Close()
		_, err := Read(ctx, cfg, Options{})
		want := "cannot reach the API server at " + cfg.Host + ": "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "connection refused") ||
			!strings.Contains(err.Error(), "check --kubeconfig and --context") || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want %s…connection refused…", err, want)
		}
	})
	t.Run("unauthorized", func(t *testing.T) {
		f := cluster(t)
		f.status["/version"] = 401
		_, err := Read(ctx, f.config(), Options{})
		want := "the API server at " + f.srv.URL + " refused the credentials (401 Unauthorized) while reading /version: refresh them (for EKS: aws eks update-kubeconfig --name CLUSTER, with the AWS profile that has access) or pick another --context"
		if err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	})
	t.Run("forbidden kinds the checks need", func(t *testing.T) {
		f := cluster(t)
		f.status["/api/v1/pods"] = 403
		f.status["/apis/apps/v1/deployments"] = 403
		_, err := Read(ctx, f.config(), Options{})
		want := "cannot list pods, deployments.apps at cluster scope: grant list on them in every namespace (a ClusterRole bound with a ClusterRoleBinding; check with: kubectl auth can-i list pods --all-namespaces)"
		if err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
		f.status = map[string]int{"/api/v1/pods": 403}
		_, err = Read(ctx, f.config(), Options{})
		if want := "cannot list pods at cluster scope: grant list on pods in every namespace"; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %v\nwant %s…", err, want)
		}
	})
	t.Run("forbidden optional sources", func(t *testing.T) {
		f := cluster(t)
		f.status["/metrics"] = 403
		f.status["/api/v1/secrets"] = 403
		f.status["/apis/networking.k8s.io/v1/ingresses"] = 403
		f.status["/apis/batch/v1/cronjobs"] = 403
		in, err := Read(ctx, f.config(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range in.Problems {
			got = append(got, string(p.Severity)+" "+p.Error())
		}
		want := []string{
			"WARNING live:/metrics apiserver_requested_deprecated_apis: cannot get /metrics (forbidden); which deprecated APIs clients request was not checked (grant get on the non-resource URL /metrics (a ClusterRole rule nonResourceURLs: [/metrics], verbs: [get]; check with: kubectl auth can-i get /metrics))",
			`WARNING live:cronjobs.batch and 1 other kinds: cannot list cronjobs.batch, ingresses.networking.k8s.io at cluster scope for user "jane"; their objects were not checked for the apiVersions they were last written with (grant list on them to check them too (check with: kubectl auth can-i list cronjobs.batch --all-namespaces))`,
			`WARNING live:secrets: cannot list secrets at cluster scope for user "jane"; the manifests of Helm 3 releases (secrets of type helm.sh/release.v1) were not checked (grant list on secrets to check them too (check with: kubectl auth can-i list secrets --all-namespaces))`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(in.Kind("Pod")) != 7 || len(in.Kind("Ingress")) != 0 {
			t.Errorf("the read did not go on: %d pods, %d ingresses", len(in.Kind("Pod")), len(in.Kind("Ingress")))
		}
	})
	t.Run("a forbidden get of a release secret", func(t *testing.T) {
		f := cluster(t)
		f.status["/api/v1/namespaces/shop/secrets/sh.helm.release.v1.shop.v2"] = 403
		in, err := Read(ctx, f.config(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Problems) != 1 || !strings.Contains(in.Problems[0].Message, `cannot get secrets at cluster scope for user "jane"`) {
			t.Errorf("problems: %+v", in.Problems)
		}
	})
	t.Run("a bad release secret", func(t *testing.T) {
		f := cluster(t)
		for _, it := range f.lists["/api/v1/secrets"] {
			it["data"] = map[string]any{"release": base64.StdEncoding.EncodeToString([]byte("%%% not base64"))}
		}
		in, err := Read(ctx, f.config(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := "live:secrets/shop/sh.helm.release.v1.shop.v2: the Helm release secret could not be read: not base64: illegal base64 data at input byte 0; the release's manifest was not checked (check it with: helm get manifest -n shop shop)"
		if len(in.Problems) != 1 || in.Problems[0].Error() != want || in.Problems[0].Severity != insights.Error {
			t.Errorf("problems: %v\nwant %s", in.Problems, want)
		}
		if len(in.Kind("Pod")) != 7 {
			t.Error("one bad secret hid the rest")
		}
	})
	t.Run("a broken document in a release", func(t *testing.T) {
		r := &Release{Name: "web", Namespace: "shop", Version: 4,
			Manifest: "---\n# Source: web/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: [oops\n" +
				"---\n# Source: web/templates/b.yaml\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: b\n"}
		objs, problems := r.Objects()
		if len(objs) != 1 || objs[0].Source.String() != "helm:shop/web (revision 4) manifest:10 (web/templates/b.yaml)" {
			t.Errorf("objects: %+v", objs)
		}
		if len(problems) != 1 || !strings.HasPrefix(problems[0].Error(), "helm:shop/web (revision 4) manifest:") {
			t.Errorf("problems: %v", problems)
		}
	})
}

func TestDecodeRelease(t *testing.T) {
	data, err := EncodeRelease(map[string]any{"name": "web", "namespace": "shop", "version": 7, "info": map[string]any{"status": "deployed"},
		"chart": map[string]any{"metadata": map[string]any{"name": "web", "version": "1.2.3"}}, "manifest": "apiVersion: v1\nkind: Service\n"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeRelease(data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "web" || r.Namespace != "shop" || r.Version != 7 || r.Info.Status != "deployed" || r.Chart.Metadata.Version != "1.2.3" ||
		r.Manifest != "apiVersion: v1\nkind: Service\n" || r.Origin() != "helm:shop/web (revision 7)" {
		t.Errorf("decoded %+v", r)
	}
	// Uncompressed JSON (Helm before 3.0's betas) is read too.
	plain := base64.StdEncoding.EncodeToString([]byte(`{"name":"a","version":1,"manifest":"x"}`))
	if r, err := DecodeRelease([]byte(plain)); err != nil || r.Name != "a" {
		t.Errorf("plain JSON: %+v, %v", r, err)
	}
	for in, want := range map[string]string{
		"***": "not base64",
		base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 0x08, 0, 1}): "not gzip",
		base64.StdEncoding.EncodeToString([]byte("[1]")):                  "not a Helm release",
	} {
		if _, err := DecodeRelease([]byte(in)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %s…", in, err, want)
		}
	}
}

func TestParseRequested(t *testing.T) {
	got, err := ParseRequested(strings.NewReader(`# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested.
# TYPE apiserver_requested_deprecated_apis gauge
apiserver_requested_deprecated_apis{group="batch",removed_release="1.25",resource="cronjobs",subresource="",version="v1beta1"} 1
apiserver_requested_deprecated_apis{group="",removed_release="",resource="endpoints",subresource="",version="v1"} 1
apiserver_requested_deprecated_apis{group="policy",removed_release="1.25",resource="poddisruptionbudgets",subresource="status",version="v1beta1"} 0
# HELP etcd_request_duration_seconds whatever
# TYPE etcd_request_duration_seconds histogram
etcd_request_duration_seconds_bucket{le="0.005"} 3
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []RequestedAPI{{Group: "batch", Version: "v1beta1", Resource: "cronjobs", RemovedRelease: "1.25"}, {Version: "v1", Resource: "endpoints"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got, err := ParseRequested(strings.NewReader("up 1\n")); err != nil || got != nil {
		t.Errorf("without the gauge: %v, %v", got, err)
	}
}

func TestWrittenAs(t *testing.T) {
	m := &metav1.ObjectMeta{
		ManagedFields: []metav1.ManagedFieldsEntry{{APIVersion: "apps/v1"}, {APIVersion: "extensions/v1beta1"}, {APIVersion: "apps/v1beta2"}, {APIVersion: "extensions/v1beta1"}},
		Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"apps/v1beta1","kind":"Deployment"}`},
	}
	if got := WrittenAs("apps/v1", m); !slices.Equal(got, []string{"extensions/v1beta1", "apps/v1beta2", "apps/v1beta1"}) {
		t.Errorf("got %v", got)
	}
	m.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "not json"
	m.ManagedFields = nil
	if got := WrittenAs("apps/v1", m); got != nil {
		t.Errorf("got %v", got)
	}
}

// TestPredictDrains: a managed node group of two nodes; orders (one
// replica, a PodDisruptionBudget of minAvailable 1) runs on the second,
// cache (one replica, a node selector only the first matches) on the
// first. Read, then the drains predicted in the twin: the group's update
// fails (drain-timeout-risk ERROR), orders blocks its node's drain for 15
// minutes and cache has nowhere to go (drain-blocked).
func TestPredictDrains(t *testing.T) {
	f := newFakeServer(t, "v1.33.4-eks-1")
	f.serveKind("v1", "pods", "Pod", true)
	f.serveKind("v1", "nodes", "Node", false)
	f.serveKind("apps/v1", "deployments", "Deployment", true)
	f.serveKind("apps/v1", "replicasets", "ReplicaSet", true)
	f.serveKind("policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", true)
	res := map[string]any{"cpu": "2", "memory": "8Gi", "pods": "29"}
	for i, zone := range []string{"us-west-2a", "us-west-2b"} {
		labels := map[string]any{"eks.amazonaws.com/nodegroup": "blue", "topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "us-west-2"}
		if i == 0 {
			labels["disk"] = "ssd"
		}
		f.add("v1", "nodes", obj("v1", "Node", "", fmt.Sprintf("ip-10-0-%d-1", i+1), map[string]any{
			"metadata": map[string]any{"labels": labels},
			"status": map[string]any{"capacity": res, "allocatable": res, "nodeInfo": map[string]any{"kubeletVersion": "v1.33.4-eks-1"},
				"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}}))
	}
	spec := func(app string, selector map[string]any) map[string]any {
		s := map[string]any{"containers": []any{map[string]any{"name": app, "image": app + ":1", "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}}}}
		if selector != nil {
			s["nodeSelector"] = selector
		}
		return s
	}
	for _, w := range []struct {
		app, rs, pod, node string
		selector           map[string]any
	}{{"orders", "orders-5d9f", "orders-5d9f-abcde", "ip-10-0-2-1", nil}, {"cache", "cache-6b7c", "cache-6b7c-fghij", "ip-10-0-1-1", map[string]any{"disk": "ssd"}}} {
		labels := map[string]any{"app": w.app}
		f.add("apps/v1", "deployments", obj("apps/v1", "Deployment", "shop", w.app, map[string]any{
			"spec": map[string]any{"replicas": 1, "selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec(w.app, w.selector)}}}))
		f.add("apps/v1", "replicasets", obj("apps/v1", "ReplicaSet", "shop", w.rs, map[string]any{
			"metadata": map[string]any{"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": w.app, "uid": "d-" + w.app, "controller": true}}}}))
		pod := spec(w.app, w.selector)
		pod["nodeName"] = w.node
		f.add("v1", "pods", obj("v1", "Pod", "shop", w.pod, map[string]any{
			"metadata": map[string]any{"labels": labels,
				"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": w.rs, "uid": "rs-" + w.app, "controller": true}}},
			"spec": pod, "status": map[string]any{"phase": "Running"}}))
	}
	f.add("policy/v1", "poddisruptionbudgets", obj("policy/v1", "PodDisruptionBudget", "shop", "orders", map[string]any{
		"spec": map[string]any{"minAvailable": 1, "selector": map[string]any{"matchLabels": map[string]any{"app": "orders"}}}}))

	ctx := context.Background()
	in, err := Read(ctx, f.config(), Options{ClusterName: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	in.Target, in.Now = kubeversion.MustParse("1.34"), time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	checks := []insights.Check{}
	for _, c := range insights.Checks() {
		if id := c.Info().ID; id == "drain-blocked" || id == "drain-timeout-risk" {
			checks = append(checks, c)
		}
	}
	if rep := insights.Run(in, checks); len(rep.Skipped) != 2 {
		t.Errorf("without a prediction: skipped %v, want both drain checks", rep.Skipped)
	}
	if err := PredictDrains(ctx, f.config(), in, Options{}); err != nil {
		t.Fatal(err)
	}
	if !in.Cluster.DrainsPredicted || len(in.Cluster.Drains) != 2 {
		t.Fatalf("drains: predicted %v, %+v", in.Cluster.DrainsPredicted, in.Cluster.Drains)
	}
	rep := insights.Run(in, checks)
	var got []string
	for _, f := range rep.Findings {
		got = append(got, fmt.Sprintf("%s %s %s: %s", f.Severity, f.Check, f.Object, f.Message))
	}
	t.Log("\n" + strings.Join(got, "\n"))
	want := []string{
		`ERROR drain-blocked Node ip-10-0-2-1: draining node ip-10-0-2-1 (managed node group blue, us-west-2b): every eviction of pod shop/orders-5d9f-abcde of Deployment shop/orders is refused by PodDisruptionBudget shop/orders for the whole 15m`,
		`ERROR drain-timeout-risk `,
		`WARNING drain-blocked Node ip-10-0-1-1: draining node ip-10-0-1-1 (managed node group blue, us-west-2a) leaves Deployment shop/cache (shop/cache-6b7c-`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d findings, want %d", len(got), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("finding %d:\n%s\nwant it to start with\n%s", i, got[i], w)
		}
	}
	if !strings.Contains(got[1], "blue") || !strings.Contains(got[1], "PodEvictionFailure") || !strings.Contains(got[1], "shop/orders-5d9f-abcde") {
		t.Errorf("drain-timeout-risk: %s", got[1])
	}
	if !strings.Contains(got[2], "without the node group's surge or Karpenter's new nodes") {
		t.Errorf("the Pending finding does not say the twin adds no node: %s", got[2])
	}
}
