package insights

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

const pdbV1beta1 = `apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: shop
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
`

const flowSchemaV1beta3 = `apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: FlowSchema
metadata:
  name: health-for-strangers
spec:
  matchingPrecedence: 1000
  priorityLevelConfiguration:
    name: exempt
  rules:
    - nonResourceRules:
        - nonResourceURLs: ["/healthz", "/livez", "/readyz"]
          verbs: ["*"]
      subjects:
        - kind: Group
          group:
            name: "system:unauthenticated"
`

const ingressV1 = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
spec:
  ingressClassName: alb
  rules:
    - http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service: {name: web, port: {number: 80}}
`

const certManagerCR = `apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web
  namespace: shop
spec:
  secretName: web-tls
  dnsNames: [shop.example.com]
  issuerRef: {name: letsencrypt, kind: ClusterIssuer}
`

func TestRemovedAPI(t *testing.T) {
	runCases(t, "removed-api", []checkCase{
		{name: "policy/v1beta1 PDB removed in 1.25", target: "1.25", manifests: pdbV1beta1,
			want: []want{{Error, "PodDisruptionBudget shop/web", "apiVersion",
				[]string{"policy/v1beta1 PodDisruptionBudget is no longer served from Kubernetes 1.25 (deprecated in 1.21)", "Migrate to policy/v1 PodDisruptionBudget", "empty spec.selector"}}}},
		{name: "PDB at 1.24 is only deprecated", target: "1.24", manifests: pdbV1beta1},
		{name: "FlowSchema v1beta3 removed in 1.32", target: "1.32", manifests: flowSchemaV1beta3,
			want: []want{{Error, "FlowSchema health-for-strangers", "apiVersion", []string{"no longer served from Kubernetes 1.32", "flowcontrol.apiserver.k8s.io/v1 FlowSchema"}}}},
		{name: "cluster already past the removal", current: "1.33", target: "1.34", manifests: flowSchemaV1beta3,
			want: []want{{Error, "FlowSchema health-for-strangers", "apiVersion", []string{"the cluster, at 1.33, already does not serve it"}}}},
		{name: "PodSecurityPolicy has no replacement", target: "1.25", manifests: `apiVersion: policy/v1beta1
kind: PodSecurityPolicy
metadata:
  name: restricted
spec:
  privileged: false
  seLinux: {rule: RunAsAny}
  runAsUser: {rule: MustRunAsNonRoot}
  supplementalGroups: {rule: RunAsAny}
  fsGroup: {rule: RunAsAny}
  volumes: ["*"]
`, want: []want{{Error, "PodSecurityPolicy restricted", "apiVersion", []string{"has no replacement", "Pod Security Admission"}}}},
		{name: "extensions Ingress in a List", target: "1.22", manifests: `apiVersion: v1
kind: List
items:
  - apiVersion: extensions/v1beta1
    kind: Ingress
    metadata: {name: legacy, namespace: shop}
    spec:
      backend: {serviceName: web, servicePort: 80}
`, want: []want{{Error, "Ingress shop/legacy", "apiVersion", []string{"networking.k8s.io/v1 Ingress", "spec.defaultBackend"}}}},
		{name: "current APIs and custom resources pass", target: "1.37", manifests: ingressV1 + "---\n" + certManagerCR},
	})
}

func TestRemovedAPIHops(t *testing.T) {
	in := input(t, "1.30", "1.33", flowSchemaV1beta3+"---\n"+pdbV1beta1)
	got := runCheck(t, "removed-api", in)
	if len(got) != 2 {
		t.Fatalf("got %s", dump(got))
	}
	// The PDB was removed before the first hop: it breaks hop 1.31 (the
	// first); the FlowSchema breaks the hop to 1.32. Sorted by hop.
	if got[0].Hop != "1.31" || got[0].Object.Kind != "PodDisruptionBudget" || got[1].Hop != "1.32" || got[1].Object.Kind != "FlowSchema" {
		t.Errorf("hops: %s (%s), %s (%s)", got[0].Hop, got[0].Object.Kind, got[1].Hop, got[1].Object.Kind)
	}
}

func TestRemovedAPIWrittenAs(t *testing.T) {
	// A live object served as apps/v1 but last applied as extensions/v1beta1.
	in := &Input{Target: mustMinor("1.31"), Objects: []*Object{{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "shop", Name: "web",
		WrittenAs: []string{"networking.k8s.io/v1beta1"}, Source: Source{Origin: "live cluster prod"}}}}
	got := runCheck(t, "removed-api", in)
	if len(got) != 1 || got[0].Severity != Error || got[0].Object.Source != "live cluster prod" {
		t.Fatalf("got %s", dump(got))
	}
	if want := "last written with networking.k8s.io/v1beta1"; !contains(got[0].Message, want) {
		t.Errorf("message %q lacks %q", got[0].Message, want)
	}
}

func TestDeprecatedAPI(t *testing.T) {
	runCases(t, "deprecated-api", []checkCase{
		{name: "PDB v1beta1 deprecated at 1.24, removed in 1.25", target: "1.24", manifests: pdbV1beta1,
			want: []want{{Warning, "PodDisruptionBudget shop/web", "apiVersion", []string{"deprecated since Kubernetes 1.21 and removed in 1.25, 1 minor after the target 1.24"}}}},
		{name: "FlowSchema v1beta3 at 1.30", target: "1.30", manifests: flowSchemaV1beta3,
			want: []want{{Warning, "FlowSchema health-for-strangers", "apiVersion", []string{"removed in 1.32, 2 minors after the target 1.30"}}}},
		{name: "not yet deprecated at 1.28", target: "1.28", manifests: flowSchemaV1beta3},
		{name: "removed is not deprecated-api's", target: "1.32", manifests: flowSchemaV1beta3},
		{name: "Endpoints deprecated without removal", target: "1.33", manifests: `apiVersion: v1
kind: Endpoints
metadata: {name: external-db, namespace: shop}
subsets:
  - addresses: [{ip: 10.0.0.12}]
    ports: [{port: 5432}]
`, want: []want{{Warning, "Endpoints shop/external-db", "apiVersion", []string{"deprecated since Kubernetes 1.33; no removal is scheduled", "discovery.k8s.io/v1 EndpointSlice"}}}},
		{name: "current APIs pass", target: "1.33", manifests: ingressV1},
	})
}

// TestRecommendationAtTarget checks the replacement is the newest version
// the target serves, not the table's first replacement.
func TestRecommendationAtTarget(t *testing.T) {
	flowSchemaV1beta2 := strings.Replace(flowSchemaV1beta3, "v1beta3", "v1beta2", 1)
	runCases(t, "removed-api", []checkCase{
		{name: "flowcontrol v1beta2 at 1.32 moves to v1, not the removed v1beta3", target: "1.32", manifests: flowSchemaV1beta2,
			want: []want{{Error, "FlowSchema health-for-strangers", "apiVersion", []string{"no longer served from Kubernetes 1.29", "Migrate to flowcontrol.apiserver.k8s.io/v1 FlowSchema: change apiVersion to flowcontrol.apiserver.k8s.io/v1 "}}}},
		{name: "PodSecurityPolicy points at Pod Security Admission", target: "1.25", manifests: `apiVersion: extensions/v1beta1
kind: PodSecurityPolicy
metadata: {name: legacy}
`, want: []want{{Error, "PodSecurityPolicy legacy", "apiVersion", []string{"serves no version of extensions/v1beta1 PodSecurityPolicy", "Pod Security Admission (https://kubernetes.io/docs/tasks/configure-pod-container/migrate-from-psp/)"}}}},
	})
	runCases(t, "removed-api", []checkCase{
		{name: "the cluster does not serve the recommendation yet", current: "1.28", target: "1.29", manifests: flowSchemaV1beta2,
			want: []want{{Error, "FlowSchema health-for-strangers", "apiVersion", []string{"Migrate to flowcontrol.apiserver.k8s.io/v1 FlowSchema",
				"the cluster, at 1.28, serves flowcontrol.apiserver.k8s.io/v1 only from 1.29: move to flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema before the upgrade and to flowcontrol.apiserver.k8s.io/v1 after it"}}}},
		{name: "the cluster serves the recommendation", current: "1.29", target: "1.30", manifests: pdbV1beta1,
			want: []want{{Error, "PodDisruptionBudget shop/web", "apiVersion", []string{"Migrate to policy/v1 PodDisruptionBudget: change apiVersion to policy/v1 (kubectl convert helps), then re-apply; update the Helm chart or tool that renders it; in policy/v1"}}}},
	})
	runCases(t, "deprecated-api", []checkCase{
		{name: "flowcontrol v1beta2 at 1.27 moves to v1beta3 (v1 is not served yet)", target: "1.27", manifests: flowSchemaV1beta2,
			want: []want{{Warning, "FlowSchema health-for-strangers", "apiVersion", []string{"Migrate to flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema"}}}},
	})
}

// TestRemovedAlphaAPIs checks removals k8s.io/api no longer describes.
func TestRemovedAlphaAPIs(t *testing.T) {
	runCases(t, "removed-api", []checkCase{
		{name: "batch/v2alpha1 CronJob", target: "1.30", manifests: `apiVersion: batch/v2alpha1
kind: CronJob
metadata: {name: report, namespace: shop}
spec:
  schedule: "0 3 * * *"
`, want: []want{{Error, "CronJob shop/report", "apiVersion", []string{"batch/v2alpha1 CronJob is no longer served from Kubernetes 1.21", "Migrate to batch/v1 CronJob"}}}},
		{name: "settings.k8s.io/v1alpha1 PodPreset", target: "1.30", manifests: `apiVersion: settings.k8s.io/v1alpha1
kind: PodPreset
metadata: {name: proxy, namespace: shop}
`, want: []want{{Error, "PodPreset shop/proxy", "apiVersion", []string{"no longer served from Kubernetes 1.20", "has no replacement", "mutating admission webhook"}}}},
		{name: "extensions/v1beta1 Job", target: "1.30", manifests: `apiVersion: extensions/v1beta1
kind: Job
metadata: {name: migrate, namespace: shop}
`, want: []want{{Error, "Job shop/migrate", "apiVersion", []string{"no longer served from Kubernetes 1.8", "Migrate to batch/v1 Job"}}}},
	})
}

// TestRemovedAPIAdviceIsShared: the findings of many objects of one removed
// kind share one recommendation, not a copy each.
func TestRemovedAPIAdviceIsShared(t *testing.T) {
	var docs []string
	for i := range 3 {
		docs = append(docs, fmt.Sprintf("apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: web-%d}\n", i))
	}
	got := runCheck(t, "removed-api", input(t, "", "1.32", strings.Join(docs, "---\n")))
	if len(got) != 3 || got[0].Recommendation != got[2].Recommendation || !strings.HasPrefix(got[0].Recommendation, "Migrate to networking.k8s.io/v1 Ingress") {
		t.Fatalf("findings %s", dump(got))
	}
	if unsafe.StringData(got[0].Recommendation) != unsafe.StringData(got[2].Recommendation) {
		t.Error("each finding holds its own copy of the recommendation")
	}
}
