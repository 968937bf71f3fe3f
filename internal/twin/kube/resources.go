package kube

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Resources is the part of a ResourceList the scheduler fits: CPU in
// millicores, memory in bytes and a pod count.
type Resources struct {
	MilliCPU int64
	Memory   int64
	Pods     int64
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{r.MilliCPU + o.MilliCPU, r.Memory + o.Memory, r.Pods + o.Pods}
}

// Sub returns r − o.
func (r Resources) Sub(o Resources) Resources {
	return Resources{r.MilliCPU - o.MilliCPU, r.Memory - o.Memory, r.Pods - o.Pods}
}

// FitsIn reports whether r fits within free.
func (r Resources) FitsIn(free Resources) bool {
	return r.MilliCPU <= free.MilliCPU && r.Memory <= free.Memory && r.Pods <= free.Pods
}

// Fits reports whether r fits within free, and if not, which resources
// are short, named as kube-scheduler names them.
func (r Resources) Fits(free Resources) (bool, []string) {
	if r.FitsIn(free) {
		return true, nil
	}
	var short []string
	if r.MilliCPU > free.MilliCPU {
		short = append(short, "Insufficient cpu")
	}
	if r.Memory > free.Memory {
		short = append(short, "Insufficient memory")
	}
	if r.Pods > free.Pods {
		short = append(short, "Too many pods")
	}
	return len(short) == 0, short
}

func (r Resources) String() string {
	return fmt.Sprintf("cpu=%dm memory=%dMi pods=%d", r.MilliCPU, r.Memory>>20, r.Pods)
}

// FromList converts a ResourceList.
func FromList(l corev1.ResourceList) Resources {
	return Resources{
		MilliCPU: l.Cpu().MilliValue(),
		Memory:   l.Memory().Value(),
		Pods:     l.Pods().Value(),
	}
}

// PodRequests is what a pod asks the scheduler for, computed as the
// scheduler does (k8s.io/component-helpers/resource.PodRequests: the larger
// of init and regular containers, plus overhead), plus one pod slot.
func PodRequests(pod *corev1.Pod) Resources {
	r := FromList(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	r.Pods = 1
	return r
}

// RequestsOf returns a stored pod's requests without recomputing them.
func (c *Cluster) RequestsOf(pod *corev1.Pod) Resources {
	if ps, ok := c.byPod[pod]; ok {
		return ps.req
	}
	return PodRequests(pod)
}
