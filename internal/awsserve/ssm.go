package awsserve

import (
	"net/http"

	"github.com/ladder-eks/ladder/internal/awsport"
)

// NewSSM serves SSM's GetParameter and GetParameters over api in
// awsJson1_1 (aws-apis.md §5): the EKS-optimized AMI parameters, a missing
// one ParameterNotFound from GetParameter and an InvalidParameters entry
// from GetParameters.
func NewSSM(api awsport.Parameters) http.Handler {
	m := newAWSJSONMux("AmazonSSM")
	awsJSONRoute(m, "GetParameter", api.GetParameter)
	awsJSONRoute(m, "GetParameters", api.GetParameters)
	return m
}
