package awsserve

import (
	"context"
	"errors"
	"net/http"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/traits"

	"github.com/ladder-eks/ladder/internal/awsport"
)

// asgNamespace is Auto Scaling's XML namespace (aws-apis.md §1.1).
const asgNamespace = "http://autoscaling.amazonaws.com/doc/2011-01-01/"

// asgOperation answers one Auto Scaling action: the form decoded into the
// SDK's input type, the port called, the output written as the body of
// <ActionResult>.
type asgOperation func(ctx context.Context, form *queryForm, result string) ([]byte, error)

// NewAutoScaling serves Auto Scaling's awsQuery protocol (aws-apis.md §1.3,
// §3) over p: every awsport.AutoScaling operation, its input read and its
// output written through the SDK's own schemas (query_schema.go), errors
// in awsQuery's <ErrorResponse> so that the SDKs raise the modelled faults
// by their codes (§3.5). The handler calls p from the request's goroutine:
// a port that is not safe for concurrent use needs its requests
// serialized by the caller.
func NewAutoScaling(p awsport.AutoScaling) http.Handler {
	ops := map[string]asgOperation{
		"DescribeAutoScalingGroups": asgServe(p.DescribeAutoScalingGroups),
		"StartInstanceRefresh":      asgServe(p.StartInstanceRefresh),
		"DescribeInstanceRefreshes": asgServe(p.DescribeInstanceRefreshes),
		"DescribeLifecycleHooks":    asgServe(p.DescribeLifecycleHooks),
		"PutLifecycleHook":          asgServe(p.PutLifecycleHook),
		"CompleteLifecycleAction":   asgServe(p.CompleteLifecycleAction),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := queryRequestID()
		form, err := parseQueryForm(r)
		if err != nil {
			writeASGError(w, id, &smithy.GenericAPIError{Code: "MalformedQueryString", Message: err.Error(), Fault: smithy.FaultClient})
			return
		}
		action := form.action()
		op, ok := ops[action]
		if !ok {
			writeASGError(w, id, unknownAction(action))
			return
		}
		body, err := op(r.Context(), form, action+"Result")
		if err != nil {
			writeASGError(w, id, err)
			return
		}
		var x queryXML
		x.b.WriteString(`<` + action + `Response xmlns="` + asgNamespace + `">`)
		x.b.Write(body)
		x.start("ResponseMetadata")
		x.text("RequestId", id)
		x.end("ResponseMetadata")
		x.end(action + "Response")
		writeQueryResponse(w, http.StatusOK, id, x.b.Bytes())
	})
}

// unknownAction is both query services' answer to an Action they do not
// have, or that the lab does not serve.
func unknownAction(action string) error {
	if action == "" {
		return &smithy.GenericAPIError{Code: "MissingAction", Message: "The request must contain the parameter Action.", Fault: smithy.FaultClient}
	}
	return &smithy.GenericAPIError{Code: "InvalidAction", Message: "The action " + action + " is not valid for this web service.", Fault: smithy.FaultClient}
}

// asgServe makes an operation of a port method: I is the SDK's input
// type, which reads itself from the form, O its output, which writes
// itself.
func asgServe[I any, PI interface {
	*I
	smithy.Deserializable
}, O smithy.Serializable](call func(context.Context, PI, ...func(*autoscaling.Options)) (O, error)) asgOperation {
	return func(ctx context.Context, form *queryForm, result string) ([]byte, error) {
		in := PI(new(I))
		if err := in.Deserialize(newQueryShapeDecoder(form)); err != nil {
			return nil, asgValidationError(err)
		}
		out, err := call(ctx, in)
		if err != nil {
			return nil, err
		}
		enc := newQueryShapeEncoder(result)
		if v := reflect.ValueOf(out); v.IsNil() {
			// An operation with no output still has its Result element.
			enc.w.start(result)
			enc.w.end(result)
			return enc.Bytes(), nil
		}
		out.Serialize(enc)
		return enc.Bytes(), enc.err
	}
}

func asgValidationError(err error) error {
	return &smithy.GenericAPIError{Code: "ValidationError", Message: err.Error(), Fault: smithy.FaultClient}
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
	if fault == smithy.FaultServer {
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// writeASGError writes err as awsQuery's error response (aws-apis.md
// §1.3): <Code> is the model's error code (InstanceRefreshInProgress, not
// the shape name InstanceRefreshInProgressFault), <Type> Sender for a 4xx
// and Receiver for a 5xx. An error that is not an API error is the
// service's InternalFailure.
func writeASGError(w http.ResponseWriter, id string, err error) {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		ae = &smithy.GenericAPIError{Code: "InternalFailure", Message: err.Error(), Fault: smithy.FaultServer}
	}
	status := asgStatus(ae.ErrorCode(), ae.ErrorFault())
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
	writeQueryResponse(w, status, id, x.b.Bytes())
}
