package materialize

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

func workshop(t *testing.T) (*scenario.Scenario, *twinbuild.Snapshot) {
	t.Helper()
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := twinbuild.Start(sc)
	if err != nil {
		t.Fatal(err)
	}
	return sc, snap
}

// Every workshop node becomes a KWOK node that carries what a real EKS
// node of its kind carries, and what the twin gave it.
func TestKwokNodesOfTheWorkshop(t *testing.T) {
	_, snap := workshop(t)
	// The labels real nodes of each kind carry (and the inventory reads).
	kindLabels := map[string][]string{
		"managed":      {"eks.amazonaws.com/nodegroup", "eks.amazonaws.com/nodegroup-image", "eks.amazonaws.com/capacityType"},
		"self-managed": {"alpha.eksctl.io/nodegroup-name", "node.kubernetes.io/lifecycle"},
		"karpenter":    {"karpenter.sh/nodepool", "karpenter.sh/initialized", "karpenter.sh/registered", "karpenter.sh/capacity-type", "karpenter.k8s.aws/ec2nodeclass"},
		"fargate":      {"eks.amazonaws.com/compute-type", "eks.amazonaws.com/fargate-profile"},
	}
	every := []string{"topology.kubernetes.io/zone", "topology.kubernetes.io/region", "kubernetes.io/arch", "kubernetes.io/os",
		"kubernetes.io/hostname", "beta.kubernetes.io/arch", "beta.kubernetes.io/os",
		"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"}
	ec2 := []string{"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"}
	seen := map[string]int{}
	for _, twin := range snap.Nodes {
		n := KWOKNode(twin)
		g := snap.Groups[twin.Name]
		seen[g.Type]++
		if n.Annotations[KwokAnnotation] != KwokValue {
			t.Errorf("%s: annotations %v lack %s=%s", n.Name, n.Annotations, KwokAnnotation, KwokValue)
		}
		want := append(append([]string{}, kindLabels[g.Type]...), every...)
		if g.Type != "fargate" {
			want = append(want, ec2...)
		}
		for _, l := range want {
			if n.Labels[l] == "" {
				t.Errorf("%s (%s %s) lacks label %s", n.Name, g.Type, g.Name, l)
			}
		}
		for k, v := range twin.Labels {
			if n.Labels[k] != v {
				t.Errorf("%s: label %s=%q, the twin says %q", n.Name, k, n.Labels[k], v)
			}
		}
		if n.Labels["failure-domain.beta.kubernetes.io/zone"] != twin.Labels["topology.kubernetes.io/zone"] {
			t.Errorf("%s: beta zone label %q", n.Name, n.Labels["failure-domain.beta.kubernetes.io/zone"])
		}
		if !reflect.DeepEqual(n.Spec.Taints, twin.Spec.Taints) && !(len(n.Spec.Taints) == 0 && len(twin.Spec.Taints) == 0) {
			t.Errorf("%s: taints %v, the twin's %v", n.Name, n.Spec.Taints, twin.Spec.Taints)
		}
		if n.Status.NodeInfo != twin.Status.NodeInfo || n.Status.NodeInfo.KubeletVersion != "v1.30.14-eks-f69f56f" {
			t.Errorf("%s: nodeInfo %+v, the twin's %+v", n.Name, n.Status.NodeInfo, twin.Status.NodeInfo)
		}
		if !reflect.DeepEqual(n.Status.Allocatable, twin.Status.Allocatable) || !reflect.DeepEqual(n.Status.Capacity, twin.Status.Capacity) {
			t.Errorf("%s: capacity/allocatable differ from the twin's", n.Name)
		}
		if n.Spec.ProviderID != twin.Spec.ProviderID || !strings.HasPrefix(n.Spec.ProviderID, "aws:///us-west-2") {
			t.Errorf("%s: providerID %q", n.Name, n.Spec.ProviderID)
		}
		if len(n.Status.Conditions) != 0 {
			t.Errorf("%s: conditions %v: KWOK's node-initialize stage sets them only on a node that is not Ready", n.Name, n.Status.Conditions)
		}
		if n.Status.Addresses[0].Type != corev1.NodeInternalIP || !strings.HasPrefix(n.Status.Addresses[0].Address, "10.0.") {
			t.Errorf("%s: addresses %v", n.Name, n.Status.Addresses)
		}
	}
	if want := map[string]int{"managed": 7, "self-managed": 2, "karpenter": 1, "fargate": 1}; !reflect.DeepEqual(seen, want) {
		t.Errorf("node kinds %v, want %v", seen, want)
	}
}

func TestNodeAddresses(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []corev1.NodeAddress
	}{
		{"ip-10-0-20-191.us-west-2.compute.internal", []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "10.0.20.191"},
			{Type: corev1.NodeInternalDNS, Address: "ip-10-0-20-191.us-west-2.compute.internal"},
			{Type: corev1.NodeHostName, Address: "ip-10-0-20-191.us-west-2.compute.internal"}}},
		{"fargate-ip-192-168-1-2.us-west-2.compute.internal", []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "192.168.1.2"},
			{Type: corev1.NodeInternalDNS, Address: "fargate-ip-192-168-1-2.us-west-2.compute.internal"},
			{Type: corev1.NodeHostName, Address: "fargate-ip-192-168-1-2.us-west-2.compute.internal"}}},
		{"worker-1", []corev1.NodeAddress{
			{Type: corev1.NodeInternalDNS, Address: "worker-1"},
			{Type: corev1.NodeHostName, Address: "worker-1"}}},
	} {
		if got := nodeAddresses(tc.name); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The plan applies the workshop's manifests as written, every kind
// included, dependencies first, plus what the twin made: the NodeClaim of
// the Karpenter node and the EBS volume of orders' database.
func TestPlanOfTheWorkshop(t *testing.T) {
	sc, snap := workshop(t)
	docs, skipped, err := documents(sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 0 {
		t.Errorf("skipped %v: a built-in scenario's files can be read again", skipped)
	}
	p, err := planObjects(snap, docs)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var order []string
	byName := map[string]*unstructured.Unstructured{}
	for _, d := range p.docs {
		k := d.obj.GetKind()
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
		byName[k+" "+namespaceOf(d.obj)+"/"+d.obj.GetName()] = d.obj
	}
	wantOrder := []string{"Namespace", "StorageClass", "PersistentVolume", "PersistentVolumeClaim", "ServiceAccount",
		"Secret", "ConfigMap", "Service", "EC2NodeClass", "NodePool", "PodDisruptionBudget", "NodeClaim",
		"DaemonSet", "StatefulSet", "Deployment"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("kinds applied in the order\n %v, want\n %v", order, wantOrder)
	}
	wantCounts := map[string]int{"Namespace": 8, "StorageClass": 1, "PersistentVolume": 1, "PersistentVolumeClaim": 1,
		"ServiceAccount": 12, "ConfigMap": 6, "Secret": 2, "Service": 13, "EC2NodeClass": 1, "NodePool": 1,
		"PodDisruptionBudget": 4, "NodeClaim": 1, "DaemonSet": 3, "StatefulSet": 2, "Deployment": 12}
	if !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("counts %v, want %v", counts, wantCounts)
	}

	// The add-ons' and Karpenter's accounts: their workloads' manifests
	// name them, the add-on or the chart would create them; the app's own
	// six are applied as written.
	wantAccounts := []string{"karpenter/karpenter", "kube-system/aws-node", "kube-system/coredns",
		"kube-system/ebs-csi-controller-sa", "kube-system/ebs-csi-node-sa", "kube-system/kube-proxy"}
	if !reflect.DeepEqual(p.accounts, wantAccounts) {
		t.Errorf("ServiceAccounts created %v, want %v", p.accounts, wantAccounts)
	}
	for _, key := range wantAccounts {
		if byName["ServiceAccount "+key] == nil {
			t.Errorf("the plan applies no ServiceAccount %s", key)
		}
	}

	// Fargate: only assets, through its pod template.
	for key, u := range byName {
		path, ok := podSpecPath[u.GetKind()]
		if !ok {
			continue
		}
		got, _, _ := unstructured.NestedString(u.Object, append(path, "schedulerName")...)
		want := ""
		if key == "Deployment assets/assets" {
			want = FargateScheduler
		}
		if got != want {
			t.Errorf("%s: schedulerName %q, want %q", key, got, want)
		}
	}

	// orders-mysql-data: bound to a PV in the zone the twin provisioned it.
	var zone, volume string
	for _, v := range snap.Volumes {
		if v.Claim.Name == "orders-mysql-data" {
			zone, volume = v.Zone, v.Claim.Spec.VolumeName
		}
	}
	if zone == "" || volume == "" {
		t.Fatalf("the twin did not bind orders-mysql-data: %+v", snap.Volumes)
	}
	pvc := byName["PersistentVolumeClaim orders/orders-mysql-data"]
	if got, _, _ := unstructured.NestedString(pvc.Object, "spec", "volumeName"); got != volume {
		t.Errorf("claim's volumeName %q, want %q", got, volume)
	}
	var pv corev1.PersistentVolume
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(byName["PersistentVolume default/"+volume].Object, &pv); err != nil {
		t.Fatal(err)
	}
	term := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
	if term.Key != corev1.LabelTopologyZone || !reflect.DeepEqual(term.Values, []string{zone}) {
		t.Errorf("PV node affinity %+v, want %s in [%s]", term, corev1.LabelTopologyZone, zone)
	}
	if pv.Spec.ClaimRef.Namespace != "orders" || pv.Spec.ClaimRef.Name != "orders-mysql-data" || pv.Spec.CSI.Driver != EBSDriver ||
		pv.Spec.StorageClassName != "gp3" || pv.Spec.Capacity.Storage().String() != "10Gi" {
		t.Errorf("PV %+v", pv.Spec)
	}

	// The NodeClaim says what Karpenter's status would.
	var nc *unstructured.Unstructured
	for key, u := range byName {
		if strings.HasPrefix(key, "NodeClaim ") {
			nc = u
		}
	}
	karp := snap.NodeClaims[0]
	for path, want := range map[string]string{
		"status.nodeName": karp.Node, "status.imageID": "ami-0f676a166352f02ab", "status.providerID": karp.ProviderID,
		"spec.nodeClassRef.name": "default", "spec.expireAfter": "720h0m0s", "metadata.labels.karpenter\\.sh/nodepool": "default",
	} {
		fields := strings.Split(strings.ReplaceAll(path, "\\.", "\x00"), ".")
		for i := range fields {
			fields[i] = strings.ReplaceAll(fields[i], "\x00", ".")
		}
		if got, _, _ := unstructured.NestedString(nc.Object, fields...); got != want {
			t.Errorf("NodeClaim %s = %q, want %q", path, got, want)
		}
	}
	conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
	if len(conds) != 4 {
		t.Errorf("NodeClaim conditions %v, want Launched, Registered, Initialized, Ready", conds)
	}
}

// A scenario built in memory cannot be read again: the plan falls back to
// the objects the twin applied and says which kinds it leaves out.
func TestDocumentsFallBackToTheTwinsObjects(t *testing.T) {
	fsys := fstest.MapFS{"m.yaml": {Data: []byte(`apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: app}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
`)}}
	sc, err := scenario.Parse("in-memory", []byte(`apiVersion: ladder.dev/v1alpha1
kind: Scenario
metadata: {name: mem}
spec:
  start: "2026-03-30T09:00:00Z"
  cluster: {name: c, version: "1.30", region: us-west-2, zones: [us-west-2a]}
  nodeGroups:
    - name: ng
      type: managed
      managed: {instanceTypes: [m5.large], desired: 1, amiType: AL2023_x86_64_STANDARD}
  manifests:
    - file: m.yaml
`), fsys)
	if err != nil {
		t.Fatal(err)
	}
	docs, skipped, err := documents(sc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(skipped, []string{"1 ConfigMap"}) {
		t.Errorf("skipped %v, want [1 ConfigMap]", skipped)
	}
	var kinds []string
	for _, d := range docs {
		kinds = append(kinds, d.obj.GetKind())
	}
	if !reflect.DeepEqual(kinds, []string{"Namespace", "Deployment"}) {
		t.Errorf("kinds %v", kinds)
	}
}

func TestToFargate(t *testing.T) {
	for kind, path := range podSpecPath {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": kind}}
		if err := toFargate(u); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if got, _, _ := unstructured.NestedString(u.Object, append(path, "schedulerName")...); got != FargateScheduler {
			t.Errorf("%s: schedulerName %q at %v", kind, got, path)
		}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Rollout", "metadata": map[string]any{"name": "r", "namespace": "a"}}}
	if err := toFargate(u); err == nil || !strings.Contains(err.Error(), "Rollout a/r: a Fargate profile selects its pods, but the lab cannot send a Rollout's pods to Fargate") {
		t.Errorf("error %v", err)
	}
}

// The NodeClaim the plan makes is one the API server accepts: every field
// it sets is in Karpenter's CRD schema with the type, pattern and enum the
// schema says, nothing is null (a zero metav1.Time converts to null: the
// lab refused status.lastPodEventTime: null), and no required field is
// missing. The schema is the very CRD installCRDs applies.
func TestNodeClaimFitsTheCRD(t *testing.T) {
	p := workshopPlan(t)
	crds, err := karpenterCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	for _, crd := range crds {
		if crd.GetName() == "nodeclaims.karpenter.sh" {
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			schema, _, _ = unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema")
		}
	}
	if schema == nil {
		t.Fatal("no NodeClaim CRD schema among the embedded CRDs")
	}
	claims := 0
	for _, d := range p.docs {
		if d.obj.GetKind() != "NodeClaim" {
			continue
		}
		claims++
		obj := d.obj.DeepCopy().Object
		delete(obj, "apiVersion")
		delete(obj, "kind")
		delete(obj, "metadata") // ObjectMeta: validated by the API server's own code
		for _, problem := range schemaProblems("", obj, schema) {
			t.Errorf("NodeClaim %s: %s", d.obj.GetName(), problem)
		}
	}
	if claims != 1 {
		t.Errorf("%d NodeClaims in the plan, want 1 (the workshop's Karpenter node)", claims)
	}
	// The checker itself: it finds what the API server refused.
	bad := map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}, "requirements": []any{}},
		"status": map[string]any{"lastPodEventTime": nil, "conditions": []any{map[string]any{"type": "Ready", "status": "Yes", "lastTransitionTime": "2026-01-01T00:00:00Z"}}, "bogus": "x"}}
	got := schemaProblems("", bad, schema)
	want := []string{`status.bogus: not in the schema`, `status.conditions[0].status: "Yes" is not one of [True False Unknown]`, `status.lastPodEventTime: null`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schemaProblems of a bad NodeClaim:\n %q\nwant\n %q", got, want)
	}
}

// schemaProblems checks v against an OpenAPI v3 schema of a CRD (types,
// properties, required, enum, pattern, nullable), sorted by path. CEL rules
// are left to the lab test.
func schemaProblems(path string, v any, schema map[string]any) []string {
	var out []string
	at := func(format string, args ...any) {
		out = append(out, strings.TrimPrefix(path, ".")+": "+fmt.Sprintf(format, args...))
	}
	if v == nil {
		if schema["nullable"] != true {
			at("null")
		}
		return out
	}
	if schema["x-kubernetes-int-or-string"] == true {
		switch v.(type) {
		case string, int64, int, float64:
		default:
			at("%T is neither an integer nor a string", v)
		}
		return out
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			at("%q is not one of %v", v, enum)
		}
	}
	switch schema["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			at("%T, want an object", v)
			return out
		}
		props, _ := schema["properties"].(map[string]any)
		extra, _ := schema["additionalProperties"].(map[string]any)
		for _, k := range sortedKeys(m) {
			switch s, ok := props[k].(map[string]any); {
			case ok:
				out = append(out, schemaProblems(path+"."+k, m[k], s)...)
			case extra != nil:
				out = append(out, schemaProblems(path+"."+k, m[k], extra)...)
			case schema["x-kubernetes-preserve-unknown-fields"] != true:
				out = append(out, strings.TrimPrefix(path+"."+k, ".")+": not in the schema")
			}
		}
		required, _ := schema["required"].([]any)
		for _, r := range required {
			if _, ok := m[r.(string)]; !ok {
				at("required field %s missing", r)
			}
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			at("%T, want an array", v)
			return out
		}
		items, _ := schema["items"].(map[string]any)
		for i, e := range l {
			out = append(out, schemaProblems(fmt.Sprintf("%s[%d]", path, i), e, items)...)
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			at("%T, want a string", v)
			return out
		}
		if pat, ok := schema["pattern"].(string); ok && !regexp.MustCompile(pat).MatchString(s) {
			at("%q does not match %s", s, pat)
		}
		if schema["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				at("%q is not a date-time", s)
			}
		}
	case "integer":
		switch v.(type) {
		case int64, int:
		default:
			at("%T, want an integer", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			at("%T, want a boolean", v)
		}
	}
	sort.Strings(out)
	return out
}

// The workshop's NodeClaim meets its NodePool's requirements as Karpenter
// checks them for RequirementsDrifted (areRequirementsDrifted in
// sigs.k8s.io/karpenter pkg/controllers/nodeclaim/disruption/drift.go): a
// materialized claim without its instance type's labels would be drifted
// by the real Karpenter the moment it starts.
func TestNodeClaimMeetsItsNodePool(t *testing.T) {
	p := workshopPlan(t)
	pools := map[string]*karpv1.NodePool{}
	var claims []*karpv1.NodeClaim
	for _, d := range p.docs {
		switch d.obj.GetKind() {
		case "NodePool":
			np := &karpv1.NodePool{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.obj.Object, np); err != nil {
				t.Fatal(err)
			}
			pools[np.Name] = np
		case "NodeClaim":
			nc := &karpv1.NodeClaim{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.obj.Object, nc); err != nil {
				t.Fatal(err)
			}
			claims = append(claims, nc)
		}
	}
	if len(claims) != 1 {
		t.Fatalf("%d NodeClaims in the plan, want 1", len(claims))
	}
	for _, nc := range claims {
		np := pools[nc.Labels[karpv1.NodePoolLabelKey]]
		if np == nil {
			t.Fatalf("NodeClaim %s: no NodePool %q in the plan", nc.Name, nc.Labels[karpv1.NodePoolLabelKey])
		}
		want := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
		if err := scheduling.NewLabelRequirements(nc.Labels).Compatible(want); err != nil {
			t.Errorf("NodeClaim %s does not meet NodePool %s's requirements (Karpenter drifts it): %v; labels %v", nc.Name, np.Name, err, nc.Labels)
		}
	}
}

// workshopPlan is the plan of the workshop's objects.
func workshopPlan(t *testing.T) *plan {
	t.Helper()
	sc, snap := workshop(t)
	docs, _, err := documents(sc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := planObjects(snap, docs)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
