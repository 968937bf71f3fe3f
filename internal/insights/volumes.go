package insights

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// VolumeUser is one pod that mounts a claim: "namespace/name", the node it
// runs on ("" while pending) and its owning workload ("Deployment
// orders/orders-mysql"; "" for a bare pod).
type VolumeUser struct {
	Pod, Node, Workload string
}

// NewVolume is a zoned claim's Volume with its users folded in: their pods
// sorted, their nodes and workloads as sorted sets. A scenario and a live
// cluster both build their Volumes here, so pv-zone reads the same facts
// from either.
func NewVolume(namespace, claim, zone string, storageClass *string, users []VolumeUser) Volume {
	v := Volume{Namespace: namespace, Claim: claim, Zone: zone}
	if storageClass != nil {
		v.StorageClass = *storageClass
	}
	nodes, workloads := map[string]bool{}, map[string]bool{}
	for _, u := range users {
		v.Pods = append(v.Pods, u.Pod)
		if u.Node != "" {
			nodes[u.Node] = true
		}
		if u.Workload != "" {
			workloads[u.Workload] = true
		}
	}
	sort.Strings(v.Pods)
	v.Nodes, v.Workloads = sortedKeys(nodes), sortedKeys(workloads)
	return v
}

// SortVolumes orders volumes by namespace, then claim.
func SortVolumes(vs []Volume) {
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].Namespace != vs[j].Namespace {
			return vs[i].Namespace < vs[j].Namespace
		}
		return vs[i].Claim < vs[j].Claim
	})
}

// UsesClaim reports whether a pod mounts the persistent volume claim.
func UsesClaim(p *corev1.Pod, claim string) bool {
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}
