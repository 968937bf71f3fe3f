package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
)

var t0 = time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)

// recorder is the observer: it writes down every call,
// with the virtual second it came at.
type recorder struct {
	port  kubeport.Port
	start time.Time
	lines []string
}

func (r *recorder) log(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf("%3.0fs ", r.port.Now().Sub(r.start).Seconds())+fmt.Sprintf(format, args...))
}

func (r *recorder) HopStarted(h plan.Hop)                { r.log("hop %s→%s", h.From, h.To) }
func (r *recorder) StepStarted(_ plan.Hop, st plan.Step) { r.log("start %s %s", st.Kind, st.Name) }
func (r *recorder) StepEnded(st plan.Step, err error) {
	switch {
	case IsTimeLimit(err):
		r.log("stuck %s %s", st.Kind, st.Name)
	case err != nil:
		r.log("failed %s %s: %v", st.Kind, st.Name, err)
	default:
		r.log("done %s %s", st.Kind, st.Name)
	}
}
func (r *recorder) AddonVersion(name, version, note string) {
	r.log("add-on %s at %s (%s)", name, version, note)
}
func (r *recorder) Event(eventType, reason, message string) {
	r.log("event %s %s: %s", eventType, reason, message)
}

// replacingEKS is fakeEKS with the managed node groups blue and green at
// 1.30, whose in-place update replaces a node's worth of pods: it deletes
// one of web's pods, which its Deployment recreates. EKS refuses to update
// the group named refuse.
type replacingEKS struct {
	groupsEKS
	port   kubeport.Port
	refuse string
}

func (f replacingEKS) UpdateNodegroupVersion(ctx context.Context, in *eks.UpdateNodegroupVersionInput, _ ...func(*eks.Options)) (*eks.UpdateNodegroupVersionOutput, error) {
	if aws.ToString(in.NodegroupName) == f.refuse {
		return nil, errors.New("refused")
	}
	pods, err := f.port.ListPods(ctx, kubeport.PodQuery{Namespace: "default"})
	if err != nil {
		return nil, err
	}
	return &eks.UpdateNodegroupVersionOutput{Update: &ekstypes.Update{Id: aws.String("u-3"), Status: ekstypes.UpdateStatusInProgress}},
		f.port.DeletePod(ctx, "default", pods[0].Name, new(int64))
}

func oneHop() plan.Plan {
	from, to := kubeversion.MustParse("1.30"), kubeversion.MustParse("1.31")
	return plan.Plan{Hops: []plan.Hop{{From: from, To: to, Steps: []plan.Step{
		{Kind: plan.PreChecks}, {Kind: plan.ControlPlane}, {Kind: plan.AddonUpdate, Name: "kube-proxy", From: "v1.30.0-eksbuild.1", To: "v1.30.0-eksbuild.1", Note: "nothing newer"},
		{Kind: plan.NodeGroup, Name: "blue", Strategy: "in-place"}, {Kind: plan.NodeGroup, Name: "green", Strategy: "in-place"},
	}}}}
}

// executor is an executor on a twin running web, with a control plane at
// 1.30 whose updates take 90 s.
func executor(t *testing.T, rec *recorder, deadline time.Duration) (*Executor, *fakeEKS) {
	p := webTwin(t)
	rec.port, rec.start = p, p.Now()
	api := &fakeEKS{eng: p.Cluster().Engine(), version: "1.30", took: 90 * time.Second}
	return &Executor{Cluster: "demo", Ports: Ports{Kube: p, EKS: api}, Observer: rec, Deadline: p.Now().Add(deadline)}, api
}

// begin is what every run of oneHop starts with: the control plane's step
// ends at the event that completes its update, 90 s in; kube-proxy has
// nothing newer and stays.
func begin() []string {
	return []string{
		"  0s hop 1.30→1.31",
		"  0s event Normal HopStarted: upgrading 1.30 → 1.31",
		"  0s start pre-checks ",
		"  0s event Normal PreChecksPassed: pre-checks for 1.31 passed: managed node groups at 1.30, every kubelet within the skew policy of 1.31",
		"  0s done pre-checks ",
		"  0s start control-plane ",
		"  0s event Normal ControlPlaneUpdating: updating the control plane from 1.30 to 1.31 (status UPDATING; pods are not restarted)",
		" 90s event Normal ControlPlaneUpdated: control plane updated to 1.31 (status ACTIVE; endpoint and OIDC issuer unchanged)",
		" 90s done control-plane ",
		" 90s start addon kube-proxy",
		" 90s add-on kube-proxy at v1.30.0-eksbuild.1 (nothing newer)",
		" 90s event Normal AddonUnchanged: add-on kube-proxy stays at v1.30.0-eksbuild.1: nothing newer",
		" 90s done addon kube-proxy",
	}
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fail     string
		deadline time.Duration
		wantErr  error
		want     []string
	}{{
		// After each node group the executor waits until the pods have a
		// home again: web's replacement pod starts in 5 s (the twin's
		// default PodStartup), so each group's step ends 5 s after it began.
		name: "every step in order, a node group ends when its pods are settled", deadline: time.Hour,
		want: append(begin(),
			" 90s start node-group blue", " 95s done node-group blue",
			" 95s start node-group green", "100s done node-group green"),
	}, {
		name: "a failed step stops the plan", fail: "blue", deadline: time.Hour, wantErr: errors.New("refused"),
		want: append(begin(),
			" 90s start node-group blue", " 90s failed node-group blue: refused"),
	}, {
		name: "a gate that does not hold by the deadline leaves the step stuck", deadline: 97 * time.Second, wantErr: ErrTimeLimit,
		want: append(begin(),
			" 90s start node-group blue", " 95s done node-group blue",
			" 95s start node-group green", " 97s stuck node-group green"),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			ex, api := executor(t, rec, tc.deadline)
			ex.Ports.EKS = replacingEKS{groupsEKS: groupsEKS{fakeEKS: api, groups: map[string]string{"blue": "1.30", "green": "1.30"}}, port: rec.port, refuse: tc.fail}
			err := ex.Run(context.Background(), oneHop())
			if fmt.Sprint(err) != fmt.Sprint(tc.wantErr) {
				t.Errorf("Run = %v, want %v", err, tc.wantErr)
			}
			if got, want := strings.Join(rec.lines, "\n"), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("calls:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
