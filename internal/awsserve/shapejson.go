package awsserve

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/document"
	smithytime "github.com/aws/smithy-go/time"
	"github.com/aws/smithy-go/traits"
)

// shapeJSONWriter is a smithy.ShapeSerializer that writes a shape as the
// JSON protocols put it on the wire (aws-apis.md §1.2, §1.5), so that a
// response is written by the SDK's own generated Serialize methods — the
// same schemas, member names and types the SDK's deserializer reads back.
//
// Members are keyed by their model name (restJson1 honours a jsonName
// trait, awsJson1_1 does not); timestamps are epoch seconds unless the
// member has a timestampFormat trait; blobs are base64. Values are built
// as a tree and marshalled once: encoding/json sorts the keys, so a
// response's bytes are a function of its content.
type shapeJSONWriter struct {
	useJSONName bool

	// root is the first structure written, the shape being serialized:
	// its schema carries the error traits (httpError) of an exception.
	root *smithy.Schema
	// stack holds the open containers, innermost last; top is the value
	// written once the outermost has closed.
	stack []*shapeJSONContainer
	top   any
	// key is the pending map key of WriteKey.
	key *string
	err error
}

// shapeJSONContainer is an open structure, map or list, and the key it
// goes under in its parent object (decided when it opens: the member's
// name, or the pending map key).
type shapeJSONContainer struct {
	object map[string]any
	list   []any
	isList bool
	keyIn  string
}

var _ smithy.ShapeSerializer = (*shapeJSONWriter)(nil)

func newShapeJSONWriter(useJSONName bool) *shapeJSONWriter {
	return &shapeJSONWriter{useJSONName: useJSONName}
}

// marshal returns the JSON of what was written.
func (s *shapeJSONWriter) marshal() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if len(s.stack) != 0 {
		return nil, fmt.Errorf("awsserve: %d containers left open", len(s.stack))
	}
	if s.top == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(s.top)
}

// Bytes implements smithy.ShapeSerializer; callers use marshal, which
// reports errors.
func (s *shapeJSONWriter) Bytes() []byte {
	b, _ := s.marshal()
	return b
}

// keyFor is the key of the next value in the open object: the pending map
// key, else schema's member name.
func (s *shapeJSONWriter) keyFor(schema *smithy.Schema) string {
	if s.key != nil {
		k := *s.key
		s.key = nil
		return k
	}
	if s.useJSONName {
		if jn, ok := smithy.SchemaTrait[*traits.JSONName](schema); ok {
			return jn.Name
		}
	}
	return schema.MemberName()
}

// put adds v to the open container, or makes it the value written.
func (s *shapeJSONWriter) put(schema *smithy.Schema, v any) {
	if len(s.stack) == 0 {
		s.top = v
		return
	}
	c := s.stack[len(s.stack)-1]
	if c.isList {
		c.list = append(c.list, v)
		return
	}
	c.object[s.keyFor(schema)] = v
}

func (s *shapeJSONWriter) open(schema *smithy.Schema, c *shapeJSONContainer) {
	if len(s.stack) == 0 {
		if s.root == nil {
			s.root = schema
		}
	} else if !s.stack[len(s.stack)-1].isList {
		c.keyIn = s.keyFor(schema)
	}
	s.stack = append(s.stack, c)
}

// close pops the open container into its parent.
func (s *shapeJSONWriter) close() {
	n := len(s.stack) - 1
	if n < 0 {
		s.fail(fmt.Errorf("awsserve: close without an open container"))
		return
	}
	c := s.stack[n]
	s.stack = s.stack[:n]
	var v any = c.object
	if c.isList {
		if c.list == nil {
			c.list = []any{}
		}
		v = c.list
	}
	if n == 0 {
		s.top = v
		return
	}
	if parent := s.stack[n-1]; parent.isList {
		parent.list = append(parent.list, v)
	} else {
		parent.object[c.keyIn] = v
	}
}

func (s *shapeJSONWriter) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *shapeJSONWriter) WriteStruct(schema *smithy.Schema) {
	s.open(schema, &shapeJSONContainer{object: map[string]any{}})
}
func (s *shapeJSONWriter) CloseStruct() { s.close() }
func (s *shapeJSONWriter) WriteList(schema *smithy.Schema) {
	s.open(schema, &shapeJSONContainer{isList: true})
}
func (s *shapeJSONWriter) CloseList() { s.close() }
func (s *shapeJSONWriter) WriteMap(schema *smithy.Schema) {
	s.open(schema, &shapeJSONContainer{object: map[string]any{}})
}
func (s *shapeJSONWriter) WriteKey(_ *smithy.Schema, key string) { s.key = &key }
func (s *shapeJSONWriter) CloseMap()                             { s.close() }

// WriteUnion opens a union as an object whose one member is the variant.
func (s *shapeJSONWriter) WriteUnion(schema, variant *smithy.Schema) {
	s.open(schema, &shapeJSONContainer{object: map[string]any{}})
	key := s.keyFor(variant)
	s.key = &key
}
func (s *shapeJSONWriter) CloseUnion() { s.key = nil; s.close() }

func (s *shapeJSONWriter) WriteInt8(schema *smithy.Schema, v int8)   { s.put(schema, v) }
func (s *shapeJSONWriter) WriteInt16(schema *smithy.Schema, v int16) { s.put(schema, v) }
func (s *shapeJSONWriter) WriteInt32(schema *smithy.Schema, v int32) { s.put(schema, v) }
func (s *shapeJSONWriter) WriteInt64(schema *smithy.Schema, v int64) { s.put(schema, v) }
func (s *shapeJSONWriter) WriteFloat32(schema *smithy.Schema, v float32) {
	s.put(schema, float64(v))
}
func (s *shapeJSONWriter) WriteFloat64(schema *smithy.Schema, v float64) { s.put(schema, v) }
func (s *shapeJSONWriter) WriteBool(schema *smithy.Schema, v bool)       { s.put(schema, v) }
func (s *shapeJSONWriter) WriteString(schema *smithy.Schema, v string)   { s.put(schema, v) }
func (s *shapeJSONWriter) WriteNil(schema *smithy.Schema)                { s.put(schema, nil) }
func (s *shapeJSONWriter) WriteBlob(schema *smithy.Schema, v []byte) {
	s.put(schema, base64.StdEncoding.EncodeToString(v))
}
func (s *shapeJSONWriter) WriteBigInt(schema *smithy.Schema, v *big.Int) {
	s.put(schema, json.Number(v.String()))
}
func (s *shapeJSONWriter) WriteBigFloat(schema *smithy.Schema, v *big.Float) {
	s.put(schema, json.Number(v.Text('g', -1)))
}

// WriteTime writes epoch seconds, the JSON protocols' default, which the
// Go SDK insists on (aws-apis.md §1.2): a string there is a
// deserialization error.
func (s *shapeJSONWriter) WriteTime(schema *smithy.Schema, v time.Time) {
	format := "epoch-seconds"
	if t, ok := smithy.SchemaTrait[*traits.TimestampFormat](schema); ok {
		format = t.Format
	}
	switch format {
	case "date-time":
		s.put(schema, smithytime.FormatDateTime(v))
	case "http-date":
		s.put(schema, smithytime.FormatHTTPDate(v))
	default:
		s.put(schema, smithytime.FormatEpochSeconds(v))
	}
}

// WriteDocument writes an untyped document; none of the operations served
// here has one, so only the scalar and null kinds are supported.
func (s *shapeJSONWriter) WriteDocument(schema *smithy.Schema, v document.Value) {
	switch vv := v.(type) {
	case document.Null:
		s.put(schema, nil)
	case document.Boolean:
		s.put(schema, bool(vv))
	case document.String:
		s.put(schema, string(vv))
	case document.Number:
		s.put(schema, json.Number(vv))
	default:
		s.fail(fmt.Errorf("awsserve: document member %s of kind %T is not supported", schema.MemberName(), v))
	}
}
