package addon

import (
	"maps"
	"slices"
	"testing"
)

// TestWorkloads: every add-on whose images the rules know runs as at least
// one workload in kube-system, and an add-on the twin does not model has
// none.
func TestWorkloads(t *testing.T) {
	if got, want := slices.Sorted(maps.Keys(addonWorkloads)), slices.Sorted(maps.Keys(addonImages)); !slices.Equal(got, want) {
		t.Errorf("add-ons with workloads %v, with images %v", got, want)
	}
	for name := range addonImages {
		ws := Workloads(name)
		if len(ws) == 0 {
			t.Errorf("%s runs as no workload", name)
		}
		for _, w := range ws {
			if w.Namespace != "kube-system" || (w.Kind != "Deployment" && w.Kind != "DaemonSet") || w.Name == "" {
				t.Errorf("%s runs as %+v", name, w)
			}
		}
	}
	if ws := Workloads("metrics-server"); ws != nil {
		t.Errorf("metrics-server runs as %v, want nil", ws)
	}
}
