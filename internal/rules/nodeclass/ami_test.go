package nodeclass_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/rules/nodeclass"
)

// What an EC2NodeClass's amiSelectorTerms resolve to, by architecture, or
// the field the AMI reconciler refuses, and whether a NodePool of the class
// can launch anything.
func TestResolveNodeClassAMIs(t *testing.T) {
	now := time.Date(2026, 3, 30, 10, 0, 0, 0, time.UTC)
	custom := catalog.AMI{ID: "ami-0123456789abcdef0", Name: "team-golden-arm64-1.30", Family: "custom", Arch: catalog.ArchARM64, KubernetesMinor: "1.30"}
	for _, c := range []struct {
		name  string
		terms []awsv1.AMISelectorTerm
		// Either the architectures the AMIs serve, and whether an
		// amd64-only NodePool can launch, or the refused field.
		arches      []string
		amd64Launch bool
		field       string
	}{
		{name: "alias: both architectures", terms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}, arches: []string{"amd64", "arm64"}, amd64Launch: true},
		{name: "id of an x86_64 image", terms: []awsv1.AMISelectorTerm{{ID: "ami-0f676a166352f02ab"}}, arches: []string{"amd64"}, amd64Launch: true},
		{name: "id of an arm64 image", terms: []awsv1.AMISelectorTerm{{ID: "ami-24fd2cff8dae19a97"}}, arches: []string{"arm64"}},
		{name: "name of the scenario's own image", terms: []awsv1.AMISelectorTerm{{Name: "team-golden-*"}}, arches: []string{"arm64"}},
		{name: "name of arm64 images", terms: []awsv1.AMISelectorTerm{{Name: "amazon-eks-node-al2023-arm64-standard-1.30-*"}}, arches: []string{"arm64"}},
		{name: "alias of no release", terms: []awsv1.AMISelectorTerm{{Alias: "al2023@v20991231"}}, field: "spec.amiSelectorTerms[0].alias"},
		{name: "id not in the catalog", terms: []awsv1.AMISelectorTerm{{ID: "ami-00000000000000000"}}, field: "spec.amiSelectorTerms[0].id"},
		{name: "name matching nothing", terms: []awsv1.AMISelectorTerm{{ID: "ami-0f676a166352f02ab"}, {Name: "no-such-*"}}, field: "spec.amiSelectorTerms[1].name"},
		{name: "tags only", terms: []awsv1.AMISelectorTerm{{Tags: map[string]string{"team": "a"}}}, field: "spec.amiSelectorTerms[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: c.terms}}
			amis, err := nodeclass.ResolveNodeClassAMIs(nc, "1.30", []catalog.AMI{custom}, now)
			if c.field != "" {
				var amiErr *nodeclass.AMIError
				if !errors.As(err, &amiErr) || amiErr.Field != c.field {
					t.Fatalf("got %v, %v; want a refusal of %s", amis, err, c.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, arch := range []string{"amd64", "arm64"} {
				_, has := nodeclass.NewestAMI(amis, arch)
				if want := slices.Contains(c.arches, arch); has != want {
					t.Errorf("an AMI for %s: %v, want %v", arch, has, want)
				}
			}
			np := &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
			np.Spec.Template.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"amd64"}}}
			err = nodeclass.CheckNodePoolAMIs(np, nc, amis, catalog.InstanceTypes(), []string{"us-west-2a"})
			if launches := err == nil; launches != c.amd64Launch {
				t.Fatalf("an amd64 NodePool launches: %v (%v), want %v", launches, err, c.amd64Launch)
			}
		})
	}
}
