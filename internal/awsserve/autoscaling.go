package awsserve

import (
	"context"
	"net/http"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/traits"

	"github.com/ladder-eks/ladder/internal/awsport"
)

// asgNamespace is Auto Scaling's XML namespace (aws-apis.md §1.1).
const asgNamespace = "http://autoscaling.amazonaws.com/doc/" + asgVersion + "/"

// asgVersion is Auto Scaling's API version, every request's Version.
const asgVersion = "2011-01-01"

// NewAutoScaling serves Auto Scaling's awsQuery protocol (aws-apis.md §1.3,
// §3) over p: every awsport.AutoScaling operation, its input read and its
// output written through the SDK's own schemas (query_schema.go), errors
// in awsQuery's <ErrorResponse> so that the SDKs raise the modelled faults
// by their codes (§3.5). The handler calls p from the request's goroutine
// (see queryService).
func NewAutoScaling(p awsport.AutoScaling) http.Handler {
	return &queryService{
		ops: map[string]queryOperation{
			"DescribeAutoScalingGroups":           asgServe(p.DescribeAutoScalingGroups),
			"StartInstanceRefresh":                asgServe(p.StartInstanceRefresh),
			"DescribeInstanceRefreshes":           asgServe(p.DescribeInstanceRefreshes),
			"DescribeLifecycleHooks":              asgServe(p.DescribeLifecycleHooks),
			"PutLifecycleHook":                    asgServe(p.PutLifecycleHook),
			"CompleteLifecycleAction":             asgServe(p.CompleteLifecycleAction),
			"UpdateAutoScalingGroup":              asgServe(p.UpdateAutoScalingGroup),
			"SetDesiredCapacity":                  asgServe(p.SetDesiredCapacity),
			"TerminateInstanceInAutoScalingGroup": asgServe(p.TerminateInstanceInAutoScalingGroup),
		},
		envelope:      asgEnvelope,
		errorBody:     asgErrorBody,
		status:        asgStatus,
		internalError: "InternalFailure",
		version:       asgVersion,
		wrongVersion:  asgWrongVersion,
		check: func(f *queryForm) error {
			if err := checkMemberIndexes(f); err != nil {
				return err
			}
			return checkASGConstraints(f)
		},
	}
}

// asgEnvelope is awsQuery's success response: <ActionResponse> in the
// service's namespace around the <ActionResult> the operation wrote, then
// the request id in <ResponseMetadata>.
func asgEnvelope(action, id string, result []byte) []byte {
	var x queryXML
	x.b.WriteString(`<` + action + `Response xmlns="` + asgNamespace + `">`)
	x.b.Write(result)
	x.start("ResponseMetadata")
	x.text("RequestId", id)
	x.end("ResponseMetadata")
	x.end(action + "Response")
	return x.b.Bytes()
}

// asgServe makes an operation of a port method: I is the SDK's input
// type, which reads itself from the form, O its output, which writes
// itself.
func asgServe[I any, PI interface {
	*I
	smithy.Deserializable
}, O smithy.Serializable](call func(context.Context, PI, ...func(*autoscaling.Options)) (O, error)) queryOperation {
	return func(ctx context.Context, form *queryForm, action string, body *queryXML) error {
		in := PI(new(I))
		if err := in.Deserialize(newQueryShapeDecoder(form)); err != nil {
			return &smithy.GenericAPIError{Code: "ValidationError", Message: err.Error(), Fault: smithy.FaultClient}
		}
		out, err := call(ctx, in)
		if err != nil {
			return err
		}
		result := action + "Result"
		if v := reflect.ValueOf(out); v.IsNil() {
			// An operation with no output still has its Result element.
			body.start(result)
			body.end(result)
			return nil
		}
		enc := newQueryShapeEncoder(result)
		out.Serialize(enc)
		body.b.Write(enc.Bytes())
		return enc.err
	}
}

// asgStatus is the HTTP status of an Auto Scaling error code: the
// modelled faults' from their awsQueryError trait (ResourceContention is
// 500, §3.5), otherwise 400 for the client's faults and 500 for the
// service's.
func asgStatus(code string, fault smithy.ErrorFault) int {
	for _, e := range autoscaling.TypeRegistry.Entries {
		if t, ok := smithy.SchemaTrait[*traits.AWSQueryError](e.Schema); ok && t.ErrorCode == code && t.StatusCode != 0 {
			return t.StatusCode
		}
	}
	return queryStatus(fault)
}

// asgErrorBody is awsQuery's error response (aws-apis.md §1.3): <Code>
// is the model's error code (InstanceRefreshInProgress, not the shape
// name InstanceRefreshInProgressFault), <Type> Sender for a 4xx and
// Receiver for a 5xx.
func asgErrorBody(ae smithy.APIError, status int, id string) []byte {
	kind := "Sender"
	if status >= 500 {
		kind = "Receiver"
	}
	var x queryXML
	x.b.WriteString(`<ErrorResponse xmlns="` + asgNamespace + `">`)
	x.start("Error")
	x.text("Type", kind)
	x.text("Code", ae.ErrorCode())
	x.text("Message", ae.ErrorMessage())
	x.end("Error")
	x.text("RequestId", id)
	x.end("ErrorResponse")
	return x.b.Bytes()
}
