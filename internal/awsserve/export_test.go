package awsserve

import (
	"net/http"
	"reflect"

	"github.com/aws/smithy-go"
)

// RestJSONInputs are the input shapes and SDK types a restJson1 handler
// (NewEKS's) decodes.
func RestJSONInputs(h http.Handler) (schemas []*smithy.Schema, types []reflect.Type) {
	for _, in := range h.(*restJSONMux).inputs {
		schemas, types = append(schemas, in.schema), append(types, in.typ)
	}
	return schemas, types
}
