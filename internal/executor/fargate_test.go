package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// restartRecorder is the recorder with the restart's own calls.
type restartRecorder struct {
	*recorder
	polls   int
	maxDown int
}

func (r *restartRecorder) RolloutRestarted(w kubeport.Workload) { r.log("restarted %s", w) }

// RestartPolled counts the profile's pods terminating at this reading.
func (r *restartRecorder) RestartPolled(profile string, nodes []string) {
	r.polls++
	down := 0
	for _, n := range nodes {
		pods, _ := r.port.ListPods(context.Background(), kubeport.PodQuery{Node: n})
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				down++
			}
		}
	}
	r.maxDown = max(r.maxDown, down)
}

// TestRestartFargate: after the control plane went to 1.31, a profile's
// pods still run 1.30 kubelets. The executor restarts each Deployment and
// StatefulSet with a pod on the profile (in kind/namespace/name order,
// each once), and the step ends when the rollouts are done and every node
// of the profile runs 1.31 — each restarted pod waits the 45 s a Fargate
// micro-VM takes to provision; the gate is read once per second, where the
// observer measures. A pod no workload owns stops the step before
// anything is restarted.
func TestRestartFargate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		apps     []metav1.Object
		want     []string
		wantErr  string
		restarts int
	}{{
		name: "every workload restarted once, the step ends when the profile runs 1.31",
		apps: []metav1.Object{assetsApp("StatefulSet", "db", 1), assetsApp("Deployment", "web", 2), assetsApp("Deployment", "assets", 1)},
		want: []string{
			"  0s restarted deployment assets/assets",
			"  0s event Normal RolloutRestarted: Fargate profile fp: kubectl rollout restart deployment/assets -n assets",
			"  0s restarted deployment assets/web",
			"  0s event Normal RolloutRestarted: Fargate profile fp: kubectl rollout restart deployment/web -n assets",
			"  0s restarted statefulset assets/db",
			"  0s event Normal RolloutRestarted: Fargate profile fp: kubectl rollout restart statefulset/db -n assets",
		},
	}, {
		name:    "a bare pod cannot be restarted",
		apps:    []metav1.Object{assetsApp("Deployment", "web", 1), assetsApp("Pod", "debug", 0)},
		wantErr: "node group fp (Fargate profile): pod(s) assets/debug have no Deployment or StatefulSet to restart; delete and recreate them to move them to 1.31",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &restartRecorder{recorder: &recorder{}}
			ex, setKubelet := fargateTwin(t, rec, tc.apps...)
			setKubelet("v1.31.13-eks-113cf36")
			err := ex.RestartFargate(context.Background(), "fp", kubeversion.MustParse("1.31"))
			if fmt.Sprint(err) != fmt.Sprint(map[bool]any{true: nil, false: tc.wantErr}[tc.wantErr == ""]) {
				t.Fatalf("RestartFargate = %v, want %q", err, tc.wantErr)
			}
			if got, want := strings.Join(rec.lines, "\n"), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("calls:\n%s\nwant:\n%s", got, want)
			}
			if err != nil {
				return
			}
			nodes, _ := ex.Ports.Kube.ListNodes(context.Background())
			for _, n := range nodes {
				if n.Status.NodeInfo.KubeletVersion != "v1.31.13-eks-113cf36" {
					t.Errorf("node %s still runs %s", n.Name, n.Status.NodeInfo.KubeletVersion)
				}
			}
			pods, _ := ex.Ports.Kube.ListPods(context.Background(), kubeport.PodQuery{Namespace: "assets"})
			if len(pods) != 4 {
				t.Errorf("%d pods after the restart, want 4", len(pods))
			}
			if took := ex.Ports.Kube.Now().Sub(rec.start); took < 45*time.Second || took > 5*time.Minute {
				t.Errorf("the restart took %s: want at least one Fargate provisioning (45 s) and a few minutes at most", took)
			}
			if secs := int(ex.Ports.Kube.Now().Sub(rec.start).Seconds()); rec.polls < 2 || rec.polls > secs+1 {
				t.Errorf("the gate was read %d times in %d s: want once per second at most, and more than once", rec.polls, secs)
			}
			if rec.maxDown == 0 {
				t.Errorf("no reading saw a pod of the profile terminating")
			}
		})
	}
}
