package awsserve

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/document"
	smithytime "github.com/aws/smithy-go/time"
	"github.com/aws/smithy-go/traits"
)

// Auto Scaling's client (aws-sdk-go-v2 service/autoscaling) is generated
// with schemas: every input and output type serializes itself through a
// smithy.ShapeSerializer and reads itself through a smithy.ShapeDeserializer,
// naming each member by its model schema. The client pairs a form
// serializer with an XML deserializer; the server side here is the
// mirror pair — queryShapeDecoder reads the form into the SDK's input type,
// queryShapeEncoder writes the SDK's output type as XML — so member names,
// list items and timestamps follow the model by construction, for every
// member, with no table to keep in step. The naming rules are awsQuery's
// (aws-apis.md §1.3), as smithy-go's awsquery protocol applies them.

// queryMemberName is a member's form key segment under awsQuery: its
// xmlName, or else its member name.
func queryMemberName(s *smithy.Schema) string {
	if t, ok := smithy.SchemaTrait[*traits.XMLName](s); ok {
		return t.Name
	}
	return s.MemberName()
}

func queryJoin(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

type queryFrameKind byte

const (
	queryStruct queryFrameKind = iota
	queryList
	queryMap
	queryUnion
)

// queryDecodeFrame is one structure, list or map being read.
type queryDecodeFrame struct {
	kind   queryFrameKind
	prefix string
	// members and keys are a structure's members present in the form,
	// still to be read, with their keys.
	members []*smithy.Schema
	keys    []string
	// index is a list's or map's last item read; keyName and valueName a
	// map entry's element names.
	index              int
	keyName, valueName string
}

// queryShapeDecoder is a smithy.ShapeDeserializer over an awsQuery form.
// key is the form key of the value the next Read reads.
type queryShapeDecoder struct {
	form  *queryForm
	key   string
	stack []queryDecodeFrame
}

var _ smithy.ShapeDeserializer = (*queryShapeDecoder)(nil)

func newQueryShapeDecoder(f *queryForm) *queryShapeDecoder { return &queryShapeDecoder{form: f} }

func (d *queryShapeDecoder) top() *queryDecodeFrame {
	if len(d.stack) == 0 {
		return nil
	}
	return &d.stack[len(d.stack)-1]
}

func (d *queryShapeDecoder) pop() { d.stack = d.stack[:len(d.stack)-1] }

// ReadStruct implements smithy.ShapeDeserializer: the structure's members
// that the form sets, in name order so that decoding is deterministic.
func (d *queryShapeDecoder) ReadStruct(s *smithy.Schema) error {
	prefix := ""
	if len(d.stack) > 0 {
		prefix = d.key
	}
	f := queryDecodeFrame{kind: queryStruct, prefix: prefix}
	names := make([]string, 0, len(s.Members()))
	for name := range s.Members() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m := s.Members()[name]
		if k := queryJoin(prefix, queryMemberName(m)); d.form.has(k) {
			f.members, f.keys = append(f.members, m), append(f.keys, k)
		}
	}
	d.stack = append(d.stack, f)
	return nil
}

// ReadStructMember implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadStructMember() (*smithy.Schema, error) {
	f := d.top()
	if f == nil || f.kind != queryStruct {
		return nil, fmt.Errorf("ReadStructMember outside a structure")
	}
	if len(f.members) == 0 {
		d.pop()
		return nil, nil
	}
	m := f.members[0]
	d.key = f.keys[0]
	f.members, f.keys = f.members[1:], f.keys[1:]
	return m, nil
}

// ReadList implements smithy.ShapeDeserializer: items are key.member.N
// (or the list member's xmlName for member), or key.N when flattened.
func (d *queryShapeDecoder) ReadList(s *smithy.Schema) error {
	prefix := d.key
	if _, flat := smithy.SchemaTrait[*traits.XMLFlattened](s); !flat {
		item := "member"
		if t, ok := smithy.SchemaTrait[*traits.XMLName](s.ListMember()); ok {
			item = t.Name
		}
		prefix += "." + item
	}
	d.stack = append(d.stack, queryDecodeFrame{kind: queryList, prefix: prefix})
	return nil
}

// ReadListItem implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadListItem(*smithy.Schema) (bool, error) {
	f := d.top()
	f.index++
	k := f.prefix + "." + strconv.Itoa(f.index)
	if !d.form.has(k) {
		d.pop()
		return false, nil
	}
	d.key = k
	return true, nil
}

// ReadMap implements smithy.ShapeDeserializer: entries are
// key.entry.N.key and key.entry.N.value (names overridable by xmlName).
func (d *queryShapeDecoder) ReadMap(s *smithy.Schema) error {
	prefix := d.key
	if _, flat := smithy.SchemaTrait[*traits.XMLFlattened](s); !flat {
		prefix += ".entry"
	}
	f := queryDecodeFrame{kind: queryMap, prefix: prefix, keyName: "key", valueName: "value"}
	if t, ok := smithy.SchemaTrait[*traits.XMLName](s.MapKey()); ok {
		f.keyName = t.Name
	}
	if t, ok := smithy.SchemaTrait[*traits.XMLName](s.MapValue()); ok {
		f.valueName = t.Name
	}
	d.stack = append(d.stack, f)
	return nil
}

// ReadMapKey implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadMapKey(*smithy.Schema) (string, bool, error) {
	f := d.top()
	f.index++
	entry := f.prefix + "." + strconv.Itoa(f.index)
	k, ok := d.form.get(entry + "." + f.keyName)
	if !ok {
		d.pop()
		return "", false, nil
	}
	d.key = entry + "." + f.valueName
	return k, true, nil
}

// ReadUnion implements smithy.ShapeDeserializer; Auto Scaling's model has
// no unions.
func (d *queryShapeDecoder) ReadUnion(*smithy.Schema) (*smithy.Schema, error) {
	return nil, fmt.Errorf("%s: unions are not read from awsQuery forms", d.key)
}

// ReadNil implements smithy.ShapeDeserializer: a form has no nulls.
func (d *queryShapeDecoder) ReadNil(*smithy.Schema) (bool, error) { return false, nil }

func (d *queryShapeDecoder) value() string {
	v, _ := d.form.get(d.key)
	return v
}

func (d *queryShapeDecoder) readInt(bits int) (int64, error) {
	return parseQueryInt(d.key, d.value(), bits)
}

// ReadInt8 implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadInt8(_ *smithy.Schema, v *int8) error {
	n, err := d.readInt(8)
	*v = int8(n)
	return err
}

// ReadInt16 implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadInt16(_ *smithy.Schema, v *int16) error {
	n, err := d.readInt(16)
	*v = int16(n)
	return err
}

// ReadInt32 implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadInt32(_ *smithy.Schema, v *int32) error {
	n, err := d.readInt(32)
	*v = int32(n)
	return err
}

// ReadInt64 implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadInt64(_ *smithy.Schema, v *int64) error {
	n, err := d.readInt(64)
	*v = n
	return err
}

func (d *queryShapeDecoder) readFloat(bits int) (float64, error) {
	s := d.value()
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil {
		return 0, &queryParamError{d.key, s, "a number"}
	}
	return f, nil
}

// ReadFloat32 implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadFloat32(_ *smithy.Schema, v *float32) error {
	f, err := d.readFloat(32)
	*v = float32(f)
	return err
}

// ReadFloat64 implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadFloat64(_ *smithy.Schema, v *float64) error {
	f, err := d.readFloat(64)
	*v = f
	return err
}

// ReadBool implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadBool(_ *smithy.Schema, v *bool) error {
	b, err := parseQueryBool(d.key, d.value())
	*v = b
	return err
}

// ReadString implements smithy.ShapeDeserializer.
func (d *queryShapeDecoder) ReadString(_ *smithy.Schema, v *string) error {
	*v = d.value()
	return nil
}

// ReadBlob implements smithy.ShapeDeserializer: base64, as the client
// writes it.
func (d *queryShapeDecoder) ReadBlob(_ *smithy.Schema, v *[]byte) error {
	b, err := base64.StdEncoding.DecodeString(d.value())
	if err != nil {
		return &queryParamError{d.key, d.value(), "base64"}
	}
	*v = b
	return nil
}

// ReadTime implements smithy.ShapeDeserializer in the member's timestamp
// format, ISO-8601 unless the model says otherwise.
func (d *queryShapeDecoder) ReadTime(s *smithy.Schema, v *time.Time) error {
	text := d.value()
	var err error
	switch queryTimeFormat(s) {
	case "http-date":
		*v, err = smithytime.ParseHTTPDate(text)
	case "epoch-seconds":
		var f float64
		if f, err = strconv.ParseFloat(text, 64); err == nil {
			*v = smithytime.ParseEpochSeconds(f)
		}
	default:
		*v, err = smithytime.ParseDateTime(text)
	}
	if err != nil {
		return &queryParamError{d.key, text, "a timestamp (" + queryTimeFormat(s) + ")"}
	}
	return nil
}

func queryTimeFormat(s *smithy.Schema) string {
	if t, ok := smithy.SchemaTrait[*traits.TimestampFormat](s); ok {
		return t.Format
	}
	return "date-time"
}

// ReadBigInt implements smithy.ShapeDeserializer; awsQuery has none.
func (d *queryShapeDecoder) ReadBigInt(*smithy.Schema, *big.Int) error {
	return fmt.Errorf("%s: big integers are not part of awsQuery", d.key)
}

// ReadBigFloat implements smithy.ShapeDeserializer; awsQuery has none.
func (d *queryShapeDecoder) ReadBigFloat(*smithy.Schema, *big.Float) error {
	return fmt.Errorf("%s: big decimals are not part of awsQuery", d.key)
}

// ReadDocument implements smithy.ShapeDeserializer; awsQuery has none.
func (d *queryShapeDecoder) ReadDocument(*smithy.Schema, *document.Value) error {
	return fmt.Errorf("%s: documents are not part of awsQuery", d.key)
}

// queryEncodeFrame is one structure, list, map or union being written.
type queryEncodeFrame struct {
	kind queryFrameKind
	name string
	flat bool
	// item is a list's item element, or a map's entry element; inEntry
	// whether a map entry is open.
	item    string
	inEntry bool
	schema  *smithy.Schema
}

// queryShapeEncoder is a smithy.ShapeSerializer writing an awsQuery
// response's XML: the root structure as the element root (the
// operation's <XxxResult>), each member under its xmlName or member name,
// list items as <member> unless the list member's xmlName says otherwise,
// timestamps in ISO-8601 with milliseconds.
type queryShapeEncoder struct {
	w     queryXML
	root  string
	stack []queryEncodeFrame
	// err is the first value awsQuery cannot carry.
	err error
}

var _ smithy.ShapeSerializer = (*queryShapeEncoder)(nil)

func newQueryShapeEncoder(root string) *queryShapeEncoder { return &queryShapeEncoder{root: root} }

// Bytes implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) Bytes() []byte { return e.w.b.Bytes() }

// elementName is a member's element name: direct xmlName, else the
// member name (the client matches on the direct trait only).
func elementName(s *smithy.Schema) string {
	if t, ok := smithy.SchemaDirectTrait[*traits.XMLName](s); ok {
		return t.Name
	}
	return s.MemberName()
}

// name is the element of a value in the current context: a list's item,
// a map entry's value, or the member's own.
func (e *queryShapeEncoder) name(s *smithy.Schema) string {
	if len(e.stack) > 0 {
		switch f := e.stack[len(e.stack)-1]; {
		case f.kind == queryList:
			return f.item
		case f.kind == queryMap && f.inEntry:
			return elementName(f.schema.MapValue())
		}
	}
	return elementName(s)
}

func (e *queryShapeEncoder) scalar(s *smithy.Schema, v string) { e.w.text(e.name(s), v) }

// WriteStruct implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteStruct(s *smithy.Schema) {
	name := e.root
	if len(e.stack) > 0 {
		name = e.name(s)
	}
	e.w.start(name)
	e.stack = append(e.stack, queryEncodeFrame{kind: queryStruct, name: name, schema: s})
}

// CloseStruct implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) CloseStruct() { e.close() }

func (e *queryShapeEncoder) close() {
	f := e.stack[len(e.stack)-1]
	e.stack = e.stack[:len(e.stack)-1]
	if f.inEntry {
		e.w.end(f.item)
	}
	if !f.flat {
		e.w.end(f.name)
	}
}

// WriteUnion implements smithy.ShapeSerializer; Auto Scaling's model has
// no unions.
func (e *queryShapeEncoder) WriteUnion(s, _ *smithy.Schema) {
	e.unsupported(s, "a union")
	e.stack = append(e.stack, queryEncodeFrame{kind: queryUnion, flat: true})
}

// CloseUnion implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) CloseUnion() { e.close() }

// WriteList implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteList(s *smithy.Schema) {
	name := e.name(s)
	f := queryEncodeFrame{kind: queryList, name: name, item: name, schema: s}
	if _, flat := smithy.SchemaTrait[*traits.XMLFlattened](s); flat {
		f.flat = true
	} else {
		e.w.start(name)
		f.item = elementName(s.ListMember())
	}
	e.stack = append(e.stack, f)
}

// CloseList implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) CloseList() { e.close() }

// WriteMap implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteMap(s *smithy.Schema) {
	name := e.name(s)
	f := queryEncodeFrame{kind: queryMap, name: name, item: "entry", schema: s}
	if _, flat := smithy.SchemaTrait[*traits.XMLFlattened](s); flat {
		f.flat, f.item = true, name
	} else {
		e.w.start(name)
	}
	e.stack = append(e.stack, f)
}

// WriteKey implements smithy.ShapeSerializer: it opens the entry the next
// value closes.
func (e *queryShapeEncoder) WriteKey(s *smithy.Schema, k string) {
	f := &e.stack[len(e.stack)-1]
	if f.inEntry {
		e.w.end(f.item)
	}
	e.w.start(f.item)
	e.w.text(elementName(f.schema.MapKey()), k)
	f.inEntry = true
}

// CloseMap implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) CloseMap() { e.close() }

// WriteNil implements smithy.ShapeSerializer: an absent member.
func (e *queryShapeEncoder) WriteNil(*smithy.Schema) {}

// WriteBool implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteBool(s *smithy.Schema, v bool) {
	e.scalar(s, strconv.FormatBool(v))
}

// WriteInt8 implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteInt8(s *smithy.Schema, v int8) {
	e.scalar(s, strconv.FormatInt(int64(v), 10))
}

// WriteInt16 implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteInt16(s *smithy.Schema, v int16) {
	e.scalar(s, strconv.FormatInt(int64(v), 10))
}

// WriteInt32 implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteInt32(s *smithy.Schema, v int32) {
	e.scalar(s, strconv.FormatInt(int64(v), 10))
}

// WriteInt64 implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteInt64(s *smithy.Schema, v int64) {
	e.scalar(s, strconv.FormatInt(v, 10))
}

// WriteFloat32 implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteFloat32(s *smithy.Schema, v float32) {
	e.scalar(s, queryFloat(float64(v), 32))
}

// WriteFloat64 implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteFloat64(s *smithy.Schema, v float64) {
	e.scalar(s, queryFloat(v, 64))
}

func queryFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'g', -1, bits)
}

// WriteString implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteString(s *smithy.Schema, v string) { e.scalar(s, v) }

// WriteBlob implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteBlob(s *smithy.Schema, v []byte) {
	if v != nil {
		e.scalar(s, base64.StdEncoding.EncodeToString(v))
	}
}

// WriteTime implements smithy.ShapeSerializer.
func (e *queryShapeEncoder) WriteTime(s *smithy.Schema, v time.Time) {
	switch queryTimeFormat(s) {
	case "http-date":
		e.scalar(s, smithytime.FormatHTTPDate(v))
	case "epoch-seconds":
		e.scalar(s, strconv.FormatFloat(smithytime.FormatEpochSeconds(v), 'f', -1, 64))
	default:
		// Milliseconds always, as the services write them (aws-apis.md §1.3).
		e.scalar(s, v.UTC().Format(queryTimeLayout))
	}
}

func (e *queryShapeEncoder) unsupported(s *smithy.Schema, what string) {
	if e.err == nil {
		e.err = fmt.Errorf("%s: %s cannot be written in awsQuery", strings.TrimPrefix(s.ID().String(), "#"), what)
	}
}

// WriteBigInt implements smithy.ShapeSerializer; awsQuery has none.
func (e *queryShapeEncoder) WriteBigInt(s *smithy.Schema, _ *big.Int) {
	e.unsupported(s, "a big integer")
}

// WriteBigFloat implements smithy.ShapeSerializer; awsQuery has none.
func (e *queryShapeEncoder) WriteBigFloat(s *smithy.Schema, _ *big.Float) {
	e.unsupported(s, "a big decimal")
}

// WriteDocument implements smithy.ShapeSerializer; awsQuery has none.
func (e *queryShapeEncoder) WriteDocument(s *smithy.Schema, _ document.Value) {
	e.unsupported(s, "a document")
}
