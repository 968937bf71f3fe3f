package executor

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"
)

// TestIAMPolicyCoversThePorts: the IAM policy the docs give `ladder
// upgrade` (deploy/ladder-upgrade-iam-policy.json) allows every operation
// the executor's AWS ports declare — a new call without its permission
// fails here, not on a customer's cluster.
func TestIAMPolicyCoversThePorts(t *testing.T) {
	data, err := os.ReadFile("../../deploy/ladder-upgrade-iam-policy.json")
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Statement []struct {
			Effect string
			Action any
		}
	}
	if err := json.Unmarshal(data, &policy); err != nil {
		t.Fatal(err)
	}
	var allowed []string
	for _, s := range policy.Statement {
		if s.Effect != "Allow" {
			continue
		}
		switch a := s.Action.(type) {
		case string:
			allowed = append(allowed, a)
		case []any:
			for _, x := range a {
				allowed = append(allowed, x.(string))
			}
		}
	}
	for _, c := range []struct {
		prefix string
		port   reflect.Type
	}{
		{"eks", reflect.TypeOf((*EKS)(nil)).Elem()},
		{"autoscaling", reflect.TypeOf((*AutoScalingAPI)(nil)).Elem()},
		{"ec2", reflect.TypeOf((*LaunchTemplateAPI)(nil)).Elem()},
		{"ec2", reflect.TypeOf((*ImageAPI)(nil)).Elem()},
		{"ssm", reflect.TypeOf((*ParameterAPI)(nil)).Elem()},
	} {
		prefix, port := c.prefix, c.port
		for i := range port.NumMethod() {
			if action := prefix + ":" + port.Method(i).Name; !slices.Contains(allowed, action) {
				t.Errorf("the policy does not allow %s", action)
			}
		}
	}
}
