package rehearse

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/ladder-eks/ladder/internal/scenario"
)

// A rehearsal leaves its scenario as loaded: the twin acts on copies, so a
// scenario rehearsed again (ladder plan's hops, a test that rehearses and
// then materializes it) starts from its manifests, not from where the last
// rehearsal left them (checkout scaled to 10 by karpenter-drift's action).
func TestRunLeavesTheScenarioAsLoaded(t *testing.T) {
	for _, name := range []string{"karpenter-drift", "workshop"} {
		sc, err := scenario.LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := scenario.LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(sc, Options{}); err != nil {
			t.Fatal(err)
		}
		for i := range sc.Objects {
			if !equality.Semantic.DeepEqual(sc.Objects[i].Object, loaded.Objects[i].Object) {
				t.Errorf("%s: the rehearsal changed %s %s", name, sc.Objects[i].GVK.Kind, sc.Objects[i].Name())
			}
		}
		for i, objs := range sc.ActionObjects {
			for j := range objs {
				if !equality.Semantic.DeepEqual(objs[j].Object, loaded.ActionObjects[i][j].Object) {
					t.Errorf("%s: the rehearsal changed action %d's %s %s", name, i, objs[j].GVK.Kind, objs[j].Name())
				}
			}
		}
	}
}
