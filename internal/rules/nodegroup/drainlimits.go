package nodegroup

import "time"

// The waits and time limits of a managed node group's drains and updates
// (semantics.md §B).
const (
	// UpgradeDrainLimit: "If the Pods don't leave the node within 15
	// minutes and there's no force flag, the upgrade phase fails with a
	// PodEvictionFailure error" (§B upgrade phase step 3, §F.9). The same
	// 15 minutes bound a scale-in: "Pod disruption budgets aren't respected
	// when ... reducing the desired node count. These actions try to evict
	// Pods on the node. But if it takes more than 15 minutes, the node is
	// terminated regardless" (§B Other MNG rules).
	UpgradeDrainLimit = 15 * time.Minute
	// DeleteDrainLimit: "If the node hasn't been drained after 5 minutes,
	// Amazon EKS lets Auto Scaling continue the forced termination of the
	// instance" (delete-managed-node-group.html).
	DeleteDrainLimit = 5 * time.Minute
	// EmptyWait: EKS "cordons the node after every Pod is evicted and waits
	// for 60 seconds" before it asks the Auto Scaling group to terminate it
	// (§B upgrade phase step 4, §F.9).
	EmptyWait = 60 * time.Second
	// EvictionRetry is how long EKS waits before evicting a pod again after
	// a refusal. AWS does not document it — PodEvictionFailure only says
	// "Reached max retries while trying to evict pods" (aws/containers-
	// roadmap#1282). Ladder uses kubectl drain's 5 s (EvictErrorRetryDelay,
	// §D.3), which eksctl's node-group drain also uses ("retry in 5 sec",
	// eksctl-io/eksctl#1244).
	EvictionRetry = 5 * time.Second
)
