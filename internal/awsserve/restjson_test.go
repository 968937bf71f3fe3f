package awsserve_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsserve"
)

// restJSONDecode relies on encoding/json's case-insensitive match of a
// member's model name (clusterName) to the SDK's Go field (ClusterName).
// For every input the EKS handler serves, and every structure nested in
// one, each Go field is exactly one member and each member one field, and
// no field is of a kind encoding/json would read differently from the
// wire (a union interface, an epoch-seconds time.Time).
func TestRestJSONInputsDecode(t *testing.T) {
	_, api := newTwinEKS(t)
	schemas, types := awsserve.RestJSONInputs(awsserve.NewEKS(api))
	if len(schemas) != 17 {
		t.Errorf("%d operations served, want the 16 of awsport.EKS and ListClusters", len(schemas))
	}
	for i, s := range schemas {
		checkDecodable(t, s, types[i], types[i].Name())
	}
}

func checkDecodable(t *testing.T, s *smithy.Schema, typ reflect.Type, path string) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ.Kind() == reflect.Interface || typ == reflect.TypeFor[time.Time]():
		t.Errorf("%s is a %s, which encoding/json does not read as the wire has it", path, typ)
	case s.Type() == smithy.ShapeTypeList || s.Type() == smithy.ShapeTypeSet:
		checkDecodable(t, s.ListMember(), typ.Elem(), path+"[]")
	case s.Type() == smithy.ShapeTypeMap:
		checkDecodable(t, s.MapValue(), typ.Elem(), path+"{}")
	case s.Type() == smithy.ShapeTypeStructure:
		matched := map[string]bool{}
		for f := range typ.Fields() {
			if !f.IsExported() {
				continue
			}
			var names []string
			for name := range s.Members() {
				if strings.EqualFold(name, f.Name) {
					names = append(names, name)
				}
			}
			if len(names) != 1 {
				t.Errorf("%s.%s matches members %v, want exactly one", path, f.Name, names)
				continue
			}
			matched[names[0]] = true
			checkDecodable(t, s.Member(names[0]), f.Type, path+"."+f.Name)
		}
		for name := range s.Members() {
			if !matched[name] {
				t.Errorf("%s: member %s has no field", path, name)
			}
		}
	}
}
