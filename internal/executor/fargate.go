package executor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// fargateProfileLabel is the label EKS puts on a Fargate node (and its pod):
// the profile that scheduled it.
const fargateProfileLabel = "eks.amazonaws.com/fargate-profile"

// A RestartObserver is an Observer that also follows a Fargate profile's
// rolling restart, for a report: each workload restarted, and each reading
// of the restart's gate — once per second of the port's clock until the
// profile's pods have moved — with the nodes the profile had when the
// restart began, so it can measure how many were disrupted at once.
type RestartObserver interface {
	RolloutRestarted(w kubeport.Workload)
	RestartPolled(profile string, nodes []string)
}

// RestartFargate is a Fargate profile's hop (semantics.md §E: a Fargate
// pod's kubelet is the cluster's version when the pod starts, so moving
// a pod to the new version means replacing it; the user guide's "rolling
// restart of all Fargate Pods"). It finds the workloads of every pod on a
// node of the profile whose kubelet is below the hop's version, kubectl
// rollout restarts each Deployment and StatefulSet in name order, then
// waits until kubectl rollout status says each is done, every pod has a
// home and every node of the profile runs the new version. A pod with no
// Deployment or StatefulSet cannot be restarted: the step fails and says
// what to do.
func (e *Executor) RestartFargate(ctx context.Context, profile string, to kubeversion.Minor) error {
	k := e.Ports.Kube
	nodes, err := k.ListNodes(ctx)
	if err != nil {
		return err
	}
	var onProfile, bare []string
	seen := map[kubeport.Workload]bool{}
	var restart []kubeport.Workload
	for i := range nodes {
		n := &nodes[i]
		if n.Labels[fargateProfileLabel] != profile {
			continue
		}
		onProfile = append(onProfile, n.Name)
		if v, err := kubeversion.Parse(n.Status.NodeInfo.KubeletVersion); err == nil && v == to {
			continue
		}
		pods, err := k.ListPods(ctx, kubeport.PodQuery{Node: n.Name})
		if err != nil {
			return err
		}
		for j := range pods {
			w, ok := kubeport.ControllerOf(&pods[j])
			if !ok || (w.Kind != "Deployment" && w.Kind != "StatefulSet") {
				bare = append(bare, pods[j].Namespace+"/"+pods[j].Name)
				continue
			}
			if !seen[w] {
				seen[w] = true
				restart = append(restart, w)
			}
		}
	}
	if len(bare) > 0 {
		sort.Strings(bare)
		return fmt.Errorf("node group %s (Fargate profile): pod(s) %s have no Deployment or StatefulSet to restart; delete and recreate them to move them to %s", profile, strings.Join(bare, ", "), to)
	}
	// kind/namespace/name as one string, the order the restarts have
	// always been made in.
	key := func(w kubeport.Workload) string { return w.Kind + "/" + w.Namespace + "/" + w.Name }
	sort.Slice(restart, func(i, j int) bool { return key(restart[i]) < key(restart[j]) })
	watcher, _ := e.Observer.(RestartObserver)
	for _, w := range restart {
		// A restart is a disruption: a resumed run does not make it twice.
		if _, _, err := e.once("RolloutRestart/"+key(w), func(*string) (string, error) {
			if err := kubeport.RolloutRestart(ctx, k, w); err != nil {
				return "", fmt.Errorf("node group %s (Fargate profile): %v", profile, err)
			}
			if watcher != nil {
				watcher.RolloutRestarted(w)
			}
			e.Observer.Event("Normal", "RolloutRestarted", fmt.Sprintf("Fargate profile %s: kubectl rollout restart %s/%s -n %s", profile, strings.ToLower(w.Kind), w.Name, w.Namespace))
			return "", nil
		}); err != nil {
			return err
		}
	}
	return e.WaitFor(ctx, kubeport.Polled{Every: time.Second, Gate: kubeport.AllOf{
		kubeport.Until{What: "Fargate profile " + profile + " polled", Holds: func(context.Context) (bool, error) {
			if watcher != nil {
				watcher.RestartPolled(profile, onProfile)
			}
			return true, nil
		}},
		kubeport.RolloutsComplete{Workloads: restart},
		kubeport.PodsSettled{},
		kubeport.NodesAtMinor{Label: fargateProfileLabel, Value: profile, Minor: to},
	}})
}
