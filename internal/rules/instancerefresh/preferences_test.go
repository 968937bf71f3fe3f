package instancerefresh

import (
	"reflect"
	"testing"
	"time"
)

// Resolve fills in the API's defaults (semantics.md §C; aws-apis.md §3.3):
// MinHealthyPercentage 90, MaxHealthyPercentage 100, the group's warm-up,
// CheckpointDelay 3600 s only when checkpoints are set. The refusals are
// tested through the twin's StartInstanceRefresh.
func TestResolveDefaults(t *testing.T) {
	warmup := 5 * time.Minute
	delay := 10 * time.Minute
	cases := []struct {
		name  string
		prefs Preferences
		want  Settings
	}{
		{name: "nothing set", want: Settings{MinHealthyPercentage: 90, MaxHealthyPercentage: 100, InstanceWarmup: warmup}},
		{name: "checkpoints take the default delay", prefs: Preferences{CheckpointPercentages: []int{50, 100}},
			want: Settings{MinHealthyPercentage: 90, MaxHealthyPercentage: 100, InstanceWarmup: warmup, CheckpointPercentages: []int{50, 100}, CheckpointDelay: time.Hour}},
		{name: "everything set", prefs: Preferences{MinHealthyPercentage: ptr(100), MaxHealthyPercentage: ptr(110), InstanceWarmup: &delay,
			CheckpointPercentages: []int{100}, CheckpointDelay: &delay, SkipMatching: true, BakeTime: time.Minute},
			want: Settings{MinHealthyPercentage: 100, MaxHealthyPercentage: 110, InstanceWarmup: delay, CheckpointPercentages: []int{100}, CheckpointDelay: delay, SkipMatching: true, BakeTime: time.Minute}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.prefs.Resolve(warmup)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Resolve = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func ptr(n int) *int { return &n }
