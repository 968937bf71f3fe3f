package insights

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// TestLabelSet: a LabelSet answers as the map it was made from, and a
// selector — equality, set-based, existence — matches it as it matches
// a labels.Set of the same labels.
func TestLabelSet(t *testing.T) {
	m := map[string]string{"tier": "web", "app": "shop", "app.kubernetes.io/name": "cart", "z": ""}
	s := labelSetOf(m)
	if want := (LabelSet{{"app", "shop"}, {"app.kubernetes.io/name", "cart"}, {"tier", "web"}, {"z", ""}}); !slices.Equal(s, want) {
		t.Fatalf("labelSetOf = %v, want %v (sorted by key)", s, want)
	}
	for _, key := range []string{"app", "app.kubernetes.io/name", "tier", "z", "", "a", "zz", "app.kubernetes.io"} {
		want, wantOK := m[key]
		if got, ok := s.Lookup(key); got != want || ok != wantOK {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", key, got, ok, want, wantOK)
		}
		if s.Has(key) != wantOK || s.Get(key) != want {
			t.Errorf("Has(%q) = %v, Get = %q; want %v, %q", key, s.Has(key), s.Get(key), wantOK, want)
		}
	}
	for _, sel := range []string{"", "app=shop", "app=shop,tier=web", "app=shop,tier=db", "app!=shop", "tier in (db,web)",
		"tier notin (web)", "z", "!z", "z=", "missing", "!missing", "app.kubernetes.io/name=cart"} {
		selector, err := labels.Parse(sel)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := selector.Matches(s), selector.Matches(labels.Set(m)); got != want {
			t.Errorf("%q matches the LabelSet: %v, the labels.Set: %v", sel, got, want)
		}
	}
	if labelSetOf(nil) != nil || labelSetOf(map[string]string{}) != nil {
		t.Error("an empty map makes a non-nil LabelSet")
	}
}
