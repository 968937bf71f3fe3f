package kube

import (
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/dump"

	"github.com/ladder-eks/ladder/internal/sim"
)

// workload is a controller that owns pods: a Deployment (through one
// ReplicaSet), a StatefulSet, a DaemonSet, or a bare pod.
type workload struct {
	c         *Cluster
	kind      string
	namespace string
	name      string
	uid       types.UID
	obj       metav1.Object
	template  corev1.PodTemplateSpec
	selector  labels.Selector
	replicas  int32
	pods      podSet
	ready     int // pods Ready and not terminating
	avail     availability
	trigger   *sim.Trigger

	// Deployment: the ReplicaSet that owns the pods.
	rs *appsv1.ReplicaSet
	// StatefulSet: OrderedReady creates ordinal i only after 0..i-1 are Ready.
	orderedReady bool
	claims       []corev1.PersistentVolumeClaim
	// DaemonSet: the template's tolerations plus the controller's own, and
	// the pod each node runs.
	daemonTolerations []corev1.Toleration
	daemonPods        map[string]*podState
	daemonNodes       map[string]bool // nodes the daemon should run on
	// idx is the workload's position in creation order; sig numbers its
	// distinct scheduling constraints (schedulingSignature).
	idx int
	sig int
	// req is what each of the workload's pods requests.
	req    Resources
	reqSet bool
}

func (w *workload) key() string { return w.kind + "/" + w.namespace + "/" + w.name }
func (w *workload) kick()       { w.trigger.Fire() }

func (w *workload) readyCount() int { return w.ready }

func (w *workload) activePods() []*podState {
	out := make([]*podState, 0, w.pods.len())
	for _, ps := range w.pods.list() {
		if !ps.deleting {
			out = append(out, ps)
		}
	}
	return out
}

func (c *Cluster) addWorkload(w *workload) {
	w.c = c
	w.pods = newPodSet()
	w.uid = c.newUID(w.kind)
	w.obj.SetUID(w.uid)
	w.obj.SetCreationTimestamp(c.now())
	w.trigger = c.eng.NewTrigger(func() { c.reconcileWorkload(w) })
	c.workloads[w.key()] = w
	w.idx = len(c.workloadOrder)
	w.sig = c.signature(&w.template.Spec)
	c.workloadOrder = append(c.workloadOrder, w)
	if c.tracking {
		w.avail.start(c.eng.Now(), 0)
	}
	w.kick()
}

func (c *Cluster) reconcileWorkload(w *workload) {
	switch w.kind {
	case "Deployment", "StatefulSet", "Pod":
		c.reconcileReplicas(w)
	case "DaemonSet":
		c.daemonSets.Fire() // pods lost on a node mark it dirty (podGone)
	}
	w.avail.setDesired(w.replicas)
	w.avail.observe(c.eng.Now(), w.readyCount())
}

func selectorFor(kind, namespace, name string, sel *metav1.LabelSelector, tmpl map[string]string) (labels.Selector, error) {
	if sel == nil {
		return nil, fmt.Errorf("%s %s/%s: spec.selector is required", kind, namespace, name)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: spec.selector: %v", kind, namespace, name, err)
	}
	if s.Empty() || !s.Matches(labels.Set(tmpl)) {
		return nil, fmt.Errorf("%s %s/%s: spec.selector does not match spec.template.metadata.labels (`selector` does not match template `labels`)", kind, namespace, name)
	}
	return s, nil
}

func replicasOr1(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func (c *Cluster) applyDeployment(d *appsv1.Deployment) error {
	if err := c.requireNamespace(d.Namespace); err != nil {
		return fmt.Errorf("Deployment %s/%s: %v", d.Namespace, d.Name, err)
	}
	sel, err := selectorFor("Deployment", d.Namespace, d.Name, d.Spec.Selector, d.Spec.Template.Labels)
	if err != nil {
		return err
	}
	if existing, ok := c.workloads["Deployment/"+d.Namespace+"/"+d.Name]; ok {
		if !apiequality.Semantic.DeepEqual(existing.template, d.Spec.Template) {
			return fmt.Errorf("Deployment %s/%s: changing the pod template (a rollout) is not modelled by the twin yet; change spec.replicas only", d.Namespace, d.Name)
		}
		existing.replicas = replicasOr1(d.Spec.Replicas)
		existing.kick()
		return nil
	}
	w := &workload{kind: "Deployment", namespace: d.Namespace, name: d.Name, obj: d, template: d.Spec.Template, selector: sel, replicas: replicasOr1(d.Spec.Replicas)}
	c.addWorkload(w)
	hash := podTemplateHash(&d.Spec.Template)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Name:            d.Name + "-" + hash,
		Namespace:       d.Namespace,
		UID:             c.newUID("ReplicaSet"),
		Labels:          mergeLabels(d.Spec.Template.Labels, map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}),
		OwnerReferences: []metav1.OwnerReference{controllerRef("apps/v1", "Deployment", d.Name, w.uid)},
	}}
	w.rs = rs
	return nil
}

func (c *Cluster) applyStatefulSet(s *appsv1.StatefulSet) error {
	if err := c.requireNamespace(s.Namespace); err != nil {
		return fmt.Errorf("StatefulSet %s/%s: %v", s.Namespace, s.Name, err)
	}
	sel, err := selectorFor("StatefulSet", s.Namespace, s.Name, s.Spec.Selector, s.Spec.Template.Labels)
	if err != nil {
		return err
	}
	if existing, ok := c.workloads["StatefulSet/"+s.Namespace+"/"+s.Name]; ok {
		if !apiequality.Semantic.DeepEqual(existing.template, s.Spec.Template) {
			return fmt.Errorf("StatefulSet %s/%s: changing the pod template (a rollout) is not modelled by the twin yet; change spec.replicas only", s.Namespace, s.Name)
		}
		existing.replicas = replicasOr1(s.Spec.Replicas)
		existing.kick()
		return nil
	}
	w := &workload{kind: "StatefulSet", namespace: s.Namespace, name: s.Name, obj: s, template: s.Spec.Template, selector: sel,
		replicas:     replicasOr1(s.Spec.Replicas),
		orderedReady: s.Spec.PodManagementPolicy != appsv1.ParallelPodManagement,
		claims:       s.Spec.VolumeClaimTemplates}
	c.addWorkload(w)
	return nil
}

func (c *Cluster) applyDaemonSet(d *appsv1.DaemonSet) error {
	if err := c.requireNamespace(d.Namespace); err != nil {
		return fmt.Errorf("DaemonSet %s/%s: %v", d.Namespace, d.Name, err)
	}
	sel, err := selectorFor("DaemonSet", d.Namespace, d.Name, d.Spec.Selector, d.Spec.Template.Labels)
	if err != nil {
		return err
	}
	if _, ok := c.workloads["DaemonSet/"+d.Namespace+"/"+d.Name]; ok {
		return fmt.Errorf("DaemonSet %s/%s: updating a DaemonSet is not modelled by the twin yet", d.Namespace, d.Name)
	}
	w := &workload{kind: "DaemonSet", namespace: d.Namespace, name: d.Name, obj: d, template: d.Spec.Template, selector: sel,
		daemonTolerations: daemonTolerations(d.Spec.Template.Spec.Tolerations), daemonPods: map[string]*podState{}, daemonNodes: map[string]bool{}}
	c.dsAllDirty = true
	c.dsGeneration++
	c.addWorkload(w)
	return nil
}

func (c *Cluster) applyBarePod(p *corev1.Pod) error {
	if err := c.requireNamespace(p.Namespace); err != nil {
		return fmt.Errorf("Pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	if _, ok := c.pods[key(p.Namespace, p.Name)]; ok {
		return fmt.Errorf("Pod %s/%s: pods are immutable; delete it first", p.Namespace, p.Name)
	}
	w := &workload{kind: "Pod", namespace: p.Namespace, name: p.Name, obj: p, template: corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}, replicas: 1}
	c.addWorkload(w)
	c.createPod(p, w)
	return nil
}

// Scale sets spec.replicas of a Deployment or StatefulSet (kubectl scale).
func (c *Cluster) Scale(kind, namespace, name string, replicas int32) error {
	w, ok := c.workloads[kind+"/"+namespace+"/"+name]
	if !ok || (kind != "Deployment" && kind != "StatefulSet") {
		return fmt.Errorf("%s %s/%s not found (scale works on Deployments and StatefulSets)", kind, namespace, name)
	}
	if replicas < 0 {
		return fmt.Errorf("%s %s/%s: replicas must be ≥ 0, got %d", kind, namespace, name, replicas)
	}
	w.replicas = replicas
	switch o := w.obj.(type) {
	case *appsv1.Deployment:
		o.Spec.Replicas = &replicas
	case *appsv1.StatefulSet:
		o.Spec.Replicas = &replicas
	}
	w.kick()
	return nil
}

// reconcileReplicas is the ReplicaSet and StatefulSet controllers: keep
// exactly spec.replicas active (non-terminating) pods.
func (c *Cluster) reconcileReplicas(w *workload) {
	if w.kind == "Pod" {
		return // a bare pod is never recreated
	}
	if w.kind == "StatefulSet" {
		c.reconcileStatefulSet(w)
		return
	}
	active := w.activePods()
	switch n := int(w.replicas) - len(active); {
	case n > 0:
		for i := 0; i < n; i++ {
			c.createPod(c.newReplicaSetPod(w), w)
		}
	case n < 0:
		// ReplicaSet scale-down order (upstream ActivePodsWithRanks, simplified):
		// unscheduled before scheduled, not-ready before ready, newest first.
		sort.SliceStable(active, func(i, j int) bool {
			a, b := active[i], active[j]
			if (a.node == nil) != (b.node == nil) {
				return a.node == nil
			}
			if a.ready != b.ready {
				return !a.ready
			}
			return a.seq > b.seq
		})
		for _, ps := range active[:-n] {
			c.deletePod(ps, *ps.pod.Spec.TerminationGracePeriodSeconds)
		}
	}
}

func (c *Cluster) reconcileStatefulSet(w *workload) {
	byOrdinal := map[int]*podState{}
	for _, ps := range w.pods.m {
		var ord int
		if _, err := fmt.Sscanf(ps.pod.Name[len(w.name)+1:], "%d", &ord); err == nil {
			byOrdinal[ord] = ps
		}
	}
	// Scale down: delete the highest ordinal first, one at a time when ordered.
	for ord := len(byOrdinal) + int(w.replicas) + 16; ord >= int(w.replicas); ord-- {
		if ps, ok := byOrdinal[ord]; ok && !ps.deleting {
			c.deletePod(ps, *ps.pod.Spec.TerminationGracePeriodSeconds)
			if w.orderedReady {
				return
			}
		}
	}
	for ord := 0; ord < int(w.replicas); ord++ {
		ps, ok := byOrdinal[ord]
		if ok {
			if w.orderedReady && (ps.deleting || !ps.ready) {
				return // OrderedReady waits for ordinal ord before creating the next.
			}
			continue
		}
		c.createPod(c.newStatefulSetPod(w, ord), w)
		if w.orderedReady {
			return
		}
	}
}

func (c *Cluster) newReplicaSetPod(w *workload) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: *w.template.ObjectMeta.DeepCopy(), Spec: *w.template.Spec.DeepCopy()}
	p.Namespace = w.namespace
	p.Labels = mergeLabels(p.Labels, map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: w.rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]})
	p.OwnerReferences = []metav1.OwnerReference{controllerRef("apps/v1", "ReplicaSet", w.rs.Name, w.rs.UID)}
	for {
		p.Name = w.rs.Name + "-" + c.randomSuffix(5)
		if _, taken := c.pods[key(p.Namespace, p.Name)]; !taken {
			return p
		}
	}
}

func (c *Cluster) newStatefulSetPod(w *workload, ord int) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: *w.template.ObjectMeta.DeepCopy(), Spec: *w.template.Spec.DeepCopy()}
	p.Namespace = w.namespace
	p.Name = fmt.Sprintf("%s-%d", w.name, ord)
	p.Labels = mergeLabels(p.Labels, map[string]string{
		appsv1.StatefulSetPodNameLabel: p.Name,
		appsv1.PodIndexLabel:           fmt.Sprint(ord),
	})
	p.OwnerReferences = []metav1.OwnerReference{controllerRef("apps/v1", "StatefulSet", w.name, w.uid)}
	for _, tmpl := range w.claims {
		claim := fmt.Sprintf("%s-%s-%d", tmpl.Name, w.name, ord)
		if _, ok := c.pvcs[key(w.namespace, claim)]; !ok {
			pvc := tmpl.DeepCopy()
			pvc.Name, pvc.Namespace = claim, w.namespace
			c.applyPVC(pvc)
		}
		replaced := false
		for i := range p.Spec.Volumes {
			if p.Spec.Volumes[i].Name == tmpl.Name {
				p.Spec.Volumes[i].VolumeSource = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}
				replaced = true
			}
		}
		if !replaced {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: tmpl.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
		}
	}
	return p
}

// reconcileDaemonSets is the DaemonSet controller: one pod on every node the
// pod should run on (node selector/affinity match, NoSchedule and NoExecute
// taints tolerated, with the tolerations the controller adds itself). It
// looks again only at nodes that changed since its last pass.
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
	for _, w := range c.workloadOrder {
		if w.kind != "DaemonSet" {
			continue
		}
		for _, name := range names {
			if ps := w.daemonPods[name]; ps != nil {
				if _, alive := c.pods[ps.key]; !alive || ps.deleting {
					delete(w.daemonPods, name)
				}
			}
			ns, ok := c.nodes[name]
			run := ok && c.daemonShouldRun(w, ns.node)
			if run {
				w.daemonNodes[name] = true
			} else {
				delete(w.daemonNodes, name)
			}
			if run && w.daemonPods[name] == nil {
				w.daemonPods[name] = c.createPod(c.newDaemonSetPod(w, name), w)
			}
		}
		// desired is the nodes the pod should run on, plus those where it
		// still runs though it should not any more (a new NoSchedule taint).
		desired := int32(len(w.daemonNodes))
		for name := range w.daemonPods {
			if !w.daemonNodes[name] {
				desired++
			}
		}
		w.replicas = desired
		w.avail.setDesired(desired)
		w.avail.observe(c.eng.Now(), w.readyCount())
	}
}

func (c *Cluster) daemonShouldRun(w *workload, node *corev1.Node) bool {
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: w.template.Spec}).Match(node); !ok {
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

func (c *Cluster) newDaemonSetPod(w *workload, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: *w.template.ObjectMeta.DeepCopy(), Spec: *w.template.Spec.DeepCopy()}
	p.Namespace = w.namespace
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
		if _, taken := c.pods[key(p.Namespace, p.Name)]; !taken {
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

// DaemonSetExists reports whether a DaemonSet exists, for drain's filter.
func (c *Cluster) DaemonSetExists(namespace, name string) bool {
	_, ok := c.workloads["DaemonSet/"+namespace+"/"+name]
	return ok
}

// DaemonSetGeneration changes whenever a DaemonSet is added, so callers
// can cache DaemonSetOverhead.
func (c *Cluster) DaemonSetGeneration() uint64 { return c.dsGeneration }

// DaemonSetOverhead is what the DaemonSets that would run on a node with
// these labels and taints request — what Karpenter adds to a new node's
// bill before packing pods onto it.
func (c *Cluster) DaemonSetOverhead(node *corev1.Node) Resources {
	var r Resources
	for _, w := range c.workloadOrder {
		if w.kind == "DaemonSet" && c.daemonShouldRun(w, node) {
			r = r.Add(PodRequests(&corev1.Pod{Spec: w.template.Spec}))
		}
	}
	return r
}

// podTemplateHash is the pod-template-hash label value: an FNV-32a hash of
// the template, encoded as the deployment controller encodes it.
func podTemplateHash(t *corev1.PodTemplateSpec) string {
	h := fnv.New32a()
	h.Write([]byte(dump.ForHash(t)))
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// randomSuffix draws n characters from the alphabet Kubernetes uses for
// generated names, from the run's seeded source.
func (c *Cluster) randomSuffix(n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[c.eng.Rand().IntN(len(alphabet))]
	}
	return string(b)
}

func controllerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &t, BlockOwnerDeletion: &t}
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// availability records how a workload's ready count evolved.
//
// minReady is the fewest Ready pods seen since the workload last reached
// its current desired count: time spent scaling (a new workload, kubectl
// scale, a DaemonSet on a new node) is not counted, disruptions are.
type availability struct {
	tracking   bool
	desired    int32
	reached    bool // ready reached desired since the last scale-up
	ready      int
	minReady   int
	zero       bool
	zeroSince  time.Time
	zeroTotal  time.Duration
	violations int
}

func (a *availability) start(now time.Time, ready int) {
	a.tracking = true
	a.ready = ready
	a.reached = false
	a.minReady = -1
	a.zero = false
	a.zeroTotal = 0
	a.observe(now, ready)
}

// setDesired records the desired count; a new one restarts the wait for the
// workload to reach it, and minReady with it.
func (a *availability) setDesired(d int32) {
	if d != a.desired {
		a.reached = false
		a.minReady = -1
	}
	a.desired = d
}

func (a *availability) observe(now time.Time, ready int) {
	a.ready = ready
	if !a.tracking {
		return
	}
	if !a.reached && ready >= int(a.desired) {
		a.reached = true
	}
	if a.reached && (a.minReady < 0 || ready < a.minReady) {
		a.minReady = ready
	}
	isZero := ready == 0 && a.desired > 0
	switch {
	case isZero && !a.zero:
		a.zero, a.zeroSince = true, now
	case !isZero && a.zero:
		a.zero = false
		a.zeroTotal += now.Sub(a.zeroSince)
	}
}

// minReadyOr is minReady, or ready when the workload never reached its
// desired count.
func (a *availability) minReadyOr(ready int) int {
	if a.minReady < 0 {
		return ready
	}
	return a.minReady
}

func (a *availability) zeroUntil(now time.Time) time.Duration {
	if a.zero {
		return a.zeroTotal + now.Sub(a.zeroSince)
	}
	return a.zeroTotal
}

// WorkloadStatus is a workload's availability over a rehearsal.
type WorkloadStatus struct {
	Kind, Namespace, Name string
	Desired               int32
	Ready                 int
	MinReady              int
	ZeroReady             time.Duration
	PDBViolations         int
}

// Workloads reports every workload's availability, in creation order.
func (c *Cluster) Workloads() []WorkloadStatus {
	now := c.eng.Now()
	out := make([]WorkloadStatus, 0, len(c.workloadOrder))
	for _, w := range c.workloadOrder {
		out = append(out, WorkloadStatus{
			Kind: w.kind, Namespace: w.namespace, Name: w.name,
			Desired: w.replicas, Ready: w.readyCount(), MinReady: w.avail.minReadyOr(w.readyCount()),
			ZeroReady: w.avail.zeroUntil(now), PDBViolations: w.avail.violations,
		})
	}
	return out
}

// signature numbers the distinct combinations of the pod fields the
// scheduler's node-only filters read: tolerations, node selector and
// required node affinity.
func (c *Cluster) signature(spec *corev1.PodSpec) int {
	var required *corev1.NodeSelector
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		required = spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	key := dump.ForHash(struct {
		T []corev1.Toleration
		S map[string]string
		A *corev1.NodeSelector
	}{spec.Tolerations, spec.NodeSelector, required})
	if n, ok := c.signatures[key]; ok {
		return n
	}
	n := len(c.signatures)
	c.signatures[key] = n
	return n
}
