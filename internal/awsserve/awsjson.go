package awsserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/smithy-go"
)

// awsJson1_1 (aws-apis.md §1.5): every operation is POST / with
// X-Amz-Target: <TargetPrefix>.<Operation> and its input's members under
// their PascalCase model names as the body; answers as jsonProtocol
// writes them.

// awsJSONMux is one awsJson1_1 service: an operation per target.
type awsJSONMux struct {
	targetPrefix string
	ops          map[string]http.HandlerFunc
}

func newAWSJSONMux(targetPrefix string) *awsJSONMux {
	return &awsJSONMux{targetPrefix: targetPrefix, ops: map[string]http.HandlerFunc{}}
}

func (m *awsJSONMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	prefix, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	h, ok := m.ops[op]
	if r.Method != http.MethodPost || prefix != m.targetPrefix || !ok {
		awsJSON11.writeErrorCode(w, http.StatusBadRequest, "UnknownOperationException",
			fmt.Sprintf("No operation is served for %s %s with X-Amz-Target %q.", r.Method, r.URL.Path, r.Header.Get("X-Amz-Target")))
		return
	}
	h(w, r)
}

// WriteError implements ErrorWriter.
func (m *awsJSONMux) WriteError(w http.ResponseWriter, _ *http.Request, status int, code, message string) {
	awsJSON11.writeErrorCode(w, status, code, message)
}

// awsJSONRoute serves the operation named op with call, a port method
// whose signature is the SDK client's.
func awsJSONRoute[In any, Out smithy.Serializable, Opt any](m *awsJSONMux, op string,
	call func(context.Context, *In, ...Opt) (Out, error)) {
	m.ops[op] = func(w http.ResponseWriter, r *http.Request) {
		in := new(In)
		// The body's members are the input's Go field names as they are
		// (Name, Names, WithDecryption), so encoding/json decodes it.
		body, err := io.ReadAll(r.Body)
		if err == nil && len(strings.TrimSpace(string(body))) > 0 {
			err = json.Unmarshal(body, in)
		}
		if err != nil {
			awsJSON11.writeErrorCode(w, http.StatusBadRequest, "SerializationException", err.Error())
			return
		}
		out, err := call(r.Context(), in)
		awsJSON11.answer(w, http.StatusOK, out, err)
	}
}
