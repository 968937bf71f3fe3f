package conformance

import (
	"context"
	"fmt"
	"slices"
	"testing"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// The Karpenter suite: NodePools, EC2NodeClasses and NodeClaims through the
// port, on a cluster that runs Karpenter with an EC2NodeClass-capable
// provider (the twin; a real cluster, or the lab with the provider recipe
// of aws-apis.md §6.6). It is a suite of its own because it needs more
// than the core suite's cluster: Karpenter itself, which provisions
// NodeClaims for pending pods and marks them Drifted.

// KarpenterHarness makes environments that run Karpenter.
type KarpenterHarness interface {
	// NewKarpenterEnv returns a fresh environment for one case (see
	// Harness.NewEnv).
	NewKarpenterEnv(t *testing.T) KarpenterEnv
	// KnownDifferences: as Harness's, for this suite's cases.
	KnownDifferences() map[string]string
}

// KarpenterEnv is an Env whose cluster runs Karpenter.
type KarpenterEnv interface {
	Env
	// Apply creates an EC2NodeClass or a NodePool, as kubectl apply does.
	Apply(ctx context.Context, obj metav1.Object) error
	// AMIs are two AMI ids an EC2NodeClass may select by id, for amd64
	// nodes: the first is launched, the second drifts NodeClaims to it.
	AMIs() [2]string
}

// RunKarpenter runs the Karpenter suite against h.
func RunKarpenter(t *testing.T, h KarpenterHarness) {
	var cases []suiteCase
	for _, c := range karpenterCases() {
		cases = append(cases, suiteCase{c.name, func(t *testing.T, ctx context.Context) error {
			env := h.NewKarpenterEnv(t)
			return c.run(&karpFixture{fixture: &fixture{ctx: ctx, env: env, ns: env.Namespace()}, env: env})
		}})
	}
	runSuite(t, cases, h.KnownDifferences())
}

type karpCase struct {
	name string
	run  func(f *karpFixture) error
}

func karpenterCases() []karpCase {
	return []karpCase{
		{"karpenter/not-found", karpNotFound},
		{"karpenter/patch-nodepool", karpPatchNodePool},
		{"karpenter/drift-by-nodeclass", karpDrift},
		{"karpenter/patch-nodeclaim", karpPatchNodeClaim},
	}
}

type karpFixture struct {
	*fixture
	env KarpenterEnv
}

// nodeClass applies EC2NodeClass NAMESPACE that selects ami by id.
func (f *karpFixture) nodeClass(ami string) error {
	nc := &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: f.ns},
		Spec: awsv1.EC2NodeClassSpec{
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{ID: ami}},
			Role:                       "KarpenterNodeRole-" + f.ns,
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": f.ns}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": f.ns}}},
		},
	}
	return f.env.Apply(f.ctx, nc)
}

// nodePool applies NodePool NAMESPACE on the EC2NodeClass of the same name,
// on-demand amd64 only, with a budget of nodes "0" so that a drifted
// NodeClaim stays (Karpenter marks it, and may not disrupt it).
func (f *karpFixture) nodePool() error {
	np := &karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: f.ns},
		Spec: karpv1.NodePoolSpec{
			Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
				NodeClassRef: &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: f.ns},
				Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
					{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
					{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
				},
			}},
			Disruption: karpv1.Disruption{
				ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmpty,
				Budgets:             []karpv1.Budget{{Nodes: "0"}},
			},
		},
	}
	return f.env.Apply(f.ctx, np)
}

// provisioned makes the NodePool's first NodeClaim: a one-replica
// Deployment that only the pool's nodes can run, and a wait until a
// NodeClaim of the pool is Initialized.
func (f *karpFixture) provisioned() (*karpv1.NodeClaim, error) {
	if err := f.nodeClass(f.env.AMIs()[0]); err != nil {
		return nil, err
	}
	if err := f.nodePool(); err != nil {
		return nil, err
	}
	if err := f.deployment("web", 1, "", func(s *corev1.PodSpec) {
		s.NodeSelector = map[string]string{karpv1.NodePoolLabelKey: f.ns}
		s.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	}); err != nil {
		return nil, err
	}
	var claim *karpv1.NodeClaim
	err := f.env.Wait(f.ctx, 5*waitTimeout, func(ctx context.Context) (bool, error) {
		claims, err := f.env.ListNodeClaims(ctx)
		if err != nil {
			return false, err
		}
		for i := range claims {
			if claims[i].Labels[karpv1.NodePoolLabelKey] == f.ns && claims[i].StatusConditions().IsTrue(karpv1.ConditionTypeInitialized) {
				claim = &claims[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for NodePool %s's NodeClaim to be Initialized: %w", f.ns, err)
	}
	return claim, nil
}

// karpNotFound: a missing object of each kind is the 404 a client gets.
func karpNotFound(f *karpFixture) error {
	name := f.ns + "-missing"
	_, err := f.env.GetNodePool(f.ctx, name)
	if err := notFound("nodepools.karpenter.sh", name).check("get nodepool", err); err != nil {
		return err
	}
	_, err = f.env.GetEC2NodeClass(f.ctx, name)
	if err := notFound("ec2nodeclasses.karpenter.k8s.aws", name).check("get ec2nodeclass", err); err != nil {
		return err
	}
	_, err = f.env.GetNodeClaim(f.ctx, name)
	if err := notFound("nodeclaims.karpenter.sh", name).check("get nodeclaim", err); err != nil {
		return err
	}
	_, err = f.env.PatchNodePool(f.ctx, name, types.MergePatchType, []byte(`{}`))
	return notFound("nodepools.karpenter.sh", name).check("patch nodepool", err)
}

// karpPatchNodePool: a merge patch and a JSON patch change the stored
// NodePool; a strategic merge patch is refused with 415; a budget the CRD
// refuses is a 422 that leaves the NodePool as it was.
func karpPatchNodePool(f *karpFixture) error {
	if err := f.nodeClass(f.env.AMIs()[0]); err != nil {
		return err
	}
	if err := f.nodePool(); err != nil {
		return err
	}
	pools, err := f.env.ListNodePools(f.ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(names(pools), f.ns) {
		return mismatchf("list nodepools: %v does not include %s", names(pools), f.ns)
	}
	np, err := f.env.PatchNodePool(f.ctx, f.ns, types.MergePatchType, []byte(`{"spec":{"disruption":{"budgets":[{"nodes":"10%"}]}}}`))
	if err != nil {
		return mismatchf("merge patch of budgets: %v", err)
	}
	if got := np.Spec.Disruption.Budgets; len(got) != 1 || got[0].Nodes != "10%" {
		return mismatchf("merge patch of budgets: stored %+v, want one budget of 10%%", got)
	}
	np, err = f.env.PatchNodePool(f.ctx, f.ns, types.JSONPatchType, []byte(`[{"op":"add","path":"/spec/weight","value":7}]`))
	if err != nil {
		return mismatchf("JSON patch of weight: %v", err)
	}
	if np.Spec.Weight == nil || *np.Spec.Weight != 7 {
		return mismatchf("JSON patch of weight: stored %v, want 7", np.Spec.Weight)
	}
	_, err = f.env.PatchNodePool(f.ctx, f.ns, types.StrategicMergePatchType, []byte(`{"spec":{"weight":8}}`))
	if err := (wantStatus{Code: 415, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"}).check("strategic merge patch", err); err != nil {
		return err
	}
	_, err = f.env.PatchNodePool(f.ctx, f.ns, types.MergePatchType, []byte(`{"spec":{"disruption":{"budgets":[{"nodes":"ten"}]}}}`))
	if !apierrors.IsInvalid(err) {
		return mismatchf("merge patch of an invalid budget: want 422 Invalid, got %v", err)
	}
	got, err := f.env.GetNodePool(f.ctx, f.ns)
	if err != nil {
		return err
	}
	if b := got.Spec.Disruption.Budgets; len(b) != 1 || b[0].Nodes != "10%" || got.Spec.Weight == nil || *got.Spec.Weight != 7 {
		return mismatchf("after a refused patch: budgets %+v weight %v, want 10%% and 7 unchanged", b, got.Spec.Weight)
	}
	return nil
}

// karpDrift: a NodeClaim carries the hash annotations Karpenter stamps at
// launch; patching its EC2NodeClass to another AMI marks it Drifted, and
// the EC2NodeClass's status.amis follows the new selector.
func karpDrift(f *karpFixture) error {
	claim, err := f.provisioned()
	if err != nil {
		return err
	}
	for _, key := range []string{karpv1.NodePoolHashAnnotationKey, karpv1.NodePoolHashVersionAnnotationKey, awsv1.AnnotationEC2NodeClassHash, awsv1.AnnotationEC2NodeClassHashVersion} {
		if claim.Annotations[key] == "" {
			return mismatchf("NodeClaim %s has no %s annotation (annotations %v)", claim.Name, key, claim.Annotations)
		}
	}
	if claim.Status.ImageID != f.env.AMIs()[0] || claim.Status.NodeName == "" || claim.Status.ProviderID == "" {
		return mismatchf("NodeClaim %s: status imageID %q nodeName %q providerID %q, want image %s, a node and a provider id", claim.Name, claim.Status.ImageID, claim.Status.NodeName, claim.Status.ProviderID, f.env.AMIs()[0])
	}
	if claim.StatusConditions().Get(karpv1.ConditionTypeDrifted).IsTrue() {
		return mismatchf("NodeClaim %s is Drifted before any change", claim.Name)
	}
	next := f.env.AMIs()[1]
	nc, err := f.env.PatchEC2NodeClass(f.ctx, f.ns, types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"amiSelectorTerms":[{"id":%q}]}}`, next)))
	if err != nil {
		return mismatchf("patch ec2nodeclass amiSelectorTerms: %v", err)
	}
	if got := nc.Spec.AMISelectorTerms; len(got) != 1 || got[0].ID != next {
		return mismatchf("patched amiSelectorTerms %+v, want id %s", got, next)
	}
	err = f.env.Wait(f.ctx, 5*waitTimeout, func(ctx context.Context) (bool, error) {
		nc, err := f.env.GetEC2NodeClass(ctx, f.ns)
		if err != nil {
			return false, err
		}
		c, err := f.env.GetNodeClaim(ctx, claim.Name)
		if err != nil {
			return false, err
		}
		return len(nc.Status.AMIs) == 1 && nc.Status.AMIs[0].ID == next && c.StatusConditions().Get(karpv1.ConditionTypeDrifted).IsTrue(), nil
	})
	if err != nil {
		return mismatchf("NodeClaim %s not Drifted with status.amis = [%s]: %v", claim.Name, next, err)
	}
	return nil
}

// karpPatchNodeClaim: a NodeClaim's annotations can be patched; its spec is
// immutable.
func karpPatchNodeClaim(f *karpFixture) error {
	claim, err := f.provisioned()
	if err != nil {
		return err
	}
	got, err := f.env.PatchNodeClaim(f.ctx, claim.Name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"example.com/owner":"ladder"}}}`))
	if err != nil {
		return mismatchf("patch nodeclaim annotations: %v", err)
	}
	if got.Annotations["example.com/owner"] != "ladder" || got.Annotations[karpv1.NodePoolHashAnnotationKey] != claim.Annotations[karpv1.NodePoolHashAnnotationKey] {
		return mismatchf("patched annotations %v, want example.com/owner=ladder beside the hash annotations", got.Annotations)
	}
	again, err := f.env.GetNodeClaim(f.ctx, claim.Name)
	if err != nil {
		return err
	}
	if again.Annotations["example.com/owner"] != "ladder" {
		return mismatchf("get after patch: annotations %v lost example.com/owner", again.Annotations)
	}
	_, err = f.env.PatchNodeClaim(f.ctx, claim.Name, types.MergePatchType, []byte(`{"spec":{"expireAfter":"1h"}}`))
	if !apierrors.IsInvalid(err) {
		return mismatchf("patch of a NodeClaim's spec: want 422 Invalid (spec is immutable), got %v", err)
	}
	return nil
}
