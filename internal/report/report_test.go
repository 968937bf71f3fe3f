package report

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestReportSchemaIsDocumented fails when a JSON field of the report is not
// described in docs/rehearsal-report.md.
func TestReportSchemaIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/rehearsal-report.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Slice || typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(text, "`"+name+"`") {
				t.Errorf("field %s%s is not documented in docs/rehearsal-report.md", path, name)
			}
			walk(f.Type, path+name+".")
		}
	}
	walk(reflect.TypeOf(Report{}), "")
}
