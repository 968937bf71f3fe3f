package awsserve

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/traits"
)

// jsonProtocol is how the two JSON protocols answer: restJson1 (EKS,
// aws-apis.md §1.2) and awsJson1_1 (SSM, §1.5) differ only in the content
// type, in whether a member's jsonName trait renames it, and in whether
// an error names its type in the body (__type) as well as in
// X-Amzn-ErrorType — botocore reads awsJson's only from the body.
type jsonProtocol struct {
	useJSONName bool
	contentType string
	typeInBody  bool
	// serverError is the code of a failure that is no API error.
	serverError string
}

var (
	restJSON1 = jsonProtocol{useJSONName: true, contentType: "application/json", serverError: "ServerException"}
	awsJSON11 = jsonProtocol{contentType: "application/x-amz-json-1.1", typeInBody: true, serverError: "InternalServerError"}
)

// answer writes a port method's result: out with status, or err.
func (p jsonProtocol) answer(w http.ResponseWriter, status int, out smithy.Serializable, err error) {
	if err != nil {
		p.writeError(w, err)
		return
	}
	s := newShapeJSONWriter(p.useJSONName)
	out.Serialize(s)
	body, err := s.marshal()
	if err != nil {
		p.writeErrorCode(w, http.StatusInternalServerError, p.serverError, err.Error())
		return
	}
	w.Header().Set("Content-Type", p.contentType)
	w.WriteHeader(status)
	w.Write(body)
}

// writeError answers err: a modelled exception with its httpError status
// (400 for a client fault, 500 for a server one without it) and its
// members — message, clusterName, ... — as the body, which the SDK
// decodes back into the same typed error; any other API error with its
// code and message; anything else as the protocol's server error.
func (p jsonProtocol) writeError(w http.ResponseWriter, err error) {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		p.writeErrorCode(w, http.StatusInternalServerError, p.serverError, err.Error())
		return
	}
	status := http.StatusBadRequest
	if ae.ErrorFault() == smithy.FaultServer {
		status = http.StatusInternalServerError
	}
	members := map[string]any{"message": ae.ErrorMessage()}
	var shape smithy.Serializable
	if errors.As(err, &shape) {
		s := newShapeJSONWriter(p.useJSONName)
		shape.Serialize(s)
		if he, ok := smithy.SchemaTrait[*traits.HTTPError](s.root); ok {
			status = he.Code
		}
		if m, ok := s.top.(map[string]any); ok && s.err == nil {
			members = m
		}
	}
	p.writeErrorBody(w, status, ae.ErrorCode(), members)
}

// writeErrorCode answers an error that has no modelled shape.
func (p jsonProtocol) writeErrorCode(w http.ResponseWriter, status int, code, message string) {
	p.writeErrorBody(w, status, code, map[string]any{"message": message})
}

func (p jsonProtocol) writeErrorBody(w http.ResponseWriter, status int, code string, members map[string]any) {
	if p.typeInBody {
		members["__type"] = code
	}
	body, _ := json.Marshal(members)
	w.Header().Set("Content-Type", p.contentType)
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	w.Write(body)
}
