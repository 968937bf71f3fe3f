package conformance

import (
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Patch by resource: kubectl patch KIND NAME through the dynamic client.

func objectCases() []testCase {
	return []testCase{
		{"objects/patch", objectsPatch},
	}
}

var (
	pdbResource        = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	deploymentResource = appsv1.SchemeGroupVersion.WithResource("deployments")
)

// objectsPatch: PDB web (minAvailable 1) over Deployment web's two Ready
// pods. A merge patch to minAvailable 2 comes back as the stored object and
// the disruption controller's status follows it (no disruption allowed); a
// JSON patch sets it back to 1 (one allowed). A strategic merge patch of
// the Deployment's labels is stored. A missing PDB is 404 as a typed client
// gets it, a resource the API does not serve 404, a strategic merge patch
// that does not parse 400.
func objectsPatch(f *fixture) error {
	if err := f.deploymentOnNewNode("web", 2); err != nil {
		return err
	}
	if err := f.pdb(pdbSpec{name: "web", app: "web", minAvailable: intOrStr(1)}); err != nil {
		return err
	}
	if _, err := f.readyPods("web", 2); err != nil {
		return err
	}
	if err := f.waitPDB("web", pdbStatus{CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1, ExpectedPods: 2}); err != nil {
		return err
	}

	u, err := f.env.Patch(f.ctx, pdbResource, f.ns, "web", types.MergePatchType, []byte(`{"spec":{"minAvailable":2}}`))
	if err != nil {
		return mismatchf("merge patch of PDB web's minAvailable: %v", err)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "minAvailable"); u.GetKind() != "PodDisruptionBudget" || u.GetAPIVersion() != "policy/v1" || u.GetName() != "web" || got != int64(2) {
		return mismatchf("after the merge patch: want policy/v1 PodDisruptionBudget web with spec.minAvailable 2, got %s %s %s with %v (%T)", u.GetAPIVersion(), u.GetKind(), u.GetName(), got, got)
	}
	if err := f.waitPDB("web", pdbStatus{CurrentHealthy: 2, DesiredHealthy: 2, DisruptionsAllowed: 0, ExpectedPods: 2}); err != nil {
		return err
	}
	if _, err := f.env.Patch(f.ctx, pdbResource, f.ns, "web", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/minAvailable","value":1}]`)); err != nil {
		return mismatchf("JSON patch of PDB web's minAvailable: %v", err)
	}
	if err := f.waitPDB("web", pdbStatus{CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1, ExpectedPods: 2}); err != nil {
		return err
	}

	if _, err := f.env.Patch(f.ctx, deploymentResource, f.ns, "web", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`)); err != nil {
		return mismatchf("strategic merge patch of Deployment web's labels: %v", err)
	}
	deps, err := f.env.ListDeployments(f.ctx, f.ns)
	if err != nil {
		return err
	}
	if len(deps) != 1 || deps[0].Labels["tier"] != "front" {
		return mismatchf("after the strategic merge patch: want Deployment web labelled tier=front, got %v", deps)
	}

	_, err = f.env.Patch(f.ctx, pdbResource, f.ns, "missing", types.MergePatchType, []byte(`{}`))
	if err := notFound("poddisruptionbudgets.policy", "missing").check("patch a missing PDB", err); err != nil {
		return err
	}
	_, err = f.env.Patch(f.ctx, schema.GroupVersionResource{Group: "conformance.ladder.dev", Version: "v1", Resource: "widgets"}, f.ns, "w", types.MergePatchType, []byte(`{}`))
	if code := statusCode(err); code != http.StatusNotFound {
		return mismatchf("patch of a resource the API does not serve: want 404, got %v", err)
	}
	_, err = f.env.Patch(f.ctx, pdbResource, f.ns, "web", types.StrategicMergePatchType, []byte(`{"spec":`))
	if code := statusCode(err); code != http.StatusBadRequest {
		return mismatchf("a strategic merge patch that does not parse: want 400, got %v", err)
	}
	return nil
}
