package kube

import (
	"iter"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// The DaemonSet controller (k8s.io/kubernetes pkg/controller/daemon): one
// pod on every node the pod should run on (node selector/affinity match,
// NoSchedule and NoExecute taints tolerated, with the tolerations the
// controller adds itself), and, when the template changes, a rolling
// update node by node (update.go rollingUpdate).

// reconcileDaemonSets is the controller's pass. It looks again only at
// nodes that changed since its last pass; a DaemonSet whose rollout is
// under way also gets its rolling update, over every node.
func (c *Cluster) reconcileDaemonSets() {
	dirty := c.dsDirty
	all := c.dsAllDirty
	c.dsDirty, c.dsAllDirty = map[string]bool{}, false
	var names []string
	if all {
		names = c.nodeNames
	} else {
		for n := range dirty {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	for _, w := range c.daemonSetOrder {
		surge := daemonSetAllowsSurge(w)
		for _, name := range names {
			pods := c.daemonPodsOn(w, name)
			ns, ok := c.nodes[name]
			run := ok && c.daemonShouldRunOn(w, ns)
			if run {
				w.daemonNodes[name] = true
				c.manageDaemonNode(w, name, pods, surge)
			} else {
				delete(w.daemonNodes, name)
				w.daemonStrays[name] = true
			}
		}
		if w.updating() {
			if surge {
				// The manage loop's rule for a node running two pods, which
				// upstream applies on every sync, on every such node.
				for _, ns := range c.nodeList {
					if name := ns.node.Name; len(w.daemonPods[name]) > 1 && w.daemonNodes[name] {
						c.manageDaemonNode(w, name, c.daemonPodsOn(w, name), true)
					}
				}
			}
			if w.obj.(*appsv1.DaemonSet).Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
				c.rollingUpdateDaemonSet(w)
			}
		}
		// desired is the nodes the pod should run on, plus those where it
		// still runs though it should not any more (a new NoSchedule taint).
		desired := int32(len(w.daemonNodes))
		for name := range w.daemonStrays {
			pods, has := w.daemonPods[name]
			switch {
			case !has || w.daemonNodes[name]:
				delete(w.daemonStrays, name)
			case anyRunning(pods):
				desired++
			}
		}
		w.replicas = desired
		w.observed = w.generation
		w.avail.setDesired(desired)
		c.observeReady(w)
	}
}

// daemonPodsOn returns the DaemonSet's pods on a node, terminating ones
// included, oldest first, after forgetting those that left the store.
func (c *Cluster) daemonPodsOn(w *workload, node string) []*podState {
	pods, ok := w.daemonPods[node]
	if !ok {
		return nil
	}
	kept := pods[:0]
	for _, ps := range pods {
		if !ps.gone {
			kept = append(kept, ps)
		}
	}
	if len(kept) == 0 {
		delete(w.daemonPods, node)
		return nil
	}
	w.daemonPods[node] = kept
	return kept
}

func anyRunning(pods []*podState) bool {
	for _, ps := range pods {
		if !ps.deleting {
			return true
		}
	}
	return false
}

// manageDaemonNode is daemon_controller.go podsShouldBeOnNode for a node
// the daemon should run on. A node without any pod of the DaemonSet gets
// one; a terminating pod still counts as there, so without surge the
// replacement waits until it is gone. Without surge, extra running pods
// beyond the oldest are deleted. With surge, a node whose pods are all
// terminating gets a new one at once, and of two running pods the old one
// goes once the new one is available, or at once when it is not Ready.
func (c *Cluster) manageDaemonNode(w *workload, node string, pods []*podState, surge bool) {
	if len(pods) == 0 {
		c.createDaemonPod(w, node)
		return
	}
	var running []*podState
	for _, ps := range pods {
		if !ps.deleting {
			running = append(running, ps)
		}
	}
	var del []*podState
	switch {
	case !surge && len(running) > 1:
		del = running[1:]
	case surge && len(running) == 0:
		c.createDaemonPod(w, node)
	case surge && len(running) > 1:
		var oldestNew, oldestOld *podState
		for _, ps := range running {
			if ps.rev == w.cur && oldestNew == nil {
				oldestNew = ps
			} else if ps.rev != w.cur && oldestOld == nil {
				oldestOld = ps
			} else {
				del = append(del, ps)
			}
		}
		if oldestNew != nil && oldestOld != nil && (!oldestOld.ready || oldestNew.available) {
			del = append(del, oldestOld)
		}
	}
	for _, ps := range del {
		c.controllerDelete(w, ps)
	}
}

func (c *Cluster) createDaemonPod(w *workload, node string) {
	ps, err := c.createPod(c.newDaemonSetPod(w, node), w, w.cur)
	if err != nil {
		c.failedCreate(w, err)
		return
	}
	w.daemonPods[node] = append(w.daemonPods[node], ps)
}

// rollingUpdateDaemonSet is update.go rollingUpdate, over nodes in name
// order where upstream walks a map. Without maxSurge, old pods are deleted
// while fewer than maxUnavailable nodes lack an available pod (a node whose
// old pod is not available is replaced regardless), and manageDaemonNode
// creates the new pod once the old one is gone. With maxSurge, up to
// maxSurge nodes get a new pod beside their available old one (a node whose
// old pod is not available gets one regardless), and the old pod goes when
// the new one is available.
func (c *Cluster) rollingUpdateDaemonSet(w *workload) {
	desired := len(w.daemonNodes)
	maxSurge, maxUnavailable := daemonSetSurgeUnavailable(w, desired)
	var del []*podState
	if maxSurge == 0 {
		numUnavailable := 0
		var replace, candidates []*podState
		for _, pods := range c.rolloutNodes(w) {
			newPod, oldPod, ok := w.updatedPodsOn(pods)
			switch {
			case !ok:
				numUnavailable++ // excess pods: left to manage
			case (oldPod == nil) == (newPod == nil):
				numUnavailable++ // nothing, or both: the manage loop acts
			case newPod != nil:
				if !newPod.available {
					numUnavailable++
				}
			case !oldPod.available:
				replace = append(replace, oldPod)
			case numUnavailable < maxUnavailable:
				candidates = append(candidates, oldPod)
			}
		}
		remaining := min(max(maxUnavailable-numUnavailable, 0), len(candidates))
		del = append(replace, candidates[:remaining]...)
	} else {
		numSurge, numAvailable := 0, 0
		var allowedNew, candidateNew []string
		var shouldNotRun []*podState
		for name, pods := range c.rolloutNodes(w) {
			newPod, oldPod, ok := w.updatedPodsOn(pods)
			if !ok {
				numSurge++
				continue
			}
			if (oldPod != nil && oldPod.available) || (oldPod == nil && newPod != nil && newPod.available) {
				numAvailable++
			}
			run := w.daemonNodes[name]
			switch {
			case oldPod == nil:
			case newPod == nil && !oldPod.available:
				if !run {
					del = append(del, oldPod)
					continue
				}
				allowedNew = append(allowedNew, name)
			case newPod == nil:
				if !run {
					shouldNotRun = append(shouldNotRun, oldPod)
					continue
				}
				if numSurge < maxSurge {
					candidateNew = append(candidateNew, name)
				}
			case !newPod.available:
				numSurge++
			default:
				del = append(del, oldPod)
			}
		}
		if n := min(numAvailable-desired, len(shouldNotRun)); n > 0 {
			del = append(del, shouldNotRun[:n]...)
		}
		remaining := min(max(maxSurge-numSurge, 0), len(candidateNew))
		for _, name := range append(allowedNew, candidateNew[:remaining]...) {
			c.createDaemonPod(w, name)
		}
	}
	for _, ps := range del {
		c.controllerDelete(w, ps)
	}
}

// rolloutNodes is the node → daemon pods map update.go rollingUpdate walks,
// in node-name order: every node that runs a pod of w or should run one.
func (c *Cluster) rolloutNodes(w *workload) iter.Seq2[string, []*podState] {
	return func(yield func(string, []*podState) bool) {
		for _, ns := range c.nodeList {
			name := ns.node.Name
			pods, has := w.daemonPods[name]
			if (has || w.daemonNodes[name]) && !yield(name, pods) {
				return
			}
		}
	}
}

// updatedPodsOn is update.go findUpdatedPodsOnNode: a node's running pod of
// the current revision and its running old one; ok is false when it has
// two of either.
func (w *workload) updatedPodsOn(pods []*podState) (newPod, oldPod *podState, ok bool) {
	for _, ps := range pods {
		if ps.deleting {
			continue
		}
		if ps.rev == w.cur {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = ps
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = ps
		}
	}
	return newPod, oldPod, true
}

// daemonSetSurgeUnavailable is update.go updatedDesiredNodeCounts with
// util.SurgeCount and util.UnavailableCount: percentages of the nodes that
// should run the daemon, rounded up; both 0 means maxUnavailable 1.
func daemonSetSurgeUnavailable(w *workload, desired int) (maxSurge, maxUnavailable int) {
	s := w.obj.(*appsv1.DaemonSet).Spec.UpdateStrategy
	if s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil {
		return 0, 0
	}
	if s.RollingUpdate.MaxUnavailable != nil {
		maxUnavailable, _ = intstr.GetScaledValueFromIntOrPercent(s.RollingUpdate.MaxUnavailable, desired, true)
	}
	if s.RollingUpdate.MaxSurge != nil {
		maxSurge, _ = intstr.GetScaledValueFromIntOrPercent(s.RollingUpdate.MaxSurge, desired, true)
	}
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable
}

// daemonSetAllowsSurge is daemon util.AllowsSurge.
func daemonSetAllowsSurge(w *workload) bool {
	surge, _ := daemonSetSurgeUnavailable(w, 1)
	return surge > 0
}

// daemonShouldRunOn is daemonShouldRun for a node of the cluster, kept on
// the node per DaemonSet and template until either changes: the controller
// asks for every DaemonSet whenever a node's pods change.
func (c *Cluster) daemonShouldRunOn(w *workload, ns *nodeState) bool {
	if w.dsIdx >= len(ns.daemonRun) {
		ns.daemonRun = append(ns.daemonRun, make([]int64, w.dsIdx+1-len(ns.daemonRun))...)
	}
	if v := ns.daemonRun[w.dsIdx]; v>>1 == w.templateGeneration {
		return v&1 == 1
	}
	run := c.daemonShouldRun(w, ns.node)
	v := w.templateGeneration << 1
	if run {
		v |= 1
	}
	ns.daemonRun[w.dsIdx] = v
	return run
}

func (c *Cluster) daemonShouldRun(w *workload, node *corev1.Node) bool {
	if w.daemonAffinity == nil {
		a := nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: w.template.Spec})
		w.daemonAffinity = &a
	}
	if ok, _ := w.daemonAffinity.Match(node); !ok {
		return false
	}
	tolerations := w.daemonTolerations
	if tolerations == nil {
		tolerations = daemonTolerations(w.template.Spec.Tolerations)
	}
	_, untolerated := untoleratedTaint(node.Spec.Taints, tolerations)
	return !untolerated
}

// daemonTolerations adds the tolerations the DaemonSet controller adds to
// every daemon pod (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations).
func daemonTolerations(base []corev1.Toleration) []corev1.Toleration {
	return append(append([]corev1.Toleration(nil), base...), []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}...)
}

// daemonSetTemplateGenerationKey is the label extensions/v1beta1
// DaemonSetTemplateGenerationKey.
const daemonSetTemplateGenerationKey = "pod-template-generation"

// newDaemonSetPod makes a pod of the current template for a node, labelled
// with controller-revision-hash and pod-template-generation as
// util.CreatePodTemplate does.
func (c *Cluster) newDaemonSetPod(w *workload, node string) *corev1.Pod {
	rev := w.cur
	p := podFromTemplate(&rev.template)
	p.Namespace = w.namespace
	p.Labels = withLabel(p.Labels, appsv1.ControllerRevisionHashLabelKey, rev.hash)
	p.Labels[daemonSetTemplateGenerationKey] = w.templateGenerationLabel()
	p.OwnerReferences = []metav1.OwnerReference{controllerRef("apps/v1", "DaemonSet", w.name, w.uid)}
	p.Spec.Tolerations = daemonTolerations(p.Spec.Tolerations)
	// The controller pins the pod to its node with a matchFields affinity the
	// scheduler honours (since Kubernetes 1.12).
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
		}}}},
	}}
	for {
		p.Name = w.name + "-" + c.randomSuffix(5)
		if _, taken := c.pods[string(c.podKey(p.Namespace, p.Name))]; !taken {
			return p
		}
	}
}

func daemonPodNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range t.MatchFields {
				if f.Key == metav1.ObjectNameField && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

// daemonSetStatus is what daemon_controller.go updateDaemonSetStatus
// writes: of the nodes that should run the daemon, how many have one, and
// whether its oldest pod there is of the current template and available.
type daemonSetStatus struct {
	desired, updated, available int32
}

func (c *Cluster) daemonSetStatus(w *workload) daemonSetStatus {
	var st daemonSetStatus
	for _, ns := range c.nodeList {
		if !w.daemonNodes[ns.node.Name] {
			continue
		}
		st.desired++
		for _, ps := range w.daemonPods[ns.node.Name] {
			if ps.gone {
				continue // gone; the next pass forgets it
			}
			if ps.available {
				st.available++
			}
			if ps.rev == w.cur {
				st.updated++
			}
			break // the oldest pod speaks for the node
		}
	}
	return st
}
