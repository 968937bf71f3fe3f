package conformance

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ladder-eks/ladder/internal/kubeport"
)

// kubectl drain, semantics.md §D.3: cordon first; the filters
// (DaemonSet, mirror, local storage, unreplicated) refuse the whole drain
// before anything is evicted; 429 is retried every 5 s; any other eviction
// error fails that pod while the others are evicted.

// The filters' messages (k8s.io/kubectl/pkg/drain filters.go).
const (
	daemonSetFatal    = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
	localStorageFatal = "Pods with local storage (use --delete-emptydir-data to override)"
	unmanagedFatal    = "Pods that declare no controller (use --force to override)"
)

func drainCases() []testCase {
	return []testCase{
		{"drain/cordon-uncordon", drainCordon},
		{"drain/daemonset-refused", drainDaemonSetRefused},
		{"drain/daemonset-ignored", drainDaemonSetIgnored},
		{"drain/mirror-pod-skipped", drainMirror},
		{"drain/emptydir", drainEmptyDir},
		{"drain/unreplicated", drainUnreplicated},
		{"drain/pdb-blocks-until-timeout", drainTimeout},
		{"drain/two-pdbs-fail-that-pod-only", drainTwoPDBs},
	}
}

// refusal is the error kubectl drain returns when one filter refuses pods.
func (f *fixture) refusal(msg string, pods ...string) string {
	s := "cannot delete " + msg + ": "
	for i, p := range pods {
		if i > 0 {
			s += ", "
		}
		s += f.ns + "/" + p
	}
	return s
}

func (f *fixture) wantDrainError(node string, opts kubeport.DrainOptions, want string) error {
	err := f.env.Drain(f.ctx, node, opts)
	if err == nil {
		return mismatchf("drain %s %+v: want error %q, got success", node, opts, want)
	}
	if err.Error() != want {
		return mismatchf("drain %s %+v:\n  want error %q\n  got        %q", node, opts, want, err.Error())
	}
	return nil
}

func (f *fixture) wantDrained(node string, opts kubeport.DrainOptions) error {
	if err := f.env.Drain(f.ctx, node, opts); err != nil {
		return mismatchf("drain %s %+v: want success, got %v", node, opts, err)
	}
	return nil
}

// cordoned checks spec.unschedulable, and waits for the
// node.kubernetes.io/unschedulable:NoSchedule taint the node lifecycle
// controller keeps in step with it.
func (f *fixture) cordoned(node string, want bool) error {
	n, err := f.env.GetNode(f.ctx, node)
	if err != nil {
		return err
	}
	if n.Spec.Unschedulable != want {
		return mismatchf("node %s: want spec.unschedulable %v, got %v", node, want, n.Spec.Unschedulable)
	}
	var taints []corev1.Taint
	err = f.env.Wait(f.ctx, waitTimeout, func(ctx context.Context) (bool, error) {
		n, err := f.env.GetNode(ctx, node)
		if err != nil {
			return false, err
		}
		taints = n.Spec.Taints
		has := false
		for _, t := range taints {
			if t.Key == corev1.TaintNodeUnschedulable && t.Effect == corev1.TaintEffectNoSchedule {
				has = true
			}
		}
		return has == want, nil
	})
	if err != nil {
		return mismatchf("node %s: want the %s:NoSchedule taint present=%v: %v (taints %+v)", node, corev1.TaintNodeUnschedulable, want, err, taints)
	}
	return nil
}

func drainCordon(f *fixture) error {
	node, err := f.addNode("n0")
	if err != nil {
		return err
	}
	if err := f.cordoned(node, false); err != nil {
		return err
	}
	if err := f.env.Cordon(f.ctx, node); err != nil {
		return mismatchf("cordon %s: %v", node, err)
	}
	if err := f.cordoned(node, true); err != nil {
		return err
	}
	if err := f.env.Uncordon(f.ctx, node); err != nil {
		return mismatchf("uncordon %s: %v", node, err)
	}
	if err := f.cordoned(node, false); err != nil {
		return err
	}
	err = f.env.Cordon(f.ctx, f.ns+"-missing")
	return notFound("nodes", f.ns+"-missing").check("cordon a missing node", err)
}

// agentAndWeb builds a node running DaemonSet agent and Deployment web (one
// pod each) and returns the node and both pods' names.
func (f *fixture) agentAndWeb() (node, agent, web string, err error) {
	if node, err = f.addNode("n0"); err != nil {
		return
	}
	if err = f.daemonSet("agent", node); err != nil {
		return
	}
	if err = f.deployment("web", 1, node); err != nil {
		return
	}
	a, err := f.readyPods("agent", 1)
	if err != nil {
		return
	}
	w, err := f.readyPods("web", 1)
	if err != nil {
		return
	}
	return node, a[0].Name, w[0].Name, nil
}

// drainDaemonSetRefused: without --ignore-daemonsets the drain is refused
// before anything is evicted, but the node stays cordoned.
func drainDaemonSetRefused(f *fixture) error {
	node, agent, web, err := f.agentAndWeb()
	if err != nil {
		return err
	}
	if err := f.wantDrainError(node, kubeport.DrainOptions{}, f.refusal(daemonSetFatal, agent)); err != nil {
		return err
	}
	if err := f.untouched(web); err != nil {
		return err
	}
	if err := f.untouched(agent); err != nil {
		return err
	}
	return f.cordoned(node, true)
}

// drainDaemonSetIgnored: with --ignore-daemonsets the DaemonSet pod stays
// and everything else is evicted.
func drainDaemonSetIgnored(f *fixture) error {
	node, agent, web, err := f.agentAndWeb()
	if err != nil {
		return err
	}
	if err := f.wantDrained(node, kubeport.DrainOptions{IgnoreDaemonSets: true}); err != nil {
		return err
	}
	if err := f.gone(web); err != nil {
		return err
	}
	return f.untouched(agent)
}

// drainMirror: a mirror (static) pod is skipped silently — no --force is
// needed although it declares no controller.
func drainMirror(f *fixture) error {
	node, err := f.addNode("n0")
	if err != nil {
		return err
	}
	spec := podSpec(node)
	spec.NodeName = node
	mirror := "static-" + node
	if err := f.barePod(mirror, map[string]string{"app": "static"}, map[string]string{corev1.MirrorPodAnnotationKey: "conformance"}, spec); err != nil {
		return err
	}
	if err := f.deployment("web", 1, node); err != nil {
		return err
	}
	if _, err := f.readyPods("static", 1); err != nil {
		return err
	}
	web, err := f.readyPods("web", 1)
	if err != nil {
		return err
	}
	if err := f.wantDrained(node, kubeport.DrainOptions{}); err != nil {
		return err
	}
	if err := f.gone(web[0].Name); err != nil {
		return err
	}
	return f.untouched(mirror)
}

// drainEmptyDir: a pod with an emptyDir volume is refused without
// --delete-emptydir-data and evicted with it.
func drainEmptyDir(f *fixture) error {
	node, err := f.addNode("n0")
	if err != nil {
		return err
	}
	scratch := func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	if err := f.deployment("cache", 1, node, scratch); err != nil {
		return err
	}
	pods, err := f.readyPods("cache", 1)
	if err != nil {
		return err
	}
	name := pods[0].Name
	if err := f.wantDrainError(node, kubeport.DrainOptions{}, f.refusal(localStorageFatal, name)); err != nil {
		return err
	}
	if err := f.untouched(name); err != nil {
		return err
	}
	if err := f.wantDrained(node, kubeport.DrainOptions{DeleteEmptyDirData: true}); err != nil {
		return err
	}
	return f.gone(name)
}

// drainUnreplicated: a pod without a controller is refused without --force
// and deleted with it.
func drainUnreplicated(f *fixture) error {
	node, err := f.addNode("n0")
	if err != nil {
		return err
	}
	spec := podSpec(node)
	spec.NodeName = node
	if err := f.barePod("lonely", map[string]string{"app": "lonely"}, nil, spec); err != nil {
		return err
	}
	if _, err := f.readyPods("lonely", 1); err != nil {
		return err
	}
	if err := f.wantDrainError(node, kubeport.DrainOptions{}, f.refusal(unmanagedFatal, "lonely")); err != nil {
		return err
	}
	if err := f.untouched("lonely"); err != nil {
		return err
	}
	if err := f.wantDrained(node, kubeport.DrainOptions{Force: true}); err != nil {
		return err
	}
	return f.gone("lonely")
}

// drainTimeout: a pod whose PDB allows nothing blocks the drain; kubectl
// retries the 429 every 5 s and checks its global --timeout only before
// each attempt, so a 1 s timeout ends the drain at the first retry, 5 s
// in, with "global timeout reached". The pod is untouched.
func drainTimeout(f *fixture) error {
	node, pods, err := f.web(1, pdbSpec{name: "web", app: "web", minAvailable: intOrStr(1)})
	if err != nil {
		return err
	}
	start := f.env.Now()
	err = f.env.Drain(f.ctx, node, kubeport.DrainOptions{Timeout: time.Second})
	took := f.env.Now().Sub(start)
	want := fmt.Sprintf("error when evicting pods/%q -n %q: global timeout reached: 1s", pods[0].Name, f.ns)
	if err == nil || err.Error() != want {
		return mismatchf("drain with --timeout=1s blocked by a PDB:\n  want error %q\n  got        %v", want, err)
	}
	if took < 5*time.Second {
		return mismatchf("drain with --timeout=1s blocked by a PDB returned after %s; kubectl returns at its first retry, 5s in", took)
	}
	return f.untouched(pods[0].Name)
}

// drainTwoPDBs: the 500 for a pod with two PDBs fails that pod only;
// kubectl evicts every other pod concurrently, waits for them to go, and
// returns the failure.
func drainTwoPDBs(f *fixture) error {
	node, err := f.addNode("n0")
	if err != nil {
		return err
	}
	if err := f.deployment("api", 1, node); err != nil {
		return err
	}
	if err := f.deployment("web", 1, node); err != nil {
		return err
	}
	api, err := f.readyPods("api", 1)
	if err != nil {
		return err
	}
	web, err := f.readyPods("web", 1)
	if err != nil {
		return err
	}
	// After the pods are Ready: see pdbsAfterReadyPods.
	for _, name := range []string{"api-a", "api-b"} {
		if err := f.pdb(pdbSpec{name: name, app: "api", maxUnavailable: intOrStr(1)}); err != nil {
			return err
		}
	}
	for _, name := range []string{"api-a", "api-b"} {
		if err := f.waitPDB(name, pdbStatus{CurrentHealthy: 1, DesiredHealthy: 0, DisruptionsAllowed: 1, ExpectedPods: 1}); err != nil {
			return err
		}
	}
	want := fmt.Sprintf("error when evicting pods/%q -n %q: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.", api[0].Name, f.ns)
	if err := f.wantDrainError(node, kubeport.DrainOptions{}, want); err != nil {
		return err
	}
	if err := f.untouched(api[0].Name); err != nil {
		return err
	}
	// web sorts after api: a drain that stops at the first failure never
	// evicts it.
	if _, err := f.env.GetPod(f.ctx, f.ns, web[0].Name); !apierrors.IsNotFound(err) {
		return mismatchf("pod %s (no PDB) should have been evicted and waited for by the drain: GetPod gave %v", web[0].Name, err)
	}
	return nil
}
