package rehearse

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// The property test's variants (property_test.go): a seed picks a
// built-in scenario and changes its Kubernetes objects — the decoded
// upstream objects, not their YAML — the ways PodDisruptionBudgets go
// wrong in real clusters: budgets removed or rewritten, one or several per
// workload with every form of minAvailable and maxUnavailable (integers and
// percentages, ones that block), budgets spanning several workloads (a
// label added to their templates), over a DaemonSet's pods, over bare
// pods, replica counts changed, and a one-replica StatefulSet under
// minAvailable 1 on the workshop's Fargate profile. Every node mechanism
// of the built-ins runs (managed in place and blue/green, Karpenter drift,
// instance refresh with and without a lifecycle hook, a Fargate restart),
// with what overrides a budget that blocks (mechanisms): a forced managed
// update, a NodePool's terminationGracePeriod, node groups in another
// order, a scale-down. Each variant is validated as `ladder rehearse`
// validates it; none of the first thousands fails to.

// propLabel is the label the variants add to pod templates and bare pods
// for budgets spanning workloads.
const propLabel = "prop.ladder.dev/group"

// variant is one generated scenario and what was done to it.
type variant struct {
	seed uint64
	base string
	sc   *scenario.Scenario
	// changes says what the generator did, one line each.
	changes []string
}

// propWorkload is a controller of the variant: its kind, namespace, name,
// pod template, selector and replicas (nil for a DaemonSet).
type propWorkload struct {
	kind, namespace, name string
	template              *corev1.PodTemplateSpec
	selector              *metav1.LabelSelector
	replicas              *int32
}

func (w propWorkload) key() string { return w.kind + " " + w.namespace + "/" + w.name }

// hasClaim reports whether the template mounts a PersistentVolumeClaim:
// more replicas of it would share one volume, so its replicas stay.
func (w propWorkload) hasClaim() bool {
	for _, v := range w.template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return true
		}
	}
	return false
}

func propWorkloads(sc *scenario.Scenario) []propWorkload {
	var out []propWorkload
	for _, o := range sc.Objects {
		switch x := o.Object.(type) {
		case *appsv1.Deployment:
			out = append(out, propWorkload{"Deployment", x.Namespace, x.Name, &x.Spec.Template, x.Spec.Selector, x.Spec.Replicas})
		case *appsv1.StatefulSet:
			out = append(out, propWorkload{"StatefulSet", x.Namespace, x.Name, &x.Spec.Template, x.Spec.Selector, x.Spec.Replicas})
		case *appsv1.DaemonSet:
			out = append(out, propWorkload{"DaemonSet", x.Namespace, x.Name, &x.Spec.Template, x.Spec.Selector, nil})
		}
	}
	return out
}

// genVariant builds the variant of a seed. The same seed gives the same
// variant; it may not validate (the caller skips it and counts it).
func genVariant(seed uint64) (*variant, error) {
	rng := rand.New(rand.NewPCG(seed, 0x1add3a))
	bases := scenario.Builtins()
	base := bases[rng.IntN(len(bases))]
	sc, err := scenario.LoadBuiltin(base)
	if err != nil {
		return nil, err
	}
	v := &variant{seed: seed, base: base, sc: sc}
	g := &propGen{v: v, rng: rng, names: map[string]int{}}
	g.block = []float64{0.05, 0.2, 0.5}[rng.IntN(3)]
	g.note("budgets allow no disruption with probability %.2f", g.block)
	g.mechanisms()
	g.existingPDBs()
	g.replicas()
	g.perWorkload()
	g.spanning()
	g.daemonSet()
	g.barePods()
	if base == "workshop" && rng.IntN(2) == 0 {
		g.fargateStatefulSet()
	}
	return v, nil
}

type propGen struct {
	v   *variant
	rng *rand.Rand
	// block is the chance a budget added or rewritten allows no
	// disruption at all.
	block float64
	names map[string]int // namespace → PDBs added
}

func (g *propGen) note(format string, args ...any) {
	g.v.changes = append(g.v.changes, fmt.Sprintf(format, args...))
}

// budget is a random minAvailable or maxUnavailable, integer or
// percentage, for a budget over about n pods; with the variant's
// probability it is one that allows no disruption at all (minAvailable n
// or more, or 100%; maxUnavailable 0 or 0%).
func (g *propGen) budget(n int) policyv1.PodDisruptionBudgetSpec {
	block := g.rng.Float64() < g.block
	pct := func(xs ...int) intstr.IntOrString {
		return intstr.FromString(fmt.Sprintf("%d%%", xs[g.rng.IntN(len(xs))]))
	}
	var v intstr.IntOrString
	form := g.rng.IntN(4)
	switch {
	case form == 0 && block:
		v = intstr.FromInt32(int32(n + g.rng.IntN(2)))
	case form == 0:
		v = intstr.FromInt32(int32(g.rng.IntN(max(1, n))))
	case form == 1 && block:
		v = pct(100)
	case form == 1:
		v = pct(0, 10, 25, 33, 50, 75)
	case form == 2 && block:
		v = intstr.FromInt32(0)
	case form == 2:
		v = intstr.FromInt32(int32(1 + g.rng.IntN(2)))
	case block:
		v = pct(0)
	default:
		v = pct(10, 25, 33, 50, 100)
	}
	if form < 2 {
		return policyv1.PodDisruptionBudgetSpec{MinAvailable: &v}
	}
	return policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &v}
}

func budgetString(spec policyv1.PodDisruptionBudgetSpec) string {
	if spec.MinAvailable != nil {
		return "minAvailable " + spec.MinAvailable.String()
	}
	if spec.MaxUnavailable != nil {
		return "maxUnavailable " + spec.MaxUnavailable.String()
	}
	return "no budget"
}

// addPDB adds a budget over the pods matching sel in a namespace.
func (g *propGen) addPDB(namespace string, sel map[string]string, spec policyv1.PodDisruptionBudgetSpec, what string) {
	g.names[namespace]++
	name := fmt.Sprintf("prop-%d", g.names[namespace])
	spec.Selector = &metav1.LabelSelector{MatchLabels: sel}
	p := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       spec,
	}
	g.v.sc.Objects = append(g.v.sc.Objects, manifest.Object{
		Source: manifest.Source{File: fmt.Sprintf("variant %d", g.v.seed)},
		GVK:    policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), Object: p,
	})
	g.note("PDB %s/%s %s over %s", namespace, name, budgetString(spec), what)
}

// mechanisms changes how nodes go, so that budgets that block are
// overridden, each way EKS and Karpenter do it: a managed group updated in
// place with force deletes the pods a budget holds after 15 minutes; a
// NodePool's terminationGracePeriod makes Karpenter delete them; the
// karpenter-drift script scales checkout down instead of up.
func (g *propGen) mechanisms() {
	sc := g.v.sc
	force := 0.3 // each group's chance, or all of them
	if g.rng.IntN(2) == 0 {
		force = 1
	}
	for i := range sc.Spec.NodeGroups {
		ng := &sc.Spec.NodeGroups[i]
		if ng.Type != scenario.Managed || ng.StrategyOf() != scenario.InPlace || g.rng.Float64() >= force {
			continue
		}
		if ng.Upgrade == nil {
			ng.Upgrade = &scenario.GroupUpgrade{}
		}
		ng.Upgrade.Force = true
		g.note("node group %s updated in place with force", ng.Name)
	}
	for _, o := range sc.Objects {
		if np, ok := o.Object.(*karpv1.NodePool); ok && g.rng.IntN(2) == 0 {
			d := time.Duration(1+g.rng.IntN(10)) * time.Minute
			np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: d}
			g.note("NodePool %s terminationGracePeriod %s", np.Name, d)
		}
	}
	// The playbook's node groups in another order: a group whose drain
	// fails the run does not hide the mechanisms after it.
	if up := sc.Spec.Upgrade; up != nil && len(sc.Spec.NodeGroups) > 1 && g.rng.IntN(2) == 0 {
		up.Order = nil
		for _, ng := range sc.Spec.NodeGroups {
			up.Order = append(up.Order, ng.Name)
		}
		g.rng.Shuffle(len(up.Order), func(i, j int) { up.Order[i], up.Order[j] = up.Order[j], up.Order[i] })
		g.note("node groups upgraded in the order %v", up.Order)
	}
	for i := range sc.Spec.Actions {
		if a := sc.Spec.Actions[i].Scale; a != nil && g.rng.IntN(3) == 0 {
			a.Replicas = int32(g.rng.IntN(3))
			g.note("action %d scales %s %s/%s to %d", i, a.Kind, a.Namespace, a.Name, a.Replicas)
		}
	}
}

// existingPDBs removes some of the scenario's budgets and rewrites others.
func (g *propGen) existingPDBs() {
	objs := g.v.sc.Objects[:0]
	for _, o := range g.v.sc.Objects {
		p, ok := o.Object.(*policyv1.PodDisruptionBudget)
		if !ok {
			objs = append(objs, o)
			continue
		}
		switch g.rng.IntN(4) {
		case 0:
			g.note("PDB %s/%s removed", p.Namespace, p.Name)
			continue
		case 1:
			spec := g.budget(2)
			p.Spec.MinAvailable, p.Spec.MaxUnavailable = spec.MinAvailable, spec.MaxUnavailable
			g.note("PDB %s/%s now %s", p.Namespace, p.Name, budgetString(p.Spec))
		}
		objs = append(objs, o)
	}
	g.v.sc.Objects = objs
}

// replicas changes some controllers' replica counts (1 to 4).
func (g *propGen) replicas() {
	for _, w := range propWorkloads(g.v.sc) {
		if w.replicas == nil || w.hasClaim() || g.rng.IntN(3) != 0 {
			continue
		}
		r := int32(1 + g.rng.IntN(4))
		*w.replicas = r
		g.note("%s replicas %d", w.key(), r)
	}
}

// perWorkload adds one or two budgets over some controllers' pods, with
// their selector.
func (g *propGen) perWorkload() {
	for _, w := range propWorkloads(g.v.sc) {
		if w.kind == "DaemonSet" || w.selector == nil || len(w.selector.MatchLabels) == 0 {
			continue
		}
		n := 0
		switch x := g.rng.IntN(10); {
		case x < 4:
			n = 1
		case x < 6:
			n = 2
		}
		for range n {
			g.addPDB(w.namespace, clone(w.selector.MatchLabels), g.budget(int(*w.replicas)), w.key())
		}
	}
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// spanning labels several controllers' templates of a namespace alike and
// puts a budget over them all.
func (g *propGen) spanning() {
	byNS := map[string][]propWorkload{}
	for _, w := range propWorkloads(g.v.sc) {
		byNS[w.namespace] = append(byNS[w.namespace], w)
	}
	var namespaces []string
	for ns, ws := range byNS {
		if len(ws) >= 2 {
			namespaces = append(namespaces, ns)
		}
	}
	sort.Strings(namespaces)
	for i := 0; i < 2 && len(namespaces) > 0 && g.rng.IntN(2) == 0; i++ {
		ns := namespaces[g.rng.IntN(len(namespaces))]
		ws := slices.Clone(byNS[ns])
		g.rng.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
		ws = ws[:2+g.rng.IntN(len(ws)-1)]
		value := fmt.Sprintf("span-%d", i)
		var names []string
		pods := 0
		for _, w := range ws {
			if w.template.Labels == nil {
				w.template.Labels = map[string]string{}
			}
			if _, ok := w.template.Labels[propLabel]; ok {
				continue // in the first span already: leave it there
			}
			w.template.Labels[propLabel] = value
			names = append(names, w.key())
			if w.replicas != nil {
				pods += int(*w.replicas)
			} else {
				pods += 3
			}
		}
		if len(names) == 0 {
			continue
		}
		g.addPDB(ns, map[string]string{propLabel: value}, g.budget(pods), strings.Join(names, " + "))
	}
}

// daemonSet puts a budget over a DaemonSet's pods: maxUnavailable or a
// percentage fails safe (no scale subresource), an integer minAvailable
// works.
func (g *propGen) daemonSet() {
	var dss []propWorkload
	for _, w := range propWorkloads(g.v.sc) {
		if w.kind == "DaemonSet" {
			dss = append(dss, w)
		}
	}
	if len(dss) == 0 || g.rng.IntN(3) != 0 {
		return
	}
	w := dss[g.rng.IntN(len(dss))]
	g.addPDB(w.namespace, clone(w.selector.MatchLabels), g.budget(3), w.key())
}

// barePods adds one or two pods without a controller, copied from a
// controller's template (its scheduling constraints and requests) but
// labelled apart so no controller adopts them, and a budget over them —
// sometimes with a controller's pods too.
func (g *propGen) barePods() {
	if g.rng.IntN(3) != 0 {
		return
	}
	var from []propWorkload
	for _, w := range propWorkloads(g.v.sc) {
		if w.kind != "DaemonSet" && !w.hasClaim() && w.template.Spec.NodeName == "" {
			from = append(from, w)
		}
	}
	if len(from) == 0 {
		return
	}
	w := from[g.rng.IntN(len(from))]
	value := "bare"
	n := 1 + g.rng.IntN(2)
	what := fmt.Sprintf("%d bare pod(s) like %s", n, w.key())
	if _, ok := w.template.Labels[propLabel]; !ok && g.rng.IntN(2) == 0 {
		w.template.Labels[propLabel] = value
		what += " and its pods"
	}
	for i := range n {
		p := &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: fmt.Sprintf("prop-bare-%d", i),
				Labels: map[string]string{propLabel: value}},
			Spec: *w.template.Spec.DeepCopy(),
		}
		g.v.sc.Objects = append(g.v.sc.Objects, manifest.Object{
			Source: manifest.Source{File: fmt.Sprintf("variant %d", g.v.seed)},
			GVK:    corev1.SchemeGroupVersion.WithKind("Pod"), Object: p,
		})
	}
	g.addPDB(w.namespace, map[string]string{propLabel: value}, g.budget(n), what)
}

// fargateStatefulSet adds a one-replica StatefulSet to the workshop's
// Fargate profile (namespace assets) under minAvailable 1: the profile's
// restart takes its only pod below the floor.
func (g *propGen) fargateStatefulSet() {
	var assets *appsv1.Deployment
	for _, o := range g.v.sc.Objects {
		if d, ok := o.Object.(*appsv1.Deployment); ok && d.Namespace == "assets" {
			assets = d
		}
	}
	if assets == nil {
		return
	}
	labels := map[string]string{"app.kubernetes.io/name": "prop-sts"}
	tmpl := *assets.Spec.Template.DeepCopy()
	tmpl.Labels = clone(labels)
	one := int32(1)
	s := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "assets", Name: "prop-sts"},
		Spec: appsv1.StatefulSetSpec{Replicas: &one, ServiceName: "prop-sts",
			Selector: &metav1.LabelSelector{MatchLabels: clone(labels)}, Template: tmpl},
	}
	g.v.sc.Objects = append(g.v.sc.Objects, manifest.Object{
		Source: manifest.Source{File: fmt.Sprintf("variant %d", g.v.seed)},
		GVK:    appsv1.SchemeGroupVersion.WithKind("StatefulSet"), Object: s,
	})
	g.note("StatefulSet assets/prop-sts replicas 1 on Fargate")
	one32 := intstr.FromInt32(1)
	g.addPDB("assets", clone(labels), policyv1.PodDisruptionBudgetSpec{MinAvailable: &one32}, "StatefulSet assets/prop-sts")
}

// describe is the variant in a few lines: its seed and base, what the
// generator changed, and its budgets and controllers as they are now.
func (v *variant) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "variant seed %d of %s (reproduce: LADDER_PROPERTY_SEED=%d go test ./internal/rehearse/ -run TestPDBFloorAccountingProperty -v)\n", v.seed, v.base, v.seed)
	fmt.Fprintf(&b, "  changes: %s\n", strings.Join(v.changes, "; "))
	for _, o := range v.sc.Objects {
		if p, ok := o.Object.(*policyv1.PodDisruptionBudget); ok {
			fmt.Fprintf(&b, "  PDB %s/%s %s selector %s\n", p.Namespace, p.Name, budgetString(p.Spec), metav1.FormatLabelSelector(p.Spec.Selector))
		}
	}
	var ws []string
	for _, w := range propWorkloads(v.sc) {
		x := w.key()
		if w.replicas != nil {
			x += fmt.Sprintf(" ×%d", *w.replicas)
		}
		if g, ok := w.template.Labels[propLabel]; ok {
			x += " " + propLabel + "=" + g
		}
		ws = append(ws, x)
	}
	for _, o := range v.sc.Objects {
		if p, ok := o.Object.(*corev1.Pod); ok {
			ws = append(ws, fmt.Sprintf("Pod %s/%s %s=%s", p.Namespace, p.Name, propLabel, p.Labels[propLabel]))
		}
	}
	fmt.Fprintf(&b, "  workloads: %s\n", strings.Join(ws, "; "))
	return b.String()
}
