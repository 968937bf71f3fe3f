package awsserve

import (
	"strings"
	"testing"
)

func TestPolicyAllows(t *testing.T) {
	p, err := ParsePolicy([]byte(`{
  "Version": "2012-10-17",
  "Statement": [
    {"Effect": "Allow", "Action": ["eks:Describe*", "eks:List*", "ec2:DescribeImages", "ssm:GetParamete?"], "Resource": "*"},
    {"Effect": "Allow", "Action": "autoscaling:*", "Resource": "*"},
    {"Effect": "Deny", "Action": "autoscaling:StartInstanceRefresh", "Resource": "*"}
  ]
}`))
	if err != nil {
		t.Fatal(err)
	}
	for action, want := range map[string]bool{
		"eks:DescribeCluster":                true,
		"eks:describecluster":                true, // IAM matches actions case-insensitively
		"eks:ListNodegroups":                 true,
		"eks:UpdateClusterVersion":           false, // implicitly denied
		"ec2:DescribeImages":                 true,
		"ec2:DescribeLaunchTemplates":        false,
		"ssm:GetParameter":                   true,
		"ssm:GetParameters":                  false, // ? is one character
		"autoscaling:DescribeLifecycleHooks": true,
		"autoscaling:StartInstanceRefresh":   false, // an explicit Deny wins over autoscaling:*
		"sts:GetCallerIdentity":              false,
	} {
		if got := p.Allows(action); got != want {
			t.Errorf("Allows(%s) = %t, want %t", action, got, want)
		}
	}
}

func TestParsePolicyRefusesWhatItCannotEvaluate(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{`, "not an IAM policy document"},
		{`{"Version": "2008-10-17", "Statement": []}`, `Version "2008-10-17"`},
		{`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}]}`, "Statement[0].NotAction: not evaluated"},
		{`{"Version": "2012-10-17", "Statement": [{"Effect": "Permit", "Action": "eks:*"}]}`, `Statement[0].Effect: "Permit"`},
		{`{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "DescribeCluster"}}`, `Statement[0].Action "DescribeCluster": want SERVICE:OPERATION`},
		{`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": []}]}`, "Statement[0].Action: want an action"},
	} {
		if _, err := ParsePolicy([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePolicy(%s): %v, want an error containing %q", tc.doc, err, tc.want)
		}
	}
}
