package conformance

import (
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// Workload patches: kubectl rollout restart and kubectl patch.

func workloadCases() []testCase {
	return []testCase{
		{"workloads/rollout-restart", workloadsRolloutRestart},
		{"workloads/patch-errors", workloadsPatchErrors},
		{"workloads/scale", workloadsScale},
	}
}

// workloadsRolloutRestart: Deployment web (2) and StatefulSet db (1) on
// n0, restarted as kubectl rollout restart does. Each is a new generation
// whose template carries the restartedAt annotation; kubectl rollout
// status says both rolled out, with new pods in place of every old one,
// each carrying the annotation.
func workloadsRolloutRestart(f *fixture) error {
	n0, err := f.addNode("n0")
	if err != nil {
		return err
	}
	if err := f.deployment("web", 2, n0); err != nil {
		return err
	}
	if err := f.statefulSet("db", 1, n0); err != nil {
		return err
	}
	before, err := f.readyPods("web", 2)
	if err != nil {
		return err
	}
	if _, err := f.readyPods("db", 1); err != nil {
		return err
	}
	old := map[string]string{}
	for _, p := range before {
		old[p.Name] = string(p.UID)
	}
	db, err := f.env.GetPod(f.ctx, f.ns, "db-0")
	if err != nil {
		return err
	}
	old["db-0"] = string(db.UID)

	workloads := []kubeport.Workload{{Kind: "Deployment", Namespace: f.ns, Name: "web"}, {Kind: "StatefulSet", Namespace: f.ns, Name: "db"}}
	at := f.env.Now()
	for _, w := range workloads {
		if err := kubeport.RolloutRestart(f.ctx, f.env, w); err != nil {
			return mismatchf("rollout restart %s: %v", w, err)
		}
	}
	deps, err := f.env.ListDeployments(f.ctx, f.ns)
	if err != nil {
		return err
	}
	if len(deps) != 1 || deps[0].Generation != 2 || deps[0].Spec.Template.Annotations[kubeport.RestartedAtAnnotation] == "" {
		return mismatchf("after the restart: want Deployment web at generation 2 with a %s annotation, got %v", kubeport.RestartedAtAnnotation, deps)
	}
	if got, err := time.Parse(time.RFC3339, deps[0].Spec.Template.Annotations[kubeport.RestartedAtAnnotation]); err != nil || got.Before(at.Truncate(time.Second)) {
		return mismatchf("restartedAt %q: want an RFC 3339 time not before %s (%v)", deps[0].Spec.Template.Annotations[kubeport.RestartedAtAnnotation], at, err)
	}
	if err := kubeport.WaitFor(f.ctx, f.env, waitTimeout, kubeport.RolloutsComplete{Workloads: workloads}); err != nil {
		return mismatchf("after the restart: %v", err)
	}
	after, err := f.readyPods("web", 2)
	if err != nil {
		return err
	}
	dbPods, err := f.readyPods("db", 1)
	if err != nil {
		return err
	}
	for _, p := range append(after, dbPods...) {
		if old[p.Name] == string(p.UID) {
			return mismatchf("pod %s was not replaced by the restart", p.Name)
		}
		if p.Annotations[kubeport.RestartedAtAnnotation] == "" {
			return mismatchf("pod %s lacks the %s annotation of its template", p.Name, kubeport.RestartedAtAnnotation)
		}
	}
	return nil
}

// workloadsPatchErrors: a patch of a missing workload is 404, one that
// does not apply 400, and an unknown patch type 415, as a client gets them.
func workloadsPatchErrors(f *fixture) error {
	n0, err := f.addNode("n0")
	if err != nil {
		return err
	}
	if err := f.deployment("web", 1, n0); err != nil {
		return err
	}
	_, err = f.env.PatchDeployment(f.ctx, f.ns, "missing", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`))
	if err := notFound("deployments.apps", "missing").check("patch a missing Deployment", err); err != nil {
		return err
	}
	_, err = f.env.PatchStatefulSet(f.ctx, f.ns, "missing", types.StrategicMergePatchType, []byte(`{}`))
	if err := notFound("statefulsets.apps", "missing").check("patch a missing StatefulSet", err); err != nil {
		return err
	}
	_, err = f.env.PatchDeployment(f.ctx, f.ns, "web", types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/nothing"}]`))
	if code := statusCode(err); code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
		return mismatchf("a JSON patch removing a missing path: want 400 or 422, got %v", err)
	}
	_, err = f.env.PatchDeployment(f.ctx, f.ns, "web", types.PatchType("application/x-unknown"), []byte(`{}`))
	if code := statusCode(err); code != http.StatusUnsupportedMediaType {
		return mismatchf("a patch of an unknown type: want 415, got %v", err)
	}
	d, err := f.env.PatchDeployment(f.ctx, f.ns, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`))
	if err != nil {
		return mismatchf("merge patch of spec.replicas: %v", err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 || d.Generation != 2 {
		return mismatchf("after the merge patch: want replicas 2 at generation 2, got %v at %d", d.Spec.Replicas, d.Generation)
	}
	_, err = f.readyPods("web", 2)
	return err
}

// workloadsScale: kubectl scale of Deployment web from 1 to 3 through its
// scale subresource; its controller makes the pods. A missing workload is
// 404, a negative count 422.
func workloadsScale(f *fixture) error {
	n0, err := f.addNode("n0")
	if err != nil {
		return err
	}
	if err := f.deployment("web", 1, n0); err != nil {
		return err
	}
	if _, err := f.readyPods("web", 1); err != nil {
		return err
	}
	web := kubeport.Workload{Kind: "Deployment", Namespace: f.ns, Name: "web"}
	sc, err := f.env.UpdateScale(f.ctx, web, 3)
	if err != nil {
		return mismatchf("scale web to 3: %v", err)
	}
	if sc.Spec.Replicas != 3 || sc.Name != "web" {
		return mismatchf("scale web to 3: got %s with spec.replicas %d", sc.Name, sc.Spec.Replicas)
	}
	if _, err := f.readyPods("web", 3); err != nil {
		return err
	}
	_, err = f.env.UpdateScale(f.ctx, kubeport.Workload{Kind: "StatefulSet", Namespace: f.ns, Name: "missing"}, 1)
	if err := notFound("statefulsets.apps", "missing").check("scale a missing StatefulSet", err); err != nil {
		return err
	}
	_, err = f.env.UpdateScale(f.ctx, web, -1)
	if code := statusCode(err); code != http.StatusUnprocessableEntity {
		return mismatchf("scale web to -1: want 422, got %v", err)
	}
	return nil
}

func statusCode(err error) int32 {
	if st, ok := err.(interface{ Status() metav1.Status }); ok {
		return st.Status().Code
	}
	return 0
}
