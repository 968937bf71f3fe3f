// Package stricttest holds manifest.DecodeStrict to sigs.k8s.io/json's
// UnmarshalStrict, for the tests of every package that decodes with it.
package stricttest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	kjson "sigs.k8s.io/json"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// Compare decodes js both ways into newObj's type and reports, through t,
// any difference: an error on one side only or worded otherwise, other
// strict errors, another object. accepted is true when UnmarshalStrict took
// the document without a word (the fast path's case).
func Compare[T any](t testing.TB, name string, js []byte, newObj func() T) (accepted bool) {
	t.Helper()
	want := newObj()
	wantStrict, wantErr := kjson.UnmarshalStrict(js, want)
	got, gotStrict, gotErr := manifest.DecodeStrict(js, newObj)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Errorf("%s: error %v, UnmarshalStrict %v", name, gotErr, wantErr)
		return false
	}
	if !reflect.DeepEqual(gotStrict, wantStrict) {
		t.Errorf("%s: strict errors %v, UnmarshalStrict %v", name, gotStrict, wantStrict)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("%s: decoded\n%#v\nUnmarshalStrict\n%#v", name, got, want)
	}
	return wantErr == nil && len(wantStrict) == 0
}

// File is a manifest file and its contents.
type File struct {
	Name string
	Data []byte
}

// BuiltinManifests reads the built-in scenarios' manifest files, from a
// test's package directory under internal/; it fails t when there is none.
func BuiltinManifests(t testing.TB) []File {
	t.Helper()
	names, _ := filepath.Glob("../scenario/builtin/*/manifests/*.yaml")
	if len(names) == 0 {
		t.Fatal("no built-in manifests found")
	}
	files := make([]File, 0, len(names))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, File{n, data})
	}
	return files
}
