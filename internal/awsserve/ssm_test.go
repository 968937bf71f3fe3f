package awsserve_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/conformance"
	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/awsserve"
)

// amiEnv is the AMI suite's account with SSM over the wire: GetParameter
// and GetParameters through aws-sdk-go-v2's SSM client against the server
// in front of the catalog. DescribeImages, EC2's, is served by the EC2
// handler; here it is the twin's directly.
type amiEnv struct {
	images awsport.Images
	params awsport.Parameters
}

func (e amiEnv) Images() awsport.Images         { return e.images }
func (e amiEnv) Parameters() awsport.Parameters { return e.params }
func (amiEnv) Minor() string                    { return "1.31" }

// TestAMIConformanceOverTheWire runs the AMI suite, whose SSM cases —
// the recommended parameter, ParameterNotFound, GetParameters'
// InvalidParameters — cross awsJson1_1.
func TestAMIConformanceOverTheWire(t *testing.T) {
	amis := twinaws.NewAMIs(func() time.Time { return t0 })
	srv := serve(t, map[string]http.Handler{awsserve.ServiceSSM: awsserve.NewSSM(amis)}, nil)
	conformance.RunAMI(t, amiEnv{images: amis, params: ssmClient(srv.URL, staticCredentials(accessKey, secretKey))})
}
