package scenario

import "time"

// The sizes a scenario may describe. They are the limits Kubernetes is
// designed and tested for ("Considerations for large clusters",
// kubernetes.io/docs/setup/best-practices/cluster-large: no more than 5,000
// nodes and no more than 150,000 total pods), so no real cluster a
// rehearsal stands for is refused, and a typo such as replicas: 100000000
// is a one-line error instead of a twin that runs out of memory.
const (
	// MaxNodes bounds the EC2 nodes the node groups start with (Karpenter
	// nodes' counts, managed and self-managed groups' desired sizes) and
	// each group's max.
	MaxNodes = 5000
	// MaxPods bounds the replicas of the Deployments and StatefulSets plus
	// the bare Pods, at the start and after any scale action.
	MaxPods = 150000
	// MaxTimeLimit bounds spec.timeLimit and --time-limit: 30 days of
	// virtual time, Karpenter's default expireAfter (720h), so one whole
	// expiry cycle fits and no run can be asked to simulate years.
	MaxTimeLimit = 720 * time.Hour
)
