package scenario

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ladder-eks/ladder/internal/manifest"
)

const testScenario = `apiVersion: ladder.dev/v1alpha1
kind: Scenario
metadata:
  name: minimal
spec:
  start: "2026-03-30T10:00:00Z"
  timeLimit: 1h
  cluster:
    name: test
    version: "1.30"
    region: us-west-2
    zones: [us-west-2a, us-west-2b]
  nodeGroups:
    - name: default
      type: karpenter
      karpenter:
        nodePool: default
        nodes:
          - {instanceType: m5.large, zone: us-west-2a, capacityType: on-demand}
  manifests:
    - file: manifests/cluster.yaml
  actions:
    - at: 1m
      scale: {kind: Deployment, namespace: app, name: web, replicas: 3}
    - wait: {settled: true}
    - upgradeControlPlane: {version: "1.31"}
`

const testManifests = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
  disruption:
    consolidateAfter: 30s
    budgets:
      - {nodes: "0", schedule: "0 22 * * *", duration: 2h}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-test
  amiFamily: AL2023
  amiSelectorTerms:
    - id: ami-0f676a166352f02ab
---
apiVersion: v1
kind: Namespace
metadata:
  name: app
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: app
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - {name: web, image: "nginx:1.27", resources: {requests: {cpu: 100m}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: app
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: app
spec:
  selector: {app: web}
  ports: [{port: 80}]
`

// parseTest parses the test scenario with replacements applied, each
// "old" occurring once in the scenario or the manifests.
func parseTest(t *testing.T, replace ...string) (*Scenario, error) {
	t.Helper()
	sc, mf := testScenario, testManifests
	for i := 0; i+1 < len(replace); i += 2 {
		old, new := replace[i], replace[i+1]
		switch {
		case strings.Count(sc, old) == 1:
			sc = strings.Replace(sc, old, new, 1)
		case strings.Count(mf, old) == 1:
			mf = strings.Replace(mf, old, new, 1)
		default:
			t.Fatalf("%q does not occur exactly once in the fixture", old)
		}
	}
	dir := fstest.MapFS{"manifests/cluster.yaml": {Data: []byte(mf)}}
	return Parse("/virtual/scenario.yaml", []byte(sc), dir)
}

// joined returns the errors errors.Join combined, flattened.
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range u.Unwrap() {
			out = append(out, joined(e)...)
		}
		return out
	}
	return []error{err}
}

func TestValidateTestScenario(t *testing.T) {
	sc, err := parseTest(t)
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := sc.Validate()
	if err != nil || len(warnings) > 0 {
		t.Fatalf("warnings %q, error: %v", warnings, err)
	}
	if len(sc.Objects) != 5 || sc.Ignored["Service"] != 1 {
		t.Errorf("%d objects, ignored %v; want 5 and one Service", len(sc.Objects), sc.Ignored)
	}
}

func TestValidateBuiltins(t *testing.T) {
	for _, name := range Builtins() {
		sc, err := LoadBuiltin(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if warnings, err := sc.Validate(); err != nil || len(warnings) > 0 {
			t.Errorf("%s: warnings %q, error: %v", name, warnings, err)
		}
	}
}

// Problems in manifests are *manifest.Error values that point at the
// object's file and the field's line, with a fix; problems in the scenario
// document name its file, line and field. Every one is one line.
func TestValidateErrorsPointAtFieldAndLine(t *testing.T) {
	sc, err := parseTest(t,
		`schedule: "0 22 * * *"`, `schedule: "0 9 * *"`,
		"name: default}\n      requirements", "name: missing}\n      requirements",
		"  minAvailable: 1\n", "  minAvailable: 1\n  maxUnavailable: 1\n",
		"zone: us-west-2a", "zone: us-west-2c",
		`upgradeControlPlane: {version: "1.31"}`, `upgradeControlPlane: {version: "1.32"}`,
	)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.Validate()
	errs := joined(err)
	want := map[string]string{ // field → "file:line" it must point at
		"spec.disruption.budgets[0].schedule":         "/virtual/manifests/cluster.yaml:13",
		"spec.template.spec.nodeClassRef.name":        "/virtual/manifests/cluster.yaml:8",
		"spec":                                        "/virtual/manifests/cluster.yaml:51",
		"spec.nodeGroups[0].karpenter.nodes[0].zone":  "/virtual/scenario.yaml:19",
		"spec.actions[2].upgradeControlPlane.version": "/virtual/scenario.yaml:26",
	}
	if len(errs) != len(want) {
		t.Errorf("%d errors, want %d:\n%v", len(errs), len(want), err)
	}
	for _, e := range errs {
		if strings.Contains(e.Error(), "\n") {
			t.Errorf("error spans lines: %q", e)
		}
		var me *manifest.Error
		if errors.As(e, &me) {
			loc, ok := want[me.Field]
			if !ok {
				t.Errorf("unexpected manifest error %q", e)
				continue
			}
			if me.Source.String() != loc || me.Object == "" || (me.Fix == "" && me.Field != "spec") {
				t.Errorf("%q: at %s (want %s), object %q, fix %q", e, me.Source, loc, me.Object, me.Fix)
			}
			delete(want, me.Field)
			continue
		}
		for field, loc := range want {
			if strings.HasPrefix(e.Error(), loc+": "+field+": ") {
				delete(want, field)
			}
		}
	}
	for field, loc := range want {
		t.Errorf("no error names %s at %s; got:\n%v", field, loc, err)
	}
}

// Degenerate documents give errors, never a panic.
func TestValidateDegenerateScenarios(t *testing.T) {
	docs := []string{
		"",
		"{}",
		"apiVersion: ladder.dev/v1alpha1\nkind: Scenario\n",
		"spec: {}",
		"spec: {cluster: {}}",
		"spec: {cluster: {version: \"\"}}",
		"spec: {cluster: {version: v2}}",
		"spec: {nodeGroups: [{}]}",
		"spec: {nodeGroups: [{type: karpenter}]}",
		"spec: {nodeGroups: [{type: managed, managed: {}}]}",
		"spec: {nodeGroups: [{type: self-managed, selfManaged: {}}]}",
		"spec: {nodeGroups: [{type: fargate, fargate: {}}]}",
		"spec: {nodeGroups: [{type: karpenter, karpenter: {nodes: [{}]}}]}",
		"spec: {nodeGroups: [{type: karpenter, managed: {}}]}",
		"spec: {manifests: [{}]}",
		"spec: {manifests: [{inline: \"\"}]}",
		"spec: {manifests: [{inline: \"kind: Deployment\"}]}",
		"spec: {manifests: [{inline: \"apiVersion: apps/v1\\nkind: Deployment\\nmetadata: {name: x}\"}]}",
		"spec: {manifests: [{inline: \"apiVersion: karpenter.sh/v1\\nkind: NodePool\\nmetadata: {name: x}\"}]}",
		"spec: {manifests: [{inline: \"apiVersion: karpenter.k8s.aws/v1\\nkind: EC2NodeClass\\nmetadata: {name: x}\"}]}",
		"spec: {manifests: [{inline: \"apiVersion: policy/v1\\nkind: PodDisruptionBudget\\nmetadata: {name: x}\"}]}",
		"spec: {manifests: [{inline: \"apiVersion: v1\\nkind: Pod\\nmetadata: {name: x}\"}]}",
		"spec: {manifests: [{file: ../../etc/passwd}]}",
		"spec: {actions: [{}]}",
		"spec: {actions: [{scale: {}}]}",
		"spec: {actions: [{patch: {}}]}",
		"spec: {actions: [{apply: {}}]}",
		"spec: {actions: [{upgradeControlPlane: {}}]}",
		"spec: {actions: [{wait: {}}]}",
		"spec: {instanceTypes: [{}], amis: [{}]}",
		"spec: {timeLimit: 0s}",
		"- a\n- list",
		"just a string",
	}
	for i, doc := range docs {
		t.Run(fmt.Sprintf("%d", i), func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic on %q: %v", doc, r)
				}
			}()
			sc, err := Parse("/virtual/scenario.yaml", []byte(doc), fstest.MapFS{})
			if err == nil {
				_, err = sc.Validate()
			}
			if err == nil {
				t.Fatalf("%q: no error", doc)
			}
			for _, l := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(l, "/virtual/") {
					t.Errorf("%q: error line does not name the file: %q", doc, l)
				}
			}
		})
	}
}

// Generated scenarios validate cleanly, whatever the options.
func TestGenerateOptionsValidate(t *testing.T) {
	for _, o := range []GenerateOptions{
		{Nodes: 1, PodsPerNode: 1, Seed: 1},
		{Nodes: 2, PodsPerNode: 7, Seed: 2, Version: "1.26"},
		{Nodes: 5, PodsPerNode: 30, Seed: 3, InstanceType: "m5.2xlarge", Budget: "3"},
		{Nodes: 8, PodsPerNode: 10, Seed: 4, Namespaces: 5, NoDrift: true},
		{Nodes: 100, PodsPerNode: 25, Seed: 5, Version: "1.35", Budget: "100%"},
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			data, err := Generate(o)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := Parse("gen.yaml", data, nil)
			if err != nil {
				t.Fatal(err)
			}
			warnings, err := sc.Validate()
			if err != nil || len(warnings) > 0 {
				t.Fatalf("warnings %q, error: %v", warnings, err)
			}
			again, _ := Generate(o)
			if string(again) != string(data) {
				t.Error("Generate is not deterministic")
			}
		})
	}
}

// TestValidateAMIFamilyRule: the EC2NodeClass CRD refuses a class whose
// amiSelectorTerms hold no alias and that sets no amiFamily
// (karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go XValidation).
func TestValidateAMIFamilyRule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace []string
		want    string // "" for valid
	}{
		{"id with amiFamily", nil, ""},
		{"id without amiFamily", []string{"  amiFamily: AL2023\n", ""}, "cluster.yaml:19: EC2NodeClass default: spec.amiFamily: must specify amiFamily if amiSelectorTerms does not contain an alias"},
		{"alias without amiFamily", []string{"  amiFamily: AL2023\n", "", "- id: ami-0f676a166352f02ab", "- alias: al2023@latest"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := parseTest(t, tc.replace...)
			if err == nil {
				_, err = sc.Validate()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestValidateZoneAddresses: the nodes a zone starts with must fit the
// twin's subnet of that zone (subnet.AddressesPerZone, 4,016), counting a
// group's nodes round-robin over its zones as the twin places them.
func TestValidateZoneAddresses(t *testing.T) {
	const karpenterNode = "          - {instanceType: m5.large, zone: us-west-2a, capacityType: on-demand}\n"
	managed := func(desired int, zones string) string {
		return fmt.Sprintf("    - name: big\n      type: managed\n      managed: {instanceTypes: [m5.large], desired: %d, max: %d, zones: %s}\n  manifests:\n", desired, desired, zones)
	}
	for _, tc := range []struct {
		name    string
		replace []string
		want    string // "" for no error about addresses
	}{
		{"one zone full", []string{"  manifests:\n", managed(4015, "[us-west-2a]")}, ""},
		{"one zone over", []string{"  manifests:\n", managed(4016, "[us-west-2a]")},
			"scenario.yaml:13: spec.nodeGroups: 4017 nodes start in zone us-west-2a, more than the 4016 addresses of the zone's subnet in the twin"},
		{"spread over two zones", []string{"  manifests:\n", managed(4900, "[us-west-2a, us-west-2b]")}, ""},
		{"karpenter nodes", []string{karpenterNode, strings.Replace(karpenterNode, "on-demand}", "on-demand, count: 4500}", 1)},
			"4500 nodes start in zone us-west-2a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateFixture(t, tc.replace...)
			switch {
			case tc.want == "" && err != nil && strings.Contains(err.Error(), "addresses"):
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// validateFixture validates the test fixture with replacements (parseTest).
func validateFixture(t *testing.T, replace ...string) error {
	t.Helper()
	sc, err := parseTest(t, replace...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.Validate()
	return err
}
