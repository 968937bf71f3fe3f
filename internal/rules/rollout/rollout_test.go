package rollout

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// TestResolveFenceposts holds ResolveFenceposts to upstream's own table
// (k8s.io/kubernetes pkg/controller/deployment/util/deployment_util_test.go
// TestResolveFenceposts).
func TestResolveFenceposts(t *testing.T) {
	for _, tc := range []struct {
		maxSurge, maxUnavailable *string
		desired                  int32
		surge, unavailable       int32
		err                      bool
	}{
		{ptr.To("0%"), ptr.To("0%"), 0, 0, 1, false},
		{ptr.To("39%"), ptr.To("39%"), 10, 4, 3, false},
		{ptr.To("oops"), ptr.To("39%"), 10, 0, 0, true},
		{ptr.To("55%"), ptr.To("urg"), 10, 0, 0, true},
		{nil, ptr.To("39%"), 10, 0, 3, false},
		{ptr.To("39%"), nil, 10, 4, 0, false},
		{nil, nil, 10, 0, 1, false},
	} {
		var ms, mu *intstr.IntOrString
		if tc.maxSurge != nil {
			ms = ptr.To(intstr.FromString(*tc.maxSurge))
		}
		if tc.maxUnavailable != nil {
			mu = ptr.To(intstr.FromString(*tc.maxUnavailable))
		}
		s, u, err := ResolveFenceposts(ms, mu, tc.desired)
		if (err != nil) != tc.err || s != tc.surge || u != tc.unavailable {
			t.Errorf("ResolveFenceposts(%v, %v, %d) = %d, %d, %v; want %d, %d, error %v",
				tc.maxSurge, tc.maxUnavailable, tc.desired, s, u, err, tc.surge, tc.unavailable, tc.err)
		}
	}
}

func rolling(maxUnavailable, maxSurge *intstr.IntOrString) appsv1.DeploymentStrategy {
	return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: maxUnavailable, MaxSurge: maxSurge}}
}

func iv(n int32) *intstr.IntOrString   { return ptr.To(intstr.FromInt32(n)) }
func pct(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }

// TestDeployment: the fewest Ready pods of a Deployment's rollout, with
// upstream's numbers — the API server's 25%/25% defaults, maxUnavailable
// rounding down and maxSurge up, 1 when both come to 0, capped at the
// replicas (deployment_util_test.go TestMaxUnavailable) — Recreate taking
// every pod down, a paused Deployment not rolling.
func TestDeployment(t *testing.T) {
	for _, tc := range []struct {
		name                            string
		spec                            appsv1.DeploymentSpec
		rolls                           bool
		maxUnavailable, surge, minReady int32
	}{
		{"defaults, 1 replica: 25% → 0 unavailable, 1 surge", appsv1.DeploymentSpec{}, true, 0, 1, 1},
		{"defaults, 3 replicas: 25% of 3 rounds down to 0", appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}, true, 0, 1, 3},
		{"defaults, 4 replicas", appsv1.DeploymentSpec{Replicas: ptr.To[int32](4)}, true, 1, 1, 3},
		{"defaults, 8 replicas", appsv1.DeploymentSpec{Replicas: ptr.To[int32](8)}, true, 2, 2, 6},
		{"type RollingUpdate with no rollingUpdate: the defaults", appsv1.DeploymentSpec{Replicas: ptr.To[int32](10),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}}, true, 2, 3, 8},
		{"39%/39% of 10", appsv1.DeploymentSpec{Replicas: ptr.To[int32](10), Strategy: rolling(pct("39%"), pct("39%"))}, true, 3, 4, 7},
		{"maxSurge 0, maxUnavailable 0%: forced to 1", appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Strategy: rolling(pct("0%"), iv(0))}, true, 1, 0, 2},
		{"maxUnavailable 0, maxSurge 1", appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Strategy: rolling(iv(0), iv(1))}, true, 0, 1, 3},
		{"maxUnavailable 5 of 10", appsv1.DeploymentSpec{Replicas: ptr.To[int32](10), Strategy: rolling(iv(5), iv(1))}, true, 5, 1, 5},
		{"maxUnavailable 10 of 5 caps at 5", appsv1.DeploymentSpec{Replicas: ptr.To[int32](5), Strategy: rolling(iv(10), iv(1))}, true, 5, 1, 0},
		{"maxUnavailable 50% of 10", appsv1.DeploymentSpec{Replicas: ptr.To[int32](10), Strategy: rolling(pct("50%"), iv(1))}, true, 5, 1, 5},
		{"maxUnavailable 100% of 5", appsv1.DeploymentSpec{Replicas: ptr.To[int32](5), Strategy: rolling(pct("100%"), iv(1))}, true, 5, 1, 0},
		{"Recreate", appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}, true, 3, 0, 0},
		{"paused", appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Paused: true}, false, 0, 0, 0},
		{"0 replicas", appsv1.DeploymentSpec{Replicas: ptr.To[int32](0)}, false, 0, 0, 0},
	} {
		r, err := Deployment(&tc.spec)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r.Rolls != tc.rolls || r.MaxUnavailable != tc.maxUnavailable || r.MaxSurge != tc.surge || r.MinReady != tc.minReady {
			t.Errorf("%s: rolls %v, maxUnavailable %d, maxSurge %d, minReady %d; want %v, %d, %d, %d",
				tc.name, r.Rolls, r.MaxUnavailable, r.MaxSurge, r.MinReady, tc.rolls, tc.maxUnavailable, tc.surge, tc.minReady)
		}
	}
	if _, err := Deployment(&appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Strategy: rolling(pct("oops"), nil)}); err == nil {
		t.Error("an invalid percentage: no error")
	}
	if r, _ := Deployment(&appsv1.DeploymentSpec{Replicas: ptr.To[int32](8)}); r.MaxUnavailableValue.String() != "25%" || r.MaxSurgeValue.String() != "25%" {
		t.Errorf("the defaults as stored: maxUnavailable %s, maxSurge %s; want 25%%, 25%%", r.MaxUnavailableValue.String(), r.MaxSurgeValue.String())
	}
}

func ssRolling(partition *int32, maxUnavailable *intstr.IntOrString) appsv1.StatefulSetUpdateStrategy {
	return appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: partition, MaxUnavailable: maxUnavailable}}
}

// TestStatefulSet: the fewest Ready pods of a StatefulSet's rollout, with
// upstream's numbers — maxUnavailable defaulting to 1, a percentage
// rounding down, at least 1 (stateful_set_utils_test.go
// TestGetStatefulSetMaxUnavailable: 10% of 25 is 2, 50% of 5 is 2, 10% of
// 5 is 1, 100% of 5 is 5), honoured from 1.37 (the
// MaxUnavailableStatefulSet gate) — no surge, the partition's lower
// ordinals kept, OnDelete not rolling.
func TestStatefulSet(t *testing.T) {
	v136, v137 := kubeversion.MustParse("1.36"), kubeversion.MustParse("1.37")
	for _, tc := range []struct {
		name                     string
		spec                     appsv1.StatefulSetSpec
		controller               kubeversion.Minor
		rolls, ignored           bool
		maxUnavailable, minReady int32
	}{
		{"1 replica, defaults: drops to 0", appsv1.StatefulSetSpec{}, v137, true, false, 1, 0},
		{"3 replicas, defaults", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)}, v137, true, false, 1, 2},
		{"type RollingUpdate with no rollingUpdate", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}}, v137, true, false, 1, 2},
		{"maxUnavailable 3 of 10", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](10), UpdateStrategy: ssRolling(nil, iv(3))}, v137, true, false, 3, 7},
		{"maxUnavailable 10% of 25 rounds down to 2", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](25), UpdateStrategy: ssRolling(nil, pct("10%"))}, v137, true, false, 2, 23},
		{"maxUnavailable 50% of 5 is 2", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](5), UpdateStrategy: ssRolling(nil, pct("50%"))}, v137, true, false, 2, 3},
		{"maxUnavailable 10% of 5 is at least 1", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](5), UpdateStrategy: ssRolling(nil, pct("10%"))}, v137, true, false, 1, 4},
		{"maxUnavailable 100% of 5", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](5), UpdateStrategy: ssRolling(nil, pct("100%"))}, v137, true, false, 5, 0},
		{"the zero Minor is the newest", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](10), UpdateStrategy: ssRolling(nil, iv(3))}, kubeversion.Minor{}, true, false, 3, 7},
		{"1.36 ignores maxUnavailable", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](10), UpdateStrategy: ssRolling(nil, iv(3))}, v136, true, true, 1, 9},
		{"partition 8 of 10: 2 to update", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](10), UpdateStrategy: ssRolling(ptr.To[int32](8), iv(5))}, v137, true, false, 5, 8},
		{"partition at the replicas: nothing rolls", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), UpdateStrategy: ssRolling(ptr.To[int32](3), nil)}, v137, false, false, 1, 0},
		{"OnDelete", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}, v137, false, false, 0, 0},
		{"Recreate", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RecreateStatefulSetStrategyType}}, v137, true, false, 3, 0},
		{"0 replicas", appsv1.StatefulSetSpec{Replicas: ptr.To[int32](0)}, v137, false, false, 0, 0},
	} {
		r, err := StatefulSet(&tc.spec, tc.controller)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r.Rolls != tc.rolls || r.MaxUnavailableIgnored != tc.ignored || r.MaxUnavailable != tc.maxUnavailable || r.MinReady != tc.minReady || r.MaxSurge != 0 {
			t.Errorf("%s: rolls %v, ignored %v, maxUnavailable %d, minReady %d, surge %d; want %v, %v, %d, %d, 0",
				tc.name, r.Rolls, r.MaxUnavailableIgnored, r.MaxUnavailable, r.MinReady, r.MaxSurge, tc.rolls, tc.ignored, tc.maxUnavailable, tc.minReady)
		}
	}
	if _, err := StatefulSet(&appsv1.StatefulSetSpec{UpdateStrategy: ssRolling(nil, pct("x%"))}, v137); err == nil {
		t.Error("an invalid percentage: no error")
	}
}
