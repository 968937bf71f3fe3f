package karpenter_test

// Shared fixtures for the Karpenter twin's tests: the wiring a rehearsal
// builds (internal/rehearse/rehearse.go: sim.New, kube.New, ec2.New,
// karpenter.New), builders for NodePools, EC2NodeClasses and workloads in the
// upstream Go types, and helpers that drive virtual time and read
// Karpenter's log. Nothing here sleeps: time moves only through the engine.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/disruption"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/twintest"
)

// t0 is a Wednesday, 00:00 UTC. On that day al2023@latest resolves to the
// seed's AMIs (shared/seeds/karpenter-node-upgrade.ko.txt): ami130 for
// Kubernetes 1.30 (released 2026-02-20) and ami131 for 1.31 (released
// 2026-03-20).
var t0, zones = twintest.T0, twintest.Zones

// ami130Older is an older al2023 1.30 release; no amd64 instance can use
// ami130ARM.
const ami130, ami131, ami130Older, ami130ARM = twintest.AMI130, twintest.AMI131, twintest.AMI130Older, twintest.AMI130ARM

const kubelet130, kubelet131 = twintest.Kubelet130, twintest.Kubelet131

// testTimings are Karpenter's latencies in these tests, all distinct so a
// test can tell which one it measured.
var testTimings = karpenter.Timings{
	BatchIdle:  1 * time.Second,
	BatchMax:   10 * time.Second,
	Launch:     2 * time.Second,
	Register:   30 * time.Second,
	Initialize: 10 * time.Second,
	Terminate:  30 * time.Second,
}

// twin is one rehearsal's worth of twins on a virtual clock.
type twin struct {
	t *testing.T
	twintest.Twin
	karp *karpenter.Karpenter
	// cp is the control-plane minor Karpenter's version poll reads.
	cp  string
	log twintest.Log[logLine]
}

// logLine is one Karpenter event and when it was emitted.
type logLine struct {
	At time.Time
	karpenter.Event
}

type twinConfig struct {
	seed    uint64
	timings karpenter.Timings
	cp      string
}

type twinOption func(*twinConfig)

func withSeed(s uint64) twinOption               { return func(c *twinConfig) { c.seed = s } }
func withTimings(t karpenter.Timings) twinOption { return func(c *twinConfig) { c.timings = t } }

// newTwin wires the engine, the cluster, EC2 and Karpenter as
// internal/rehearse does, in us-west-2 with three zones and a 1.30 control
// plane.
func newTwin(t *testing.T, opts ...twinOption) *twin {
	t.Helper()
	cfg := twinConfig{seed: 1, timings: testTimings, cp: "1.30"}
	for _, o := range opts {
		o(&cfg)
	}
	tw := &twin{t: t, Twin: twintest.New(t0, cfg.seed), cp: cfg.cp}
	eng := tw.Eng
	tw.karp = karpenter.New(eng, tw.Kube, tw.Cloud, karpenter.Options{
		ClusterName:         "ladder-test",
		Timings:             cfg.timings,
		InstanceTypes:       catalog.InstanceTypes(),
		ControlPlaneVersion: func() string { return tw.cp },
	})
	karpenter.VerifyDisruption(tw.karp, func(err error) { t.Fatal(err) })
	tw.karp.OnEvent(func(e karpenter.Event) {
		tw.log.Add(logLine{At: eng.Now(), Event: e})
	})
	return tw
}

// watch calls fn on every later log line, when it is emitted.
func (tw *twin) watch(fn func(logLine)) { tw.log.Watch(fn) }

// apply sends objects to the twin that owns their kind.
func (tw *twin) apply(objs ...metav1.Object) {
	tw.t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *awsv1.EC2NodeClass:
			err = tw.karp.ApplyNodeClass(o)
		case *karpv1.NodePool:
			err = tw.karp.ApplyNodePool(o)
		default:
			err = tw.Kube.Apply(o)
		}
		if err != nil {
			tw.t.Fatalf("apply %T %s: %v", o, o.GetName(), err)
		}
	}
}

// applyYAML decodes manifests as a scenario file would and applies them.
func (tw *twin) applyYAML(doc string) {
	tw.t.Helper()
	objs, err := manifest.Decode("test.yaml", []byte(doc))
	if err != nil {
		tw.t.Fatalf("decode: %v", err)
	}
	for _, o := range objs {
		tw.apply(o.Object)
	}
}

// adopt registers n running nodes of NodePool "default", created age ago,
// spread over the zones in order, running ami ("" for what the
// EC2NodeClass resolves to now).
func (tw *twin) adopt(n int, instanceType, capacityType, ami string, age time.Duration) []*karpenter.NodeClaim {
	tw.t.Helper()
	var out []*karpenter.NodeClaim
	for i := 0; i < n; i++ {
		c, err := tw.karp.Adopt("default", instanceType, zones[i%len(zones)], capacityType, ami, tw.Eng.Now().Add(-age))
		if err != nil {
			tw.t.Fatalf("adopt: %v", err)
		}
		out = append(out, c)
	}
	return out
}

// runFor advances virtual time by d.
func (tw *twin) runFor(d time.Duration) { tw.Eng.RunUntil(tw.Eng.Now().Add(d)) }

// runUntil advances virtual time until cond holds (checked after every
// event) or limit has passed; it reports whether cond held.
func (tw *twin) runUntil(limit time.Duration, cond func() bool) bool {
	return tw.Eng.Run(tw.Eng.Now().Add(limit), cond) == sim.Done
}

// events returns Karpenter's log lines with the given code.
func (tw *twin) events(code string) []logLine {
	return tw.log.Select(func(l logLine) bool { return l.Code == code })
}

// firstEvent returns the first log line with the code that matches pred.
func (tw *twin) firstEvent(code string, pred func(logLine) bool) (logLine, bool) {
	for _, l := range tw.log.Lines {
		if l.Code == code && (pred == nil || pred(l)) {
			return l, true
		}
	}
	return logLine{}, false
}

// claimsOnAMI counts live NodeClaims running an AMI.
func (tw *twin) claimsOnAMI(id string) int {
	n := 0
	for _, c := range tw.karp.NodeClaims() {
		if c.AMI.ID == id {
			n++
		}
	}
	return n
}

// claimNamed returns the live NodeClaim called name, or nil.
func (tw *twin) claimNamed(name string) *karpenter.NodeClaim {
	for _, c := range tw.karp.NodeClaims() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// workload returns a workload's availability record.
func (tw *twin) workload(kind, name string) kube.WorkloadStatus {
	tw.t.Helper()
	for _, w := range tw.Kube.Workloads() {
		if w.Kind == kind && w.Name == name {
			return w
		}
	}
	tw.t.Fatalf("no %s %s", kind, name)
	return kube.WorkloadStatus{}
}

// dumpLog formats the log for failure messages.
func (tw *twin) dumpLog() string {
	var b strings.Builder
	for _, l := range tw.log.Lines {
		fmt.Fprintf(&b, "  +%-8s %-22s %-10s %s %s %s\n", l.At.Sub(t0), l.Code, l.Reason, l.NodeClaim, l.Node, l.Message)
	}
	return b.String()
}

// ---- EC2NodeClass and NodePool builders -----------------------------------

func nodeClass(terms ...awsv1.AMISelectorTerm) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass"},
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: awsv1.EC2NodeClassSpec{
			Role:             "KarpenterNodeRole-ladder-test",
			AMISelectorTerms: terms,
		},
	}
}

func amiID(id string) awsv1.AMISelectorTerm       { return awsv1.AMISelectorTerm{ID: id} }
func amiAlias(alias string) awsv1.AMISelectorTerm { return awsv1.AMISelectorTerm{Alias: alias} }

type poolOption func(*karpv1.NodePool)

// nodePool is NodePool "default" on EC2NodeClass "default": spot, instance
// category c/m/r, size large (the seed's c4.large), consolidation off so
// that only the method under test disrupts, and the given options.
func nodePool(opts ...poolOption) *karpv1.NodePool {
	np := &karpv1.NodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"},
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: karpv1.NodePoolSpec{
			Template: karpv1.NodeClaimTemplate{
				Spec: karpv1.NodeClaimTemplateSpec{
					Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
						req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot"),
						req(awsv1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r"),
						req(awsv1.LabelInstanceSize, corev1.NodeSelectorOpIn, "large"),
					},
					NodeClassRef: &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
				},
			},
			Disruption: karpv1.Disruption{
				ConsolidateAfter: disruption.ExplicitNever(),
			},
		},
	}
	for _, o := range opts {
		o(np)
	}
	return np
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) karpv1.NodeSelectorRequirementWithMinValues {
	return karpv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

func withRequirements(rs ...karpv1.NodeSelectorRequirementWithMinValues) poolOption {
	return func(np *karpv1.NodePool) { np.Spec.Template.Spec.Requirements = rs }
}

func withBudgets(bs ...karpv1.Budget) poolOption {
	return func(np *karpv1.NodePool) { np.Spec.Disruption.Budgets = bs }
}

func budget(nodes string, reasons ...karpv1.DisruptionReason) karpv1.Budget {
	return karpv1.Budget{Nodes: nodes, Reasons: reasons}
}

func scheduledBudget(nodes, schedule string, d time.Duration) karpv1.Budget {
	return karpv1.Budget{Nodes: nodes, Schedule: &schedule, Duration: &metav1.Duration{Duration: d}}
}

func withLabels(kv ...string) poolOption {
	return func(np *karpv1.NodePool) {
		np.Spec.Template.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			np.Spec.Template.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withTaints(ts ...corev1.Taint) poolOption {
	return func(np *karpv1.NodePool) { np.Spec.Template.Spec.Taints = ts }
}

func withTGP(d time.Duration) poolOption {
	return func(np *karpv1.NodePool) {
		np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: d}
	}
}

func withExpireAfter(d time.Duration) poolOption {
	return func(np *karpv1.NodePool) {
		np.Spec.Template.Spec.ExpireAfter = karpv1.NillableDuration{Duration: &d}
	}
}

// withConsolidation sets the policy and consolidateAfter ("30s", or
// "Never").
func withConsolidation(policy karpv1.ConsolidationPolicy, after string) poolOption {
	return func(np *karpv1.NodePool) {
		np.Spec.Disruption.ConsolidationPolicy = policy
		if after == karpv1.Never {
			np.Spec.Disruption.ConsolidateAfter = disruption.ExplicitNever()
			return
		}
		np.Spec.Disruption.ConsolidateAfter = karpv1.MustParseNillableDuration(after)
	}
}

// ---- workloads ------------------------------------------------------------

type podOption = twintest.PodOption

// The workload builders are twintest's.
var deployment, pod, podSpec, pdb, intOrStr = twintest.Deployment, twintest.Pod, twintest.PodSpec, twintest.PDB, twintest.Int

func withNodeSelector(kv ...string) podOption {
	return func(p *corev1.PodTemplateSpec) {
		p.Spec.NodeSelector = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

// withNodeName binds the pod to a node at creation, as a pod the scheduler
// already placed; it stays free to move elsewhere.
func withNodeName(node string) podOption {
	return func(p *corev1.PodTemplateSpec) { p.Spec.NodeName = node }
}

func withToleration(key, value string) podOption {
	return func(p *corev1.PodTemplateSpec) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: corev1.TaintEffectNoSchedule})
	}
}

func withPodAnnotation(k, v string) podOption {
	return func(p *corev1.PodTemplateSpec) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func withPodGrace(seconds int64) podOption {
	return func(p *corev1.PodTemplateSpec) { p.Spec.TerminationGracePeriodSeconds = &seconds }
}

func withClaim(claim string) podOption {
	return func(p *corev1.PodTemplateSpec) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
		}})
	}
}

// zonalStorage is an EBS-like StorageClass that provisions Immediately in
// one zone, and a claim of it.
func zonalStorage(zone string) (*storagev1.StorageClass, *corev1.PersistentVolumeClaim) {
	immediate := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: "ebs-" + zone},
		Provisioner:       "ebs.csi.aws.com",
		VolumeBindingMode: &immediate,
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: corev1.LabelTopologyZone, Values: []string{zone}},
		}}},
	}
	className := sc.Name
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &className,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Gi")}},
		},
	}
	return sc, pvc
}

// hasTaint reports whether a node carries a taint with key.
func hasTaint(n *corev1.Node, key string) bool {
	return n != nil && kube.HasTaint(n, key)
}
