package rehearse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ladder-eks/ladder/internal/drain"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/sim"
)

// play runs the script: each action at or after its time, in order, then
// waits for the cluster to settle. A scenario without actions but with a
// playbook (spec.upgrade) runs the playbook. It returns the report status.
func (r *run) play() string {
	if len(r.sc.Spec.Actions) == 0 && r.sc.Spec.Upgrade != nil {
		err := r.upgrade(r.upgradeTarget(""))
		switch {
		case errors.Is(err, errTimeLimit):
			return report.Stuck
		case err != nil:
			r.failure = fmt.Sprintf("upgrade: %v", err)
			r.event("Warning", "UpgradeFailed", r.failure)
			return report.Failed
		}
		if !r.waitSettled() {
			return report.Stuck
		}
		return report.Succeeded
	}
	start := r.eng.Start()
	for i, a := range r.sc.Spec.Actions {
		if a.At != nil {
			at := start.Add(a.At.Duration)
			if at.After(r.limit) {
				r.sleep(r.limit)
				return report.Stuck
			}
			if at.After(r.eng.Now()) {
				r.sleep(at)
			}
		}
		if err := r.do(i, a); err == errTimeLimit {
			return report.Stuck
		} else if err != nil {
			r.failure = fmt.Sprintf("spec.actions[%d] (%s): %v", i, describe(a), err)
			r.event("Warning", "ActionFailed", r.failure)
			return report.Failed
		}
		if a.Wait != nil && a.Wait.Settled && !r.waitSettled() {
			return report.Stuck
		}
	}
	if !r.waitSettled() {
		return report.Stuck
	}
	return report.Succeeded
}

func (r *run) waitSettled() bool { return r.runUntil(r.settled) }

// runUntil runs events until done is true, or the time limit.
func (r *run) runUntil(done func() bool) bool {
	if done() {
		return true
	}
	return r.eng.Run(r.limit, done) == sim.Done
}

// upgradeTarget is the playbook's target: to, else spec.upgrade.to, else
// the control plane's next minor. Options.To (ladder rehearse --to) wins.
func (r *run) upgradeTarget(to string) kubeversion.Minor {
	if r.to != "" {
		to = r.to
	}
	if to == "" && r.sc.Spec.Upgrade != nil {
		to = r.sc.Spec.Upgrade.To
	}
	if v, err := kubeversion.Parse(to); err == nil {
		return v
	}
	return r.cp.Version().Next()
}

// kubePort is the Kubernetes API of the run's twin, as the script's
// kubectl-shaped actions and the executor call it. The objects the twin
// keeps as applied and serves no read of are the applied manifests.
func (r *run) kubePort() *twinport.Port {
	return twinport.New(r.kube, twinport.Options{Karpenter: r.karp, Applied: r.applied})
}

// applied is an applied manifest's object, nil for none.
func (r *run) applied(kind, namespace, name string) metav1.Object {
	if o, ok := r.objects[objectKey(kind, namespace, name)]; ok {
		return o.Object
	}
	return nil
}

// sleep lets the port's clock reach until, as a script on a real cluster
// waits: Wait for a condition that never holds, which runs the twin in
// steps of its poll interval and ends at until.
func (r *run) sleep(until time.Time) {
	if d := until.Sub(r.eng.Now()); d > 0 {
		_ = r.kubePort().Wait(context.Background(), d, func(context.Context) (bool, error) { return false, nil })
	}
}

func describe(a scenario.Action) string {
	if a.Name != "" {
		return a.Name
	}
	return a.Verb()
}

// do performs one action.
func (r *run) do(i int, a scenario.Action) error {
	switch {
	case a.Scale != nil:
		s := a.Scale
		ns := s.Namespace
		if ns == "" {
			ns = "default"
		}
		if _, err := r.kubePort().UpdateScale(context.Background(), kubeport.Workload{Kind: s.Kind, Namespace: ns, Name: s.Name}, s.Replicas); err != nil {
			return err
		}
		if o, ok := r.objects[objectKey(s.Kind, ns, s.Name)]; ok {
			replicas := s.Replicas
			switch obj := o.Object.(type) {
			case *appsv1.Deployment:
				obj.Spec.Replicas = &replicas
			case *appsv1.StatefulSet:
				obj.Spec.Replicas = &replicas
			}
		}
		r.event("Normal", "Scaled", fmt.Sprintf("%s: scaled %s %s/%s to %d replicas", describe(a), s.Kind, ns, s.Name, s.Replicas))
	case a.Apply != nil:
		r.event("Normal", "Applied", describe(a))
		if err := r.applyAll(r.sc.ActionObjects[i]); err != nil {
			return err
		}
	case a.Patch != nil:
		r.event("Normal", "Patched", fmt.Sprintf("%s: patched %s %s", describe(a), a.Patch.Kind, a.Patch.Name))
		return r.patch(a.Patch)
	case a.UpgradeControlPlane != nil:
		target, err := kubeversion.Parse(a.UpgradeControlPlane.Version)
		if err != nil {
			return err
		}
		if err := r.executor().UpgradeControlPlane(context.Background(), target); err == errTimeLimit {
			r.event("Warning", "TimeLimit", fmt.Sprintf("%s: the control-plane update did not finish within the time limit", describe(a)))
			return errTimeLimit
		} else if err != nil {
			return err
		}
	case a.Upgrade != nil:
		return r.upgrade(r.upgradeTarget(a.Upgrade.To))
	case a.RolloutRestart != nil:
		w := a.RolloutRestart
		ns := w.Namespace
		if ns == "" {
			ns = "default"
		}
		if err := kubeport.RolloutRestart(context.Background(), r.kubePort(), kubeport.Workload{Kind: w.Kind, Namespace: ns, Name: w.Name}); err != nil {
			return err
		}
		r.restarted(w.Kind, ns, w.Name)
		r.event("Normal", "RolloutRestarted", fmt.Sprintf("%s: kubectl rollout restart %s/%s -n %s", describe(a), strings.ToLower(w.Kind), w.Name, ns))
	case a.Drain != nil:
		return r.drain(a)
	case a.Wait != nil:
		// A wait, like every action, ends at the run's time limit: a wait
		// past it leaves the run stuck there, never "succeeded" after
		// simulating the whole wait.
		if a.Wait.For != nil {
			until := r.eng.Now().Add(a.Wait.For.Duration)
			if until.After(r.limit) {
				r.sleep(r.limit)
				r.event("Warning", "TimeLimit", fmt.Sprintf("%s: waiting %s would end past the time limit", describe(a), a.Wait.For.Duration))
				return errTimeLimit
			}
			r.sleep(until)
		}
	}
	return nil
}

// patch is kubectl patch through the Kubernetes port: the object as the
// twin stores it takes the patch (merge, strategic or JSON), as the API
// server applies one, and a changed workload is followed until it has
// rolled out. The applied manifest takes the same patch, decoded strictly,
// as the record the twin's add-on updates re-apply and the kinds the twin
// serves no read of start from.
func (r *run) patch(p *scenario.PatchAction) error {
	ns := p.Namespace
	if ns == "" && !manifest.ClusterScoped(p.Kind) {
		ns = "default"
	}
	key := objectKey(p.Kind, ns, p.Name)
	o, found := r.objects[key]
	if !found {
		return fmt.Errorf("%s %s was not applied", p.Kind, p.Name)
	}
	patched, err := p.Apply(o)
	if err != nil {
		return err
	}
	objs, err := manifest.Decode(fmt.Sprintf("patched %s %s", p.Kind, p.Name), patched)
	if err != nil {
		return err
	}
	if len(objs) != 1 || objs[0].Ignored || objs[0].Name() != o.Name() {
		return fmt.Errorf("the patch must leave %s one %s", o.Name(), p.Kind)
	}
	gvr, _ := meta.UnsafeGuessKindToResource(o.GVK)
	if _, err := r.kubePort().Patch(context.Background(), gvr, ns, p.Name, patchType(p.Type), p.Patch); err != nil {
		return fmt.Errorf("%s: %v", o.Name(), err)
	}
	r.objects[key] = objs[0]
	if rolloutKinds[p.Kind] {
		r.rolling[key] = scenario.WorkloadRef{Kind: p.Kind, Namespace: ns, Name: p.Name}
	}
	return nil
}

// patchType is a patch action's type as the API takes it.
func patchType(t string) types.PatchType {
	switch t {
	case "strategic":
		return types.StrategicMergePatchType
	case "json":
		return types.JSONPatchType
	}
	return types.MergePatchType
}

// drain is kubectl drain on one node or every node a selector matches, one
// after the other, as kubectl drain -l does.
func (r *run) drain(a scenario.Action) error {
	d := a.Drain
	ctx := context.Background()
	var nodes []string
	if d.Node != "" {
		if _, err := r.kubePort().GetNode(ctx, d.Node); apierrors.IsNotFound(err) {
			return fmt.Errorf("node %q not found", d.Node)
		} else if err != nil {
			return err
		}
		nodes = []string{d.Node}
	} else {
		sel, err := labels.Parse(d.Selector)
		if err != nil {
			return err
		}
		// kubectl drain -l lists the nodes and drains the matching ones
		// in the list's order, by name.
		all, err := r.kubePort().ListNodes(ctx)
		if err != nil {
			return err
		}
		for i := range all {
			if sel.Matches(labels.Set(all[i].Labels)) {
				nodes = append(nodes, all[i].Name)
			}
		}
		if len(nodes) == 0 {
			return fmt.Errorf("no node matches %q", d.Selector)
		}
	}
	opts := kubeport.DrainOptions{Force: d.Force, IgnoreDaemonSets: d.IgnoreDaemonSets, DeleteEmptyDirData: d.DeleteEmptyDirData, Timeout: d.Timeout.Get(0)}
	r.event("Normal", "Draining", fmt.Sprintf("%s: kubectl drain %s", describe(a), strings.Join(nodes, " ")))
	for _, node := range nodes {
		// The port's drain runs the twin until it reports, at most until
		// the run's time limit.
		port := twinport.New(r.kube, twinport.Options{Karpenter: r.karp, DrainLimit: max(r.limit.Sub(r.eng.Now()), time.Nanosecond)})
		refused, err := drainRefusals(port, node, opts)
		if err != nil {
			return err
		}
		err = port.Drain(ctx, node, opts)
		switch {
		case errors.Is(err, kubeport.ErrWaitTimeout):
			r.event("Warning", "TimeLimit", fmt.Sprintf("%s: node/%s: the drain did not finish within the time limit", describe(a), node))
			return errTimeLimit
		case err != nil && len(refused) > 0:
			// kubectl's filters refused pods of the node before anything
			// was evicted: say which, one after the other.
			msgs := make([]string, len(refused))
			for i, e := range refused {
				msgs[i] = e.Error()
			}
			return fmt.Errorf("node/%s: %s", node, strings.Join(msgs, "; "))
		case err != nil:
			return err
		}
	}
	return nil
}

// drainRefusals is what kubectl drain's filters (internal/drain) refuse of
// a node's pods, read through the port, as the drain will find them.
func drainRefusals(port kubeport.Port, node string, opts kubeport.DrainOptions) ([]error, error) {
	ctx := context.Background()
	pods, err := port.ListPods(ctx, kubeport.PodQuery{Node: node})
	if err != nil {
		return nil, err
	}
	daemonSetExists := func(namespace, name string) bool {
		sets, err := port.ListDaemonSets(ctx, namespace)
		if err != nil {
			return false
		}
		for _, ds := range sets {
			if ds.Name == name {
				return true
			}
		}
		return false
	}
	_, errs := drain.PodsForDeletion(pods, drain.Options{Force: opts.Force, IgnoreAllDaemonSets: opts.IgnoreDaemonSets, DeleteEmptyDirData: opts.DeleteEmptyDirData}, daemonSetExists, port.Now())
	return errs, nil
}
