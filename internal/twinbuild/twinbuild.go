// Package twinbuild turns a scenario into a wired twin: the in-memory
// Kubernetes, EC2, the EKS control plane, Karpenter, the managed and
// self-managed node groups and Fargate on one virtual-time engine, with the
// scenario's manifests applied, its nodes created and its starting pods
// bound and Ready, as a running cluster has them.
//
// A rehearsal plays its script on the twin Build returns; ladder check's
// drain prediction drains its nodes; ladder inventory and the lab's
// materializer read its starting cluster (Start). What happens to the twin
// afterwards — events, phases, the report — is the caller's.
package twinbuild

import (
	"fmt"
	"sort"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	"github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/eks"
	"github.com/ladder-eks/ladder/internal/twin/fargate"
	"github.com/ladder-eks/ladder/internal/twin/karpenter"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/mng"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// Options adjust a build.
type Options struct {
	// Seed overrides the scenario's seed when non-nil.
	Seed *uint64
	// Observe, when set, is called once the twins are wired and before the
	// first manifest is applied, for the caller to register its event
	// observers (OnEvent, OnPDBBreach): it sees every event of the starting
	// cluster's construction. The Fargate scheduler's starting pods were
	// running before; a caller observes Fargate once Build returns.
	Observe func(*Twin)
	// Body, when set, is what the managed and self-managed node groups and
	// their worker pool do to Kubernetes in place of the twin's cluster: a
	// real API server that already runs the scenario's starting cluster (a
	// lab the scenario was materialized into with the same seed). Build
	// then adopts the groups' nodes there by the names the twin gives them
	// and leaves the starting pods to that cluster: it does not bootstrap
	// them.
	Body Body
}

// Body is a cluster the managed node groups, the self-managed groups and
// the worker pool act on.
type Body interface {
	mng.Kube
	worker.Kube
	asg.Kube
}

// Twin is a scenario's cluster in the twins, all on one engine.
type Twin struct {
	Scenario *scenario.Scenario
	// Seed is the engine's seed: Options.Seed, else the scenario's, else 1.
	Seed   uint64
	Engine *sim.Engine

	Kube         *kube.Cluster
	Cloud        *ec2.Cloud
	ControlPlane *eks.ControlPlane
	Karpenter    *karpenter.Karpenter
	// Workers launch and terminate the EC2 nodes of the managed and
	// self-managed node groups.
	Workers *worker.Pool
	ASG     *asg.ASG     // self-managed node groups
	MNG     *mng.Service // managed node groups
	Fargate *fargate.Fargate

	// NodePools maps a Karpenter NodePool to the scenario's node group.
	NodePools map[string]string
	// Objects are the manifests applied so far, by ObjectKey.
	Objects map[string]manifest.Object

	// fargateKubelets caches the kubelet of new Fargate pods per minor.
	fargateKubelets map[string]string
}

// Build wires the twins for a scenario that passed scenario.Validate (the
// caller validates once, before its own checks of the scenario) and brings
// up its starting cluster: Fargate profiles, the manifests (dependencies
// first), each node group's starting nodes, then every starting pod bound
// and Ready, created when its node was. It takes no virtual time. An error
// means the scenario is inconsistent; it names the file and field.
func Build(sc *scenario.Scenario, opts Options) (*Twin, error) {
	tw := wire(sc, opts)
	if opts.Observe != nil {
		opts.Observe(tw)
	}
	if err := tw.addFargateProfiles(); err != nil {
		return nil, err
	}
	if err := tw.applyAll(sc.Objects); err != nil {
		return nil, err
	}
	if err := tw.createNodes(); err != nil {
		return nil, err
	}
	if opts.Body != nil {
		return tw, nil
	}
	if err := tw.bootstrap(); err != nil {
		return nil, err
	}
	return tw, nil
}

// wire creates the twins and connects them: the control plane reads the
// kubelets and node group versions, Karpenter and the managed node groups
// the control plane's version, Fargate pods start at the control plane's.
func wire(sc *scenario.Scenario, opts Options) *Twin {
	seed := uint64(1)
	if sc.Spec.Seed != nil {
		seed = *sc.Spec.Seed
	}
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	eng := sim.New(sc.Spec.Start.UTC(), seed)
	t := sc.Spec.Timings
	if t == nil {
		t = &scenario.Timings{}
	}
	kt := kube.DefaultTimings
	kt.PodStartup = t.PodStartup.Get(kt.PodStartup)
	kt.PodShutdown = t.PodShutdown.Get(kt.PodShutdown)
	kt.VolumeAttach = t.VolumeAttach.Get(kt.VolumeAttach)
	kt.VolumeDetach = t.VolumeDetach.Get(kt.VolumeDetach)
	c := sc.Spec.Cluster
	tw := &Twin{
		Scenario: sc, Seed: seed, Engine: eng,
		Kube:            kube.New(eng, kube.Options{Timings: kt, Region: c.Region, Zones: c.Zones}),
		Cloud:           ec2.New(c.Region, c.Zones, eng.Rand()),
		NodePools:       map[string]string{},
		Objects:         map[string]manifest.Object{},
		fargateKubelets: map[string]string{},
	}
	tw.ControlPlane = eks.New(eng, c.Name, c.Region, kubeversion.MustParse(c.Version), t.ControlPlaneUpdate.Get(eks.DefaultUpdateDuration))
	tw.ControlPlane.Kubelets = func() map[string]string {
		out := map[string]string{}
		for _, n := range tw.Kube.Nodes() {
			out[n.Name] = n.Status.NodeInfo.KubeletVersion
		}
		return out
	}
	kpt := karpenter.DefaultTimings
	kpt.Launch = t.NodeLaunch.Get(kpt.Launch)
	kpt.Register = t.NodeRegister.Get(kpt.Register)
	kpt.Initialize = t.NodeReady.Get(kpt.Initialize)
	kpt.Terminate = t.InstanceTerminate.Get(kpt.Terminate)
	tw.Karpenter = karpenter.New(eng, tw.Kube, tw.Cloud, karpenter.Options{
		ClusterName:         c.Name,
		Timings:             kpt,
		InstanceTypes:       sc.InstanceTypes(),
		ExtraAMIs:           sc.ExtraAMIs(),
		ControlPlaneVersion: func() string { return tw.ControlPlane.Version().String() },
	})
	var body Body = tw.Kube
	if opts.Body != nil {
		body = opts.Body
	}
	tw.Workers = worker.New(eng, body, tw.Cloud, worker.Timings{Launch: kpt.Launch, Register: kpt.Register, Ready: kpt.Initialize, Terminate: kpt.Terminate})
	tw.MNG = mng.New(eng, body, tw.Workers, mng.Options{InstanceTypes: sc.InstanceTypes(), ExtraAMIs: sc.ExtraAMIs(), Zones: c.Zones,
		ControlPlaneVersion: func() kubeversion.Minor { return tw.ControlPlane.Version() }})
	tw.ControlPlane.NodeGroupVersions = tw.MNG.Versions
	tw.ASG = asg.New(eng, body, tw.Workers, asg.Options{InstanceTypes: sc.InstanceTypes(), ExtraAMIs: sc.ExtraAMIs(), Zones: c.Zones})
	tw.Fargate = fargate.New(eng, tw.Kube, tw.Cloud, fargate.Options{Kubelet: tw.fargateKubelet, Provision: t.FargateProvision.Get(fargate.DefaultProvision)})
	for _, g := range sc.Spec.NodeGroups {
		if g.Karpenter != nil {
			tw.NodePools[g.Karpenter.NodePool] = g.Name
		}
	}
	return tw
}

// FargateKubelet is the kubelet a new Fargate pod starts with now.
func (tw *Twin) FargateKubelet() string { return tw.fargateKubelet() }

// fargateKubelet is the kubelet a Fargate pod starts with: the control
// plane's minor ("Any new Pods that are launched on Fargate have a kubelet
// version that matches your cluster version") at its most recent patch
// ("All Fargate Pods start on the most recent Kubernetes patch version";
// semantics.md §E), taken from the newest AL2023 AMI of that minor.
func (tw *Twin) fargateKubelet() string {
	minor := tw.ControlPlane.Version().String()
	if v, ok := tw.fargateKubelets[minor]; ok {
		return v
	}
	v := "v" + minor + ".0-eks"
	if a, err := catalog.ResolveAlias("al2023@latest", minor, catalog.ArchX8664, tw.Engine.Now()); err == nil {
		v = a.KubeletVersion
	}
	tw.fargateKubelets[minor] = v
	return v
}

// ObjectKey is Objects' key of a manifest.
func ObjectKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// applyOrder is the order kinds are applied in, dependencies first (as Helm
// installs them).
var applyOrder = map[string]int{
	"Namespace": 0, "StorageClass": 1, "PriorityClass": 1, "PersistentVolume": 2, "PersistentVolumeClaim": 3,
	"EC2NodeClass": 4, "NodePool": 5, "PodDisruptionBudget": 6,
	"DaemonSet": 7, "StatefulSet": 8, "Deployment": 9, "Pod": 10,
}

// InApplyOrder returns objs sorted as they are applied (a stable sort:
// objects of a kind keep their order).
func InApplyOrder(objs []manifest.Object) []manifest.Object {
	sorted := append([]manifest.Object(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool { return applyOrder[sorted[i].GVK.Kind] < applyOrder[sorted[j].GVK.Kind] })
	return sorted
}

func (tw *Twin) applyAll(objs []manifest.Object) error {
	for _, o := range InApplyOrder(objs) {
		if err := tw.Apply(o); err != nil {
			return err
		}
	}
	return nil
}

// Apply sends one manifest to the twin that owns its kind and records it in
// Objects. The error names the manifest's file and object. The twin gets a
// copy: what it does to the object (a scale, a rollout's status) stays in
// the twin, and the scenario can be rehearsed again as it was loaded.
func (tw *Twin) Apply(o manifest.Object) error {
	if ro, ok := o.Object.(runtime.Object); ok {
		o.Object = ro.DeepCopyObject().(metav1.Object)
	}
	var err error
	switch obj := o.Object.(type) {
	case *awsv1.EC2NodeClass:
		err = tw.Karpenter.ApplyNodeClass(obj)
	case *karpv1.NodePool:
		err = tw.Karpenter.ApplyNodePool(obj)
	case *corev1.Namespace, *storagev1.StorageClass, *schedulingv1.PriorityClass, *corev1.PersistentVolume, *corev1.PersistentVolumeClaim,
		*policyv1.PodDisruptionBudget, *appsv1.DaemonSet, *appsv1.StatefulSet, *appsv1.Deployment, *corev1.Pod:
		err = tw.Kube.Apply(obj)
	default:
		err = fmt.Errorf("the twin does not apply %s", o.GVK.Kind)
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %v", o.Source, o.Name(), err)
	}
	tw.Objects[ObjectKey(o.GVK.Kind, o.Object.GetNamespace(), o.Object.GetName())] = o
	return nil
}

// NodeGroup is the scenario node group a node belongs to, by the twins'
// own record, and its type as report.Group* spells it; a Karpenter node of
// a NodePool no group names is in a group named after the NodePool.
func (tw *Twin) NodeGroup(n *corev1.Node) (name, typ string) {
	if pool, ok := n.Labels[karpv1.NodePoolLabelKey]; ok {
		if g, ok := tw.NodePools[pool]; ok {
			return g, report.GroupKarpenter
		}
		return pool, report.GroupKarpenter
	}
	if p, ok := tw.Fargate.ProfileOf(n.Name); ok {
		return p, report.GroupFargate
	}
	if g := tw.ASG.GroupOf(n.Name); g != "" {
		return g, report.GroupSelfManaged
	}
	if g, ok := tw.MNG.Nodegroup(n.Name); ok {
		return g, report.GroupManaged
	}
	return "", ""
}

// bootstrap places the starting workloads as a running cluster has them:
// pods bound and Ready at the start, created when their node was; Fargate
// pods on nodes of the control plane's version.
func (tw *Twin) bootstrap() error {
	eng, k := tw.Engine, tw.Kube
	k.HoldPodStarts()
	eng.Run(eng.Now(), nil)
	if err := tw.Fargate.Bootstrap(eng.Now()); err != nil {
		return fmt.Errorf("%s: %v", tw.Scenario.Path, err)
	}
	for _, n := range k.Nodes() {
		k.StartPodsNow(n.Name, n.CreationTimestamp.Time)
	}
	k.ReleasePodStarts()
	eng.Run(eng.Now(), nil)
	k.StartTracking()
	return nil
}
