package awsserve

import (
	"fmt"
	"reflect"
	"time"

	"github.com/aws/smithy-go/middleware"
)

// filler sets every exported field of a value to a value of its own, so
// that a round trip that drops or confuses a member shows in a comparison:
// strings (enums among them) are their field's name and a number, numbers
// count up, lists and maps hold one item, timestamps are whole
// milliseconds (what the wire carries).
type filler struct {
	n int
	// skip are fields left zero, by name.
	skip map[string]bool
}

var metadataType = reflect.TypeOf(middleware.Metadata{})

func (f *filler) fill(v reflect.Value, name string, depth int) {
	f.n++
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 10 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem(), name, depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 4, 1, 9, 0, f.n, 1_000_000*f.n, time.UTC)))
			return
		}
		if v.Type() == metadataType {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			sf := v.Type().Field(i)
			if !sf.IsExported() || f.skip[sf.Name] {
				continue
			}
			f.fill(v.Field(i), sf.Name, depth)
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", name, f.n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(int64(f.n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.n) + 0.5)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(name))
			return
		}
		if depth > 10 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		f.fill(s.Index(0), name, depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(k, name+"Key", depth+1)
		f.fill(e, name, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

// filled returns a *T with every field set but those named in skip.
func filled[T any](skip ...string) *T {
	f := &filler{skip: map[string]bool{}}
	for _, s := range skip {
		f.skip[s] = true
	}
	v := new(T)
	f.fill(reflect.ValueOf(v).Elem(), reflect.TypeOf(v).Elem().Name(), 0)
	return v
}

// differingFields are the names of the fields of two structs that
// differ, ResultMetadata aside.
func differingFields(want, got any) []string {
	w, g := reflect.Indirect(reflect.ValueOf(want)), reflect.Indirect(reflect.ValueOf(got))
	var out []string
	for i := 0; i < w.NumField(); i++ {
		sf := w.Type().Field(i)
		if !sf.IsExported() || sf.Type == metadataType {
			continue
		}
		if !reflect.DeepEqual(w.Field(i).Interface(), g.Field(i).Interface()) {
			out = append(out, sf.Name)
		}
	}
	return out
}
