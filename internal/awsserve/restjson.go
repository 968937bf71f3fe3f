package awsserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/traits"
)

// restJson1 (aws-apis.md §1.2): an operation is a method and a URI
// template, its input spread over path labels, query parameters and a JSON
// body, its output a JSON body with HTTP 200, its errors a status, an
// X-Amzn-ErrorType header and a JSON body of the exception's members.
//
// The server reads all of it from the SDK's own schemas
// (service/<svc>/schemas): the operation's http trait is the route, the
// input members' httpLabel and httpQuery traits say where each comes from,
// and the output's and errors' generated Serialize methods write the body
// (shapeJSONWriter) — so the wire is the SDK's by construction.

// restJSONMux is one restJson1 service: a route per operation, and
// UnknownOperationException for any other request.
type restJSONMux struct {
	mux *http.ServeMux
	// inputs are the served operations' input shapes and Go types.
	inputs []restJSONInput
	// ops names the operation of each route pattern.
	ops map[string]string
}

// restJSONInput is an operation's input: its shape, and the SDK type that
// restJSONDecode fills from it.
type restJSONInput struct {
	schema *smithy.Schema
	typ    reflect.Type
}

func newRestJSONMux() *restJSONMux {
	m := &restJSONMux{mux: http.NewServeMux(), ops: map[string]string{}}
	m.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		restJSON1.writeErrorCode(w, http.StatusNotFound, "UnknownOperationException",
			fmt.Sprintf("No operation is served at %s %s.", r.Method, r.URL.Path))
	})
	return m
}

func (m *restJSONMux) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.mux.ServeHTTP(w, r) }

// WriteError implements ErrorWriter.
func (m *restJSONMux) WriteError(w http.ResponseWriter, _ *http.Request, status int, code, message string) {
	restJSON1.writeErrorCode(w, status, code, message)
}

// restJSONRoute serves the operation op, whose input shape is input, with
// call — a port method, whose signature is the SDK client's.
func restJSONRoute[In any, Out smithy.Serializable, Opt any](m *restJSONMux, op, input *smithy.Schema,
	call func(context.Context, *In, ...Opt) (Out, error)) {
	h, ok := smithy.SchemaTrait[*traits.HTTP](op)
	if !ok {
		panic(fmt.Sprintf("awsserve: operation %s has no http trait", op.ID()))
	}
	path, _, _ := strings.Cut(h.URI, "?")
	m.inputs = append(m.inputs, restJSONInput{input, reflect.TypeFor[In]()})
	m.ops[h.Method+" "+path] = op.ID().Name
	m.mux.HandleFunc(h.Method+" "+path, func(w http.ResponseWriter, r *http.Request) {
		in := new(In)
		if err := restJSONDecode(r, input, in); err != nil {
			var dup *duplicateParamError
			if errors.As(err, &dup) {
				restJSON1.writeError(w, &ekstypes.InvalidParameterException{Message: aws.String(dup.Error())})
				return
			}
			restJSON1.writeErrorCode(w, http.StatusBadRequest, "SerializationException", err.Error())
			return
		}
		if err := validateEKSInput(in); err != nil {
			restJSON1.writeError(w, err)
			return
		}
		out, err := call(r.Context(), in)
		restJSON1.answer(w, h.Code, out, err)
	})
}

// restJSONDecode fills in, an SDK input type, from r: path labels, query
// parameters and the body's members, each where input's schema puts it.
//
// The values are gathered into one JSON object under the members' model
// names and decoded with encoding/json, whose case-insensitive field match
// takes a model name (clusterName) to its generated Go field
// (ClusterName); TestRestJSONInputsDecode holds that for every input
// served.
func restJSONDecode(r *http.Request, input *smithy.Schema, in any) error {
	fields := map[string]json.RawMessage{}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &fields); err != nil {
			return fmt.Errorf("the request body is not a JSON object: %v", err)
		}
	}
	query := r.URL.Query()
	for name, m := range input.Members() {
		if jn, ok := smithy.SchemaTrait[*traits.JSONName](m); ok && jn.Name != name {
			if v, ok := fields[jn.Name]; ok {
				delete(fields, jn.Name)
				fields[name] = v
			}
		}
		var raw []string
		if _, ok := smithy.SchemaTrait[*traits.HTTPLabel](m); ok {
			raw = []string{r.PathValue(name)}
		} else if q, ok := smithy.SchemaTrait[*traits.HTTPQuery](m); ok {
			raw = query[q.Name]
		} else if hh, ok := smithy.SchemaTrait[*traits.HTTPHeader](m); ok {
			raw = r.Header.Values(hh.Name)
		}
		if len(raw) == 0 {
			continue
		}
		if t := m.Type(); len(raw) > 1 && t != smithy.ShapeTypeList && t != smithy.ShapeTypeSet {
			return &duplicateParamError{name, len(raw)}
		}
		v, err := restJSONBound(m, raw)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		fields[name] = v
	}
	merged, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	return json.Unmarshal(merged, in)
}

// duplicateParamError is a query parameter or header of a single value
// given more than once (?nodegroupName=a&nodegroupName=b): refused, not
// read as its first value.
type duplicateParamError struct {
	name string
	n    int
}

func (e *duplicateParamError) Error() string {
	return fmt.Sprintf("%s is given %d times; give it once", e.name, e.n)
}

// restJSONBound is a label's, query parameter's or header's text as the
// JSON value of the member's type: a list repeats its key (?types=a&types=b).
func restJSONBound(m *smithy.Schema, raw []string) (json.RawMessage, error) {
	switch m.Type() {
	case smithy.ShapeTypeList, smithy.ShapeTypeSet:
		var items []json.RawMessage
		for _, s := range raw {
			v, err := restJSONScalar(m.ListMember(), s)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		return json.Marshal(items)
	}
	return restJSONScalar(m, raw[0])
}

func restJSONScalar(m *smithy.Schema, s string) (json.RawMessage, error) {
	switch m.Type() {
	case smithy.ShapeTypeBoolean:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", s)
		}
		return json.Marshal(b)
	case smithy.ShapeTypeByte, smithy.ShapeTypeShort, smithy.ShapeTypeInteger, smithy.ShapeTypeLong, smithy.ShapeTypeIntEnum:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return json.Marshal(n)
	case smithy.ShapeTypeFloat, smithy.ShapeTypeDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return json.Marshal(f)
	}
	return json.Marshal(s)
}
