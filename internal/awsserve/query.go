package awsserve

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/smithy-go"
)

// The query protocols (aws-apis.md §1.3 awsQuery for Auto Scaling, §1.4
// ec2Query for EC2) share their request side: a form-encoded POST whose
// Action and Version name the operation and whose other keys are the
// input's members, structures flattened with dots and list items numbered
// from 1. Their responses are XML; they differ in the list item names, in
// the Result wrapper and in the error envelope.

// queryForm is one request's form: Action, Version and the input members.
// It remembers which keys a decoder read, so that ec2Query can refuse a
// parameter the lab does not model rather than drop it.
type queryForm struct {
	values map[string][]string
	keys   []string // sorted
	read   map[string]bool
}

// parseQueryForm reads the form of an awsQuery or ec2Query request: the
// body of a POST, or the query string of a GET, as both protocols accept.
func parseQueryForm(r *http.Request) (*queryForm, error) {
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	f := &queryForm{values: r.Form, read: map[string]bool{"Action": true, "Version": true}}
	for k := range r.Form {
		f.keys = append(f.keys, k)
	}
	sort.Strings(f.keys)
	return f, nil
}

func (f *queryForm) action() string { return f.first("Action") }

func (f *queryForm) first(key string) string {
	if v := f.values[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// get returns the value of key, marking it read.
func (f *queryForm) get(key string) (string, bool) {
	v, ok := f.values[key]
	if !ok || len(v) == 0 {
		return "", false
	}
	f.read[key] = true
	return v[0], true
}

// has reports whether the form sets key or a member below it (key.…),
// the test for a structure or list being present at all. Go's SDK sends
// an empty awsQuery list as the bare key with no value (§1.3).
func (f *queryForm) has(key string) bool {
	i := sort.SearchStrings(f.keys, key)
	if i < len(f.keys) && f.keys[i] == key {
		f.read[key] = true
		return true
	}
	for ; i < len(f.keys) && strings.HasPrefix(f.keys[i], key); i++ {
		if strings.HasPrefix(f.keys[i], key+".") {
			return true
		}
	}
	return false
}

// unread returns the first key no decoder read, in key order.
func (f *queryForm) unread() (string, bool) {
	for _, k := range f.keys {
		if !f.read[k] {
			return k, true
		}
	}
	return "", false
}

// queryParamError is a form value that does not parse as its member's
// type; both services answer it with a 400.
type queryParamError struct {
	key, value, want string
}

func (e *queryParamError) Error() string {
	return fmt.Sprintf("Value '%s' for parameter %s is invalid: it must be %s", e.value, e.key, e.want)
}

func parseQueryInt(key, v string, bits int) (int64, error) {
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		return 0, &queryParamError{key, v, fmt.Sprintf("a %d-bit integer", bits)}
	}
	return n, nil
}

func parseQueryBool(key, v string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &queryParamError{key, v, "true or false"}
}

// queryXML writes the elements of a query protocol response.
type queryXML struct {
	b bytes.Buffer
}

func (w *queryXML) start(name string) { w.b.WriteString("<" + name + ">") }
func (w *queryXML) end(name string)   { w.b.WriteString("</" + name + ">") }

// text writes <name>v</name>, v escaped.
func (w *queryXML) text(name, v string) {
	w.start(name)
	_ = xml.EscapeText(&w.b, []byte(v))
	w.end(name)
}

// queryRequests numbers the responses' request ids when the handler is
// served without a Server (which gives each request its own): distinct, in
// the UUID shape the SDKs log, and the same from run to run.
var queryRequests atomic.Uint64

// queryRequestID is the id the Server gave r, the one it sent as
// x-amzn-RequestId, so that header and body agree.
func queryRequestID(ctx context.Context) string {
	if id := RequestID(ctx); id != "" {
		return id
	}
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", queryRequests.Add(1))
}

// writeQueryResponse sends an XML response with its request id in the
// header the SDKs also read it from.
func writeQueryResponse(w http.ResponseWriter, status int, requestID string, body []byte) {
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("x-amzn-RequestId", requestID)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Optional members: absent (nil, or an empty enum) writes nothing.

func (w *queryXML) str(name string, v *string) {
	if v != nil {
		w.text(name, *v)
	}
}

func (w *queryXML) enum(name, v string) {
	if v != "" {
		w.text(name, v)
	}
}

func (w *queryXML) bool(name string, v *bool) {
	if v != nil {
		w.text(name, strconv.FormatBool(*v))
	}
}

func (w *queryXML) int32(name string, v *int32) {
	if v != nil {
		w.text(name, strconv.FormatInt(int64(*v), 10))
	}
}

func (w *queryXML) int64(name string, v *int64) {
	if v != nil {
		w.text(name, strconv.FormatInt(*v, 10))
	}
}

// time writes an ISO-8601 timestamp with milliseconds, as the services do.
func (w *queryXML) time(name string, v *time.Time) {
	if v != nil {
		w.text(name, v.UTC().Format(queryTimeLayout))
	}
}

// queryTimeLayout is ISO-8601 with milliseconds, as both services write
// timestamps (aws-apis.md §1.3).
const queryTimeLayout = "2006-01-02T15:04:05.000Z"

// queryOperation answers one action: it decodes the input from form,
// calls its port and writes the output's members into body.
type queryOperation func(ctx context.Context, form *queryForm, action string, body *queryXML) error

// queryService is one query-protocol service: its operations, and the
// envelopes its protocol puts around an output and an error.
type queryService struct {
	ops map[string]queryOperation
	// envelope wraps an output's members into the success response.
	envelope func(action, requestID string, body []byte) []byte
	// errorBody is the error response for an error at status.
	errorBody func(ae smithy.APIError, status int, requestID string) []byte
	// status is the HTTP status of an error code.
	status func(code string, fault smithy.ErrorFault) int
	// internalError is the code of an error that is not an API error: the
	// service's own failure.
	internalError string
	// version is the service's API version, which every request must
	// give; wrongVersion the service's error for another.
	version      string
	wrongVersion func(action, got string) error
	// check, if set, is the service's own check of the form, before an
	// operation reads it.
	check func(f *queryForm) error
}

// ServeHTTP implements http.Handler. The operations call their ports
// from the request's goroutine: a port that is not safe for concurrent
// use needs its requests serialized by the caller.
func (s *queryService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := queryRequestID(r.Context())
	form, err := parseQueryForm(r)
	if err != nil {
		s.fail(w, id, &smithy.GenericAPIError{Code: "MalformedQueryString", Message: err.Error(), Fault: smithy.FaultClient})
		return
	}
	if err := checkQueryForm(form); err != nil {
		s.fail(w, id, err)
		return
	}
	action := form.action()
	if action == "" {
		s.fail(w, id, unknownAction(action))
		return
	}
	if err := checkAPIVersion(form, action, s.version, s.wrongVersion); err != nil {
		s.fail(w, id, err)
		return
	}
	op, ok := s.ops[action]
	if !ok {
		s.fail(w, id, unknownAction(action))
		return
	}
	if s.check != nil {
		if err := s.check(form); err != nil {
			s.fail(w, id, err)
			return
		}
	}
	var body queryXML
	if err := op(r.Context(), form, action, &body); err != nil {
		s.fail(w, id, err)
		return
	}
	writeQueryResponse(w, http.StatusOK, id, s.envelope(action, id, body.b.Bytes()))
}

// WriteError implements ErrorWriter: the Server's refusals (a signature
// that does not hold, a skewed clock) come back in the service's own error
// envelope, so that its SDK raises them by their codes.
func (s *queryService) WriteError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	fault := smithy.FaultClient
	if status >= http.StatusInternalServerError {
		fault = smithy.FaultServer
	}
	id := queryRequestID(r.Context())
	ae := &smithy.GenericAPIError{Code: code, Message: message, Fault: fault}
	writeQueryResponse(w, status, id, s.errorBody(ae, status, id))
}

func (s *queryService) fail(w http.ResponseWriter, id string, err error) {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		ae = &smithy.GenericAPIError{Code: s.internalError, Message: err.Error(), Fault: smithy.FaultServer}
	}
	status := s.status(ae.ErrorCode(), ae.ErrorFault())
	writeQueryResponse(w, status, id, s.errorBody(ae, status, id))
}

// unknownAction is both services' answer to an Action they do not have,
// or that the lab does not serve.
func unknownAction(action string) error {
	if action == "" {
		return &smithy.GenericAPIError{Code: "MissingAction", Message: "The request must contain the parameter Action.", Fault: smithy.FaultClient}
	}
	return &smithy.GenericAPIError{Code: "InvalidAction", Message: "The action " + truncated(action) + " is not valid for this web service.", Fault: smithy.FaultClient}
}

// queryStatus is the HTTP status of an error the service's table does not
// list: 400 for the client's faults, 500 for the service's.
func queryStatus(fault smithy.ErrorFault) int {
	if fault == smithy.FaultServer {
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}
