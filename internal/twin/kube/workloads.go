package kube

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/dump"

	workloadrules "github.com/ladder-eks/ladder/internal/rules/workload"
	"github.com/ladder-eks/ladder/internal/sim"
)

// workload is a controller that owns pods: a Deployment (through its
// ReplicaSets), a StatefulSet, a DaemonSet, or a bare pod.
type workload struct {
	c         *Cluster
	kind      string
	namespace string
	name      string
	uid       types.UID
	// obj is the applied object with the API server's defaults; the twin
	// keeps its spec.replicas, spec.template and metadata.generation current.
	obj      metav1.Object
	template corev1.PodTemplateSpec // spec.template
	selector labels.Selector
	replicas int32
	minReady int32 // spec.minReadySeconds
	pods     podSet
	ready    int // pods Ready and not terminating
	avail    availability
	trigger  *sim.Trigger

	// Rollouts (rollout.go): the revisions of the template, oldest first —
	// a Deployment's ReplicaSets, a StatefulSet's or DaemonSet's
	// ControllerRevisions — and cur, the one of spec.template (nil until the
	// deployment controller creates a Deployment's new ReplicaSet).
	revs   []*revision
	cur    *revision
	revSeq int
	// generation and observed are metadata.generation and
	// status.observedGeneration; templateGeneration counts template
	// changes (a DaemonSet pod's pod-template-generation label).
	generation, observed int64
	templateGeneration   int64
	generationLabel      string // templateGeneration, formatted

	// Deployment: the Progressing condition (deployment.go).
	progress progress
	// StatefulSet: OrderedReady creates ordinal i only after 0..i-1 are
	// Ready; current is status.currentRevision.
	orderedReady bool
	// refused: its last sync could not create a pod it wanted
	// (failedcreate.go).
	refused bool
	claims  []corev1.PersistentVolumeClaim
	current *revision
	// DaemonSet: the template's tolerations plus the controller's own, the
	// pods on each node (terminating ones included, oldest first), and the
	// nodes the daemon should run on; daemonStrays holds the nodes that
	// left daemonNodes, which may still run a pod (counted as desired).
	daemonTolerations []corev1.Toleration
	daemonPods        map[string][]*podState
	daemonNodes       map[string]bool
	daemonStrays      map[string]bool
	daemonAffinity    *nodeaffinity.RequiredNodeAffinity // of template, built on first use
	// idx is the workload's position in creation order; dsIdx a
	// DaemonSet's among the DaemonSets.
	idx, dsIdx int
	// lastFailedCreate is the last refusal of one of its pods (failedCreate).
	lastFailedCreate string
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
	w.generation, w.templateGeneration = 1, 1
	w.obj.SetGeneration(1)
	w.trigger = c.eng.NewTrigger(func() { c.reconcileWorkload(w) })
	c.workloads[w.key()] = w
	w.idx = len(c.workloadOrder)
	c.workloadOrder = append(c.workloadOrder, w)
	if w.kind == "DaemonSet" {
		w.dsIdx = len(c.daemonSetOrder)
		c.daemonSetOrder = append(c.daemonSetOrder, w)
	}
	if c.tracking {
		w.avail.start(c.eng.Now(), 0)
	}
	w.kick()
}

func (c *Cluster) reconcileWorkload(w *workload) {
	c.setRefused(w, false) // this sync sets it again if a create fails
	switch w.kind {
	case "Deployment":
		c.reconcileDeployment(w)
	case "StatefulSet":
		c.reconcileStatefulSet(w)
	case "DaemonSet":
		c.daemonSets.Fire() // pods lost on a node mark it dirty (podGone)
	}
	w.avail.setDesired(w.replicas)
	c.observeReady(w)
}

// selectorOf is a validated workload's selector (workloadrules.ValidateSelector
// has refused one that does not parse).
func selectorOf(sel *metav1.LabelSelector) labels.Selector {
	s, _ := metav1.LabelSelectorAsSelector(sel)
	return s
}

func replicasOr1(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// invalid is the 422 the API server answers an invalid object with.
func invalid(kind, name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(appsv1.SchemeGroupVersion.WithKind(kind).GroupKind(), name, errs)
}

func (c *Cluster) applyDeployment(d *appsv1.Deployment) error {
	if err := c.requireNamespace(d.Namespace); err != nil {
		//lint:ignore ST1005 the message starts with the kind, as the API server's do
		return fmt.Errorf("Deployment %s/%s: %v", d.Namespace, d.Name, err)
	}
	if errs := workloadrules.ValidateDeployment(d); len(errs) > 0 {
		return invalid("Deployment", d.Name, errs)
	}
	workloadrules.SetDeploymentDefaults(d)
	sel := selectorOf(d.Spec.Selector)
	if existing, ok := c.workloads["Deployment/"+d.Namespace+"/"+d.Name]; ok {
		c.updateWorkload(existing, d, d.Spec.Template, replicasOr1(d.Spec.Replicas), d.Spec.MinReadySeconds)
		return nil
	}
	w := &workload{kind: "Deployment", namespace: d.Namespace, name: d.Name, obj: d, template: d.Spec.Template, selector: sel,
		replicas: replicasOr1(d.Spec.Replicas), minReady: d.Spec.MinReadySeconds}
	c.addWorkload(w)
	if !d.Spec.Paused {
		// The ReplicaSet the deployment controller's first sync creates.
		w.cur = c.newReplicaSet(w)
	}
	return nil
}

func (c *Cluster) applyStatefulSet(s *appsv1.StatefulSet) error {
	if err := c.requireNamespace(s.Namespace); err != nil {
		return fmt.Errorf("StatefulSet %s/%s: %v", s.Namespace, s.Name, err)
	}
	if errs := workloadrules.ValidateStatefulSet(s); len(errs) > 0 {
		return invalid("StatefulSet", s.Name, errs)
	}
	workloadrules.SetStatefulSetDefaults(s)
	sel := selectorOf(s.Spec.Selector)
	if existing, ok := c.workloads["StatefulSet/"+s.Namespace+"/"+s.Name]; ok {
		if errs := workloadrules.ValidateStatefulSetUpdate(s, existing.obj.(*appsv1.StatefulSet)); len(errs) > 0 {
			return invalid("StatefulSet", s.Name, errs)
		}
		c.updateWorkload(existing, s, s.Spec.Template, replicasOr1(s.Spec.Replicas), s.Spec.MinReadySeconds)
		return nil
	}
	w := &workload{kind: "StatefulSet", namespace: s.Namespace, name: s.Name, obj: s, template: s.Spec.Template, selector: sel,
		replicas:     replicasOr1(s.Spec.Replicas),
		minReady:     s.Spec.MinReadySeconds,
		orderedReady: s.Spec.PodManagementPolicy != appsv1.ParallelPodManagement,
		claims:       s.Spec.VolumeClaimTemplates}
	c.addWorkload(w)
	w.cur = c.newRevision(w, s.Spec.Template)
	w.current = w.cur
	return nil
}

func (c *Cluster) applyDaemonSet(d *appsv1.DaemonSet) error {
	if err := c.requireNamespace(d.Namespace); err != nil {
		return fmt.Errorf("DaemonSet %s/%s: %v", d.Namespace, d.Name, err)
	}
	if errs := workloadrules.ValidateDaemonSet(d); len(errs) > 0 {
		return invalid("DaemonSet", d.Name, errs)
	}
	workloadrules.SetDaemonSetDefaults(d)
	sel := selectorOf(d.Spec.Selector)
	if existing, ok := c.workloads["DaemonSet/"+d.Namespace+"/"+d.Name]; ok {
		c.updateWorkload(existing, d, d.Spec.Template, existing.replicas, d.Spec.MinReadySeconds)
		return nil
	}
	w := &workload{kind: "DaemonSet", namespace: d.Namespace, name: d.Name, obj: d, template: d.Spec.Template, selector: sel, minReady: d.Spec.MinReadySeconds,
		daemonTolerations: daemonTolerations(d.Spec.Template.Spec.Tolerations), daemonPods: map[string][]*podState{}, daemonNodes: map[string]bool{}, daemonStrays: map[string]bool{}}
	c.dsAllDirty = true
	c.dsGeneration++
	c.addWorkload(w)
	w.cur = c.newRevision(w, d.Spec.Template)
	return nil
}

func (c *Cluster) applyBarePod(p *corev1.Pod) error {
	if err := c.requireNamespace(p.Namespace); err != nil {
		return fmt.Errorf("Pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	if _, ok := c.pods[string(c.podKey(p.Namespace, p.Name))]; ok {
		return fmt.Errorf("Pod %s/%s: pods are immutable; delete it first", p.Namespace, p.Name)
	}
	// The Priority admission plugin refuses the pod before anything is
	// stored (createPod runs it again, to the same result).
	if err := c.admitPriority(p); err != nil {
		return fmt.Errorf("Pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	w := &workload{kind: "Pod", namespace: p.Namespace, name: p.Name, obj: p, template: corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}, replicas: 1}
	c.addWorkload(w)
	if _, err := c.createPod(p, w, nil); err != nil {
		return fmt.Errorf("Pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// updateWorkload applies a changed Deployment, StatefulSet or DaemonSet: the
// object (whose metadata.generation moves when its spec changed), its
// replicas and minReadySeconds, and a new pod template, which starts a
// rollout.
func (c *Cluster) updateWorkload(w *workload, obj metav1.Object, tmpl corev1.PodTemplateSpec, replicas, minReady int32) {
	old := w.obj
	obj.SetUID(old.GetUID())
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	obj.SetGeneration(old.GetGeneration())
	w.obj = obj
	if !apiequality.Semantic.DeepEqual(specOf(old), specOf(obj)) {
		w.bumpGeneration()
	}
	w.replicas = replicas
	if minReady != w.minReady {
		w.minReady = minReady
		c.refreshAvailability(w)
	}
	if !apiequality.Semantic.DeepEqual(w.template, tmpl) {
		c.setTemplate(w, tmpl)
	}
	w.kick()
}

func specOf(obj metav1.Object) any {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec
	case *appsv1.StatefulSet:
		return &o.Spec
	case *appsv1.DaemonSet:
		return &o.Spec
	}
	return nil
}

func (w *workload) templateGenerationLabel() string {
	if w.generationLabel == "" {
		w.generationLabel = strconv.FormatInt(w.templateGeneration, 10)
	}
	return w.generationLabel
}

func (w *workload) bumpGeneration() {
	w.generation++
	w.obj.SetGeneration(w.generation)
}

// setTemplate records a new spec.template. The revision of an equal
// template is reused (a rollback); otherwise a StatefulSet or DaemonSet
// gets a new ControllerRevision at once, and a Deployment its new
// ReplicaSet when the deployment controller creates it.
func (c *Cluster) setTemplate(w *workload, t corev1.PodTemplateSpec) {
	w.template = t
	w.daemonAffinity = nil
	w.templateGeneration++
	w.generationLabel = ""
	switch o := w.obj.(type) {
	case *appsv1.Deployment:
		o.Spec.Template = t
	case *appsv1.StatefulSet:
		o.Spec.Template = t
	case *appsv1.DaemonSet:
		o.Spec.Template = t
	}
	w.cur = w.findRevision(&t)
	if w.cur == nil && w.kind != "Deployment" {
		w.cur = c.newRevision(w, t)
	}
	if w.kind == "DaemonSet" {
		w.daemonTolerations = daemonTolerations(t.Spec.Tolerations)
		c.dsAllDirty = true
		c.dsGeneration++
		c.daemonSets.Fire()
	}
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
	if replicas != w.replicas {
		w.bumpGeneration()
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

// DaemonSetExists reports whether a DaemonSet exists, for drain's filter.
func (c *Cluster) DaemonSetExists(namespace, name string) bool {
	_, ok := c.workloads["DaemonSet/"+namespace+"/"+name]
	return ok
}

// DaemonSetGeneration changes whenever a DaemonSet is added or its pod
// template changes, so callers can cache DaemonSetOverhead.
func (c *Cluster) DaemonSetGeneration() uint64 { return c.dsGeneration }

// DaemonSetOverhead is what the DaemonSets that would run on a node with
// these labels and taints request — what Karpenter adds to a new node's
// bill before packing pods onto it.
func (c *Cluster) DaemonSetOverhead(node *corev1.Node) Resources {
	var r Resources
	for _, w := range c.daemonSetOrder {
		if c.daemonShouldRun(w, node) {
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

// withLabel sets a label on a pod's own copy of its template's labels.
func withLabel(labels map[string]string, key, value string) map[string]string {
	if labels == nil {
		labels = make(map[string]string, 1)
	}
	labels[key] = value
	return labels
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
	// unschedulable is the longest a pod of the workload that was bound or
	// deleted since had been unschedulable.
	unschedulable time.Duration
}

func (a *availability) start(now time.Time, ready int) {
	a.tracking = true
	a.ready = ready
	a.reached = false
	a.minReady = -1
	a.zero = false
	a.zeroTotal = 0
	a.unschedulable = 0
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

// observeReady records a workload's Ready count in its availability and
// tells the OnWorkloadReady hooks.
func (c *Cluster) observeReady(w *workload) {
	w.avail.observe(c.eng.Now(), w.readyCount())
	for _, h := range c.readyHook {
		h(WorkloadReady{Kind: w.kind, Namespace: w.namespace, Name: w.name, Desired: w.replicas, Ready: w.readyCount()})
	}
}

// WorkloadReady is a workload's Ready and desired counts at one instant.
type WorkloadReady struct {
	Kind, Namespace, Name string
	Desired               int32
	Ready                 int
}

// WorkloadStatus is a workload's availability over a rehearsal.
type WorkloadStatus struct {
	Kind, Namespace, Name string
	Desired               int32
	Ready                 int
	MinReady              int
	ZeroReady             time.Duration
	PDBViolations         int
	// Unschedulable is the longest any of its pods was Pending with
	// PodScheduled=False (reason Unschedulable) while tracked: 0 when
	// every pod found a node at once.
	Unschedulable time.Duration
}

// Workloads reports every workload's availability, in creation order.
func (c *Cluster) Workloads() []WorkloadStatus {
	now := c.eng.Now()
	pending := map[*workload]time.Duration{}
	if c.tracking {
		for _, ps := range c.pendingOrder {
			if ps.pending && ps.unschedulable && ps.owner != nil {
				pending[ps.owner] = max(pending[ps.owner], c.unschedulableFor(ps))
			}
		}
	}
	out := make([]WorkloadStatus, 0, len(c.workloadOrder))
	for _, w := range c.workloadOrder {
		out = append(out, WorkloadStatus{
			Kind: w.kind, Namespace: w.namespace, Name: w.name,
			Desired: w.replicas, Ready: w.readyCount(), MinReady: w.avail.minReadyOr(w.readyCount()),
			ZeroReady: w.avail.zeroUntil(now), PDBViolations: w.avail.violations,
			Unschedulable: max(w.avail.unschedulable, pending[w]),
		})
	}
	return out
}

// PodSignature numbers the pod's combination of tolerations, node selector
// and required node affinity: two pods with the same number pass the same
// taint and node-affinity checks on every node.
func (c *Cluster) PodSignature(pod *corev1.Pod) int {
	if ps, ok := c.byPod[pod]; ok {
		return ps.sig
	}
	return c.signature(&pod.Spec)
}

// TemplateKey returns a key shared by pods whose specs are one workload
// template's as written — equal keys, equal specs — or nil for a pod whose
// spec is its own (a bare pod, a DaemonSet pod, a pod admission changed).
// Callers cache what they derive from a pod's spec under it.
func (c *Cluster) TemplateKey(pod *corev1.Pod) any {
	if ps, ok := c.byPod[pod]; ok && ps.asTemplate {
		return ps.rev
	}
	return nil
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
