package manifest

import (
	"errors"

	jsonv2 "github.com/go-json-experiment/json"
	kjson "sigs.k8s.io/json"
)

// DecodeStrict decodes js into a new object as the API server's strict field
// validation reads it (sigs.k8s.io/json UnmarshalStrict: names matched
// case-sensitively; unknown and duplicate fields reported). The JSON v2
// decoder, twice as fast, goes first under the same rules (case-sensitive by
// default; duplicate names, invalid UTF-8 and unknown members rejected): a
// document it accepts decodes to the same object with nothing to report
// (TestDecodeStrictMatchesUpstream, here and in internal/insights).
// Anything it refuses is decoded again by UnmarshalStrict, whose errors and
// field paths are the ones reported.
func DecodeStrict[T any](js []byte, newObj func() T) (obj T, strictErrs []error, err error) {
	obj = newObj()
	if jsonv2.Unmarshal(js, obj, jsonv2.RejectUnknownMembers(true)) == nil {
		return obj, nil, nil
	}
	obj = newObj()
	strictErrs, err = kjson.UnmarshalStrict(js, obj)
	return obj, strictErrs, err
}

// FieldPath is the path of the field an error of the strict decoder is about
// (sigs.k8s.io/json's FieldError: an unknown or duplicate field, a type
// error), or "" when the error names none.
func FieldPath(err error) string {
	var fe kjson.FieldError
	if errors.As(err, &fe) {
		return fe.FieldPath()
	}
	return ""
}
