package liveview

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/journal"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// syncTimeout bounds the first lists of a live view's watches (a
// variable for the tests).
var syncTimeout = time.Minute

// JournalEvery is how often a live view rereads the upgrade's journal.
const JournalEvery = 2 * time.Second

// Journal reads a running upgrade's journal: nil, nil when there is none.
type Journal func(ctx context.Context) (*journal.Record, error)

// ClusterJournal reads the journal ConfigMap `ladder upgrade` keeps
// (kube-system/ladder-upgrade).
func ClusterJournal(cs kubernetes.Interface) Journal {
	return func(ctx context.Context) (*journal.Record, error) { return journal.ReadCluster(ctx, cs) }
}

// FileJournal reads the journal of `ladder upgrade --journal FILE`.
func FileJournal(path string) Journal {
	return func(context.Context) (*journal.Record, error) { return journal.ReadFile(path) }
}

// Watch fills the hub from watches on the cluster's nodes, pods and
// PodDisruptionBudgets (client-go informers: a list, then a watch each),
// and from the journal every JournalEvery, until ctx ends. It returns once
// the informers' first lists are in the hub, or with the error that kept
// them from syncing.
func Watch(ctx context.Context, cs kubernetes.Interface, hub *Hub, j Journal) error {
	factory := informers.NewSharedInformerFactory(cs, 0)
	nodes := factory.Core().V1().Nodes().Informer()
	pods := factory.Core().V1().Pods().Informer()
	pdbs := factory.Policy().V1().PodDisruptionBudgets().Informer()
	regs := []cache.ResourceEventHandlerRegistration{}
	regs = append(regs, handle(nodes, hub, func(s *State, obj any, gone bool) {
		if n, ok := obj.(*corev1.Node); ok {
			if gone {
				delete(s.Nodes, n.Name)
			} else {
				s.Nodes[n.Name] = NodeOf(n)
			}
		}
	}))
	regs = append(regs, handle(pods, hub, func(s *State, obj any, gone bool) {
		if p, ok := obj.(*corev1.Pod); ok {
			key := p.Namespace + "/" + p.Name
			if gone {
				delete(s.Pods, key)
			} else {
				s.Pods[key] = PodOf(p)
			}
		}
	}))
	regs = append(regs, handle(pdbs, hub, func(s *State, obj any, gone bool) {
		if p, ok := obj.(*policyv1.PodDisruptionBudget); ok {
			key := p.Namespace + "/" + p.Name
			if gone {
				delete(s.PDBs, key)
			} else {
				s.PDBs[key] = PDBOf(p)
			}
		}
	}))
	// A list the user may not make fails at once, not after syncTimeout.
	timeout, cancelTimeout := context.WithTimeoutCause(ctx, syncTimeout, fmt.Errorf("the lists did not finish within %s", syncTimeout))
	defer cancelTimeout()
	syncCtx, refuse := context.WithCancelCause(timeout)
	defer refuse(nil)
	var lastMu sync.Mutex
	var last error // the last list or watch error, for the message if the lists never finish
	for _, inf := range []cache.SharedIndexInformer{nodes, pods, pdbs} {
		_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
				refuse(err)
			}
			lastMu.Lock()
			last = err
			lastMu.Unlock()
			hub.Update(func(s *State) { s.Error = fmt.Sprintf("watch: %v", err) })
		})
	}
	factory.Start(ctx.Done())
	synced := make([]cache.InformerSynced, len(regs))
	for i, r := range regs {
		synced[i] = r.HasSynced
	}
	if !cache.WaitForCacheSync(syncCtx.Done(), synced...) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		why := context.Cause(syncCtx).Error()
		lastMu.Lock()
		if last != nil && !apierrors.IsForbidden(last) && !apierrors.IsUnauthorized(last) {
			why += "; the last error: " + last.Error()
		}
		lastMu.Unlock()
		return fmt.Errorf("%s (check the kubeconfig, and that its user may list and watch nodes, pods and poddisruptionbudgets: deploy/ladder-view-rbac.yaml)", why)
	}
	if j != nil {
		readJournal(ctx, hub, j)
		go tick(ctx, JournalEvery, func(time.Time) { readJournal(ctx, hub, j) })
	}
	return nil
}

// handle routes an informer's adds, updates and deletes into the hub.
// The registration's HasSynced tells when the handler has seen the first
// list, not only the informer's store.
func handle(inf cache.SharedIndexInformer, hub *Hub, apply func(s *State, obj any, gone bool)) cache.ResourceEventHandlerRegistration {
	put := func(obj any) { hub.Update(func(s *State) { apply(s, obj, false) }) }
	reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    put,
		UpdateFunc: func(_, obj any) { put(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			hub.Update(func(s *State) { apply(s, obj, true) })
		},
	})
	return reg
}

// readJournal puts the journal's steps into the hub.
func readJournal(ctx context.Context, hub *Hub, j Journal) {
	rec, err := j(ctx)
	hub.Update(func(s *State) {
		if err != nil {
			s.Error = fmt.Sprintf("reading the upgrade's journal: %v", err)
			return
		}
		s.Error = ""
		s.Steps = JournalSteps(rec, time.Now())
	})
}

// JournalSteps are a journal's steps in its order; none without a journal.
func JournalSteps(rec *journal.Record, now time.Time) []Step {
	if rec == nil {
		return nil
	}
	var out []Step
	for _, hop := range rec.Status("", now).Hops {
		for _, st := range hop.Steps {
			s := Step{Hop: hop.To, Name: st.Step, State: st.State, Message: st.Message}
			if b := st.BlockedBy; b != nil {
				s.BlockedBy = fmt.Sprintf("pod %s (PDB %s) on node %s", b.Pod, b.PDB, b.Node)
			}
			out = append(out, s)
		}
	}
	return out
}

// NodeOf is what the page shows of a node.
func NodeOf(n *corev1.Node) Node {
	group, kind := NodeGroup(n.Labels)
	v := Node{
		Name: n.Name, Group: group, Kind: kind,
		InstanceType: n.Labels[corev1.LabelInstanceTypeStable],
		Version:      n.Status.NodeInfo.KubeletVersion,
		Cordoned:     n.Spec.Unschedulable,
	}
	for _, t := range n.Spec.Taints {
		if t.Key == karpv1.DisruptedTaintKey {
			v.Cordoned = true
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			v.Ready = c.Status == corev1.ConditionTrue
		}
	}
	return v
}

// NodeGroup is the node group a node's labels name, and its type as
// report.Group* spells it: a Karpenter NodePool, a Fargate profile, an EKS
// managed node group, an eksctl self-managed group; "", "" for none.
func NodeGroup(labels map[string]string) (name, kind string) {
	switch {
	case labels[karpv1.NodePoolLabelKey] != "":
		return labels[karpv1.NodePoolLabelKey], report.GroupKarpenter
	case labels[fargate.LabelComputeType] == fargate.ComputeTypeFargate:
		return labels[fargate.LabelFargateProfile], report.GroupFargate
	case labels[mng.LabelNodegroup] != "":
		return labels[mng.LabelNodegroup], report.GroupManaged
	case labels[asg.LabelNodegroupName] != "":
		return labels[asg.LabelNodegroupName], report.GroupSelfManaged
	}
	return "", ""
}

// PodOf is what the page shows of a pod.
func PodOf(p *corev1.Pod) Pod {
	v := Pod{Key: p.Namespace + "/" + p.Name, Node: p.Spec.NodeName, Terminating: p.DeletionTimestamp != nil}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			v.Ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.Kind == "DaemonSet" {
			v.DaemonSet = true
		}
	}
	return v
}

// PDBOf is a PodDisruptionBudget's status.
func PDBOf(p *policyv1.PodDisruptionBudget) PDB {
	return PDB{Key: p.Namespace + "/" + p.Name, Healthy: p.Status.CurrentHealthy, Floor: p.Status.DesiredHealthy,
		Allowed: p.Status.DisruptionsAllowed, Expected: p.Status.ExpectedPods}
}
