package awsport_test

import (
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/ladder-eks/ladder/internal/awsport"
)

// The SDK's clients are the ports with no adapter: a method whose signature
// drifts from the SDK's fails this file's build.
var (
	_ awsport.EKS             = (*eks.Client)(nil)
	_ awsport.AutoScaling     = (*autoscaling.Client)(nil)
	_ awsport.Images          = (*ec2.Client)(nil)
	_ awsport.LaunchTemplates = (*ec2.Client)(nil)
	_ awsport.Parameters      = (*ssm.Client)(nil)
)
