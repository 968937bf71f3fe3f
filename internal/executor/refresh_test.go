package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// AL2023 x86_64 AMIs of the catalog. On t0 (2026-03-10) the newest 1.31
// one is v20260220: v20260320 is not released yet.
const (
	al2023v130     = "ami-0f676a166352f02ab" // 1.30 v20260220
	al2023v131     = "ami-9611a9490b074d3c1" // 1.31 v20260220
	al2023v131Name = "amazon-eks-node-al2023-x86_64-standard-1.31-v20260220"
)

// groupState is the group as the APIs show it after the step: its launch
// template version and image, its instances' images, its last refresh.
func groupState(t *testing.T, api *twinaws.AutoScaling) string {
	t.Helper()
	ctx := context.Background()
	groups, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"workers"}})
	if err != nil {
		t.Fatal(err)
	}
	g := groups.AutoScalingGroups[0]
	lt, err := api.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: g.LaunchTemplate.LaunchTemplateName,
		Versions: []string{aws.ToString(g.LaunchTemplate.Version)}})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]int{}
	for _, in := range g.Instances {
		images[aws.ToString(in.ImageId)]++
	}
	refreshes, err := api.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String("workers")})
	if err != nil {
		t.Fatal(err)
	}
	state := fmt.Sprintf("launch template workers:%s %s; instances %v; ",
		aws.ToString(g.LaunchTemplate.Version), aws.ToString(lt.LaunchTemplateVersions[0].LaunchTemplateData.ImageId), images)
	if len(refreshes.InstanceRefreshes) == 0 {
		return state + "no refresh"
	}
	r := refreshes.InstanceRefreshes[0]
	return state + fmt.Sprintf("refresh %s %d%%, min healthy %d%%", r.Status, aws.ToInt32(r.PercentageComplete), aws.ToInt32(r.Preferences.MinHealthyPercentage))
}

// The self-managed step: a new launch template version with the family's
// newest AMI for the hop (as of the twin's clock), an instance refresh to
// $Latest with the scenario's preferences, and the step's end at the event
// that ends the refresh. With min healthy 50 % the four instances go two
// at a time, each set launched in 2 s and warmed up for a minute: 124 s;
// with Auto Scaling's defaults (min healthy 90 %, the group's 300 s health
// check grace period as warm-up) one at a time: 4 × 302 s.
func TestRefreshGroup(t *testing.T) {
	half := &asgtypes.RefreshPreferences{MinHealthyPercentage: aws.Int32(50), InstanceWarmup: aws.Int32(60)}
	for _, tc := range []struct {
		name     string
		image    string
		prefs    *asgtypes.RefreshPreferences
		deadline time.Duration
		wantErr  string
		want     []string
		state    string
	}{{
		name: "a new launch template version with the hop's AMI, then a refresh to it", image: al2023v130, prefs: half, deadline: time.Hour,
		want: []string{
			"  0s event Normal LaunchTemplateUpdated: node group workers: launch template workers gets image " + al2023v131 + " (" + al2023v131Name + ")",
			"124s refresh ended",
		},
		state: "launch template workers:2 " + al2023v131 + "; instances map[" + al2023v131 + ":4]; refresh Successful 100%, min healthy 50%",
	}, {
		name: "a group already on the hop's newest AMI is refreshed as it is", image: al2023v131, prefs: half, deadline: time.Hour,
		want:  []string{"124s refresh ended"},
		state: "launch template workers:1 " + al2023v131 + "; instances map[" + al2023v131 + ":4]; refresh Successful 100%, min healthy 50%",
	}, {
		name: "Auto Scaling's defaults without preferences: one at a time", image: al2023v130, deadline: time.Hour,
		want: []string{
			"  0s event Normal LaunchTemplateUpdated: node group workers: launch template workers gets image " + al2023v131 + " (" + al2023v131Name + ")",
			"1208s refresh ended",
		},
		state: "launch template workers:2 " + al2023v131 + "; instances map[" + al2023v131 + ":4]; refresh Successful 100%, min healthy 90%",
	}, {
		name: "a refresh still running at the deadline leaves the step stuck", image: al2023v130, prefs: half, deadline: 100 * time.Second,
		wantErr: ErrTimeLimit.Error(),
		want: []string{
			"  0s event Normal LaunchTemplateUpdated: node group workers: launch template workers gets image " + al2023v131 + " (" + al2023v131Name + ")",
			"100s refresh ended",
		},
		// At 100 s the first set has warmed up and the second is
		// launching in place of the last two old instances.
		state: "launch template workers:2 " + al2023v131 + "; instances map[" + al2023v131 + ":4]; refresh InProgress 50%, min healthy 50%",
	}, {
		name: "refused preferences fail the step with Auto Scaling's error", image: al2023v130, deadline: time.Hour,
		prefs:   &asgtypes.RefreshPreferences{MaxHealthyPercentage: aws.Int32(150)},
		wantErr: "node group workers: ValidationError: ",
		want: []string{
			"  0s event Normal LaunchTemplateUpdated: node group workers: launch template workers gets image " + al2023v131 + " (" + al2023v131Name + ")",
			"  0s refresh ended",
		},
		// Auto Scaling refuses the refresh as a whole: the group keeps
		// its launch template version.
		state: "launch template workers:1 " + al2023v130 + "; instances map[" + al2023v130 + ":4]; no refresh",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			ex, api := refreshTwin(t, rec, tc.image, tc.deadline)
			err := ex.RefreshGroup(context.Background(), "workers", tc.prefs, kubeversion.MustParse("1.31"))
			rec.log("refresh ended")
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)) {
				t.Errorf("RefreshGroup = %v, want %q", err, tc.wantErr)
			}
			if got, want := strings.Join(rec.lines, "\n"), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("calls:\n%s\nwant:\n%s", got, want)
			}
			if got := groupState(t, api); got != tc.state {
				t.Errorf("after the step: %s\nwant:          %s", got, tc.state)
			}
		})
	}
}
