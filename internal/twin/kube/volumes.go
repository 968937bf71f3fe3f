package kube

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// pvcState is a claim and its (EBS-like, ReadWriteOnce, zonal) volume: bound
// to a zone, attached to at most one node at a time.
type pvcState struct {
	pvc  *corev1.PersistentVolumeClaim
	zone string // "" until the volume exists
	// attachment
	node       string
	lastNode   string
	holders    map[*podState]bool
	detachedAt time.Time // the volume is free of its old node from then on
	waiters    []*podState
}

const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

func (c *Cluster) storageClassFor(pvc *corev1.PersistentVolumeClaim) *storagev1.StorageClass {
	if pvc.Spec.StorageClassName != nil {
		return c.storageClasses[*pvc.Spec.StorageClassName]
	}
	for _, name := range sortedKeys(c.storageClasses) {
		if c.storageClasses[name].Annotations[defaultClassAnnotation] == "true" {
			return c.storageClasses[name]
		}
	}
	return nil
}

func waitForFirstConsumer(sc *storagev1.StorageClass) bool {
	return sc != nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// applyPVC stores a claim. A claim naming a PersistentVolume takes that
// volume's zone; a claim whose class binds Immediately is provisioned now in
// one of its allowed zones; a WaitForFirstConsumer claim waits for a pod.
func (c *Cluster) applyPVC(pvc *corev1.PersistentVolumeClaim) {
	k := key(pvc.Namespace, pvc.Name)
	if _, ok := c.pvcs[k]; ok {
		return // claims are immutable in what the twin reads
	}
	st := &pvcState{pvc: pvc, holders: map[*podState]bool{}}
	c.pvcs[k] = st
	pvc.Status.Phase = corev1.ClaimPending
	if pvc.Spec.VolumeName != "" {
		if pv, ok := c.pvs[pvc.Spec.VolumeName]; ok {
			c.bindClaim(st, pvZone(pv))
		}
		return
	}
	sc := c.storageClassFor(pvc)
	if sc == nil || waitForFirstConsumer(sc) {
		return
	}
	zones := allowedZones(sc, c.opts.Zones)
	if len(zones) == 0 {
		return
	}
	c.bindClaim(st, zones[c.eng.Rand().IntN(len(zones))])
}

func (c *Cluster) bindClaim(st *pvcState, zone string) {
	st.zone = zone
	st.pvc.Status.Phase = corev1.ClaimBound
	if st.pvc.Spec.VolumeName == "" {
		st.pvc.Spec.VolumeName = "pvc-" + string(c.newUID("PersistentVolume"))
	}
}

// PVCZone returns the zone a claim's volume lives in, or "" if unbound.
func (c *Cluster) PVCZone(namespace, name string) string {
	if st, ok := c.pvcs[key(namespace, name)]; ok {
		return st.zone
	}
	return ""
}

func pvZone(pv *corev1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, r := range t.MatchExpressions {
			if (r.Key == corev1.LabelTopologyZone || r.Key == corev1.LabelFailureDomainBetaZone || r.Key == "topology.ebs.csi.aws.com/zone") && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) > 0 {
				return r.Values[0]
			}
		}
	}
	return ""
}

func allowedZones(sc *storagev1.StorageClass, clusterZones []string) []string {
	if sc == nil || len(sc.AllowedTopologies) == 0 {
		return clusterZones
	}
	var out []string
	for _, t := range sc.AllowedTopologies {
		for _, e := range t.MatchLabelExpressions {
			if e.Key == corev1.LabelTopologyZone || e.Key == "topology.ebs.csi.aws.com/zone" {
				out = append(out, e.Values...)
			}
		}
	}
	return out
}

func podClaims(p *corev1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		}
	}
	return out
}

// volumeFilter is the scheduler's VolumeBinding/VolumeZone check. It returns
// a pre-filter error (the pod fits no node) or a per-node reason.
func (c *Cluster) volumePrefilter(p *corev1.Pod) string {
	for _, name := range podClaims(p) {
		st, ok := c.pvcs[key(p.Namespace, name)]
		if !ok {
			return fmt.Sprintf("persistentvolumeclaim %q not found", name)
		}
		if st.zone == "" && !waitForFirstConsumer(c.storageClassFor(st.pvc)) {
			return "pod has unbound immediate PersistentVolumeClaims"
		}
	}
	return ""
}

func (c *Cluster) volumeFits(p *corev1.Pod, ns *nodeState) string {
	zone := ns.zoneName
	for _, name := range podClaims(p) {
		st := c.pvcs[key(p.Namespace, name)]
		if st.zone != "" {
			if st.zone != zone {
				return "node(s) had volume node affinity conflict"
			}
			continue
		}
		allowed := false
		for _, z := range allowedZones(c.storageClassFor(st.pvc), c.opts.Zones) {
			if z == zone {
				allowed = true
			}
		}
		if !allowed {
			return "node(s) didn't find available persistent volumes to bind"
		}
	}
	return ""
}

// VolumeZones returns, for a pod, the zones its bound volumes pin it to
// (Karpenter turns these into a topology requirement).
func (c *Cluster) VolumeZones(p *corev1.Pod) []string {
	var out []string
	for _, name := range podClaims(p) {
		if st, ok := c.pvcs[key(p.Namespace, name)]; ok && st.zone != "" {
			out = append(out, st.zone)
		}
	}
	return out
}

// bindVolumes provisions WaitForFirstConsumer claims in the node's zone and
// records the pod as a user of its volumes.
func (c *Cluster) bindVolumes(ps *podState, ns *nodeState) {
	for _, name := range podClaims(ps.pod) {
		st := c.pvcs[key(ps.pod.Namespace, name)]
		if st == nil {
			continue
		}
		if st.zone == "" {
			c.bindClaim(st, ns.zone())
		}
	}
}

// volumesReadyAt returns when all the pod's volumes are attached to its
// node, or ok=false when a volume is still attached to another node: the pod
// then waits (the Multi-Attach error of an RWO volume) and starts when the
// volume detaches.
func (c *Cluster) volumesReadyAt(ps *podState) (time.Time, bool) {
	at := c.eng.Now()
	node := ps.node.node.Name
	for _, name := range podClaims(ps.pod) {
		st := c.pvcs[key(ps.pod.Namespace, name)]
		if st == nil {
			continue
		}
		switch {
		case st.node == node:
			st.holders[ps] = true
		case len(st.holders) > 0:
			st.waiters = append(st.waiters, ps)
			return time.Time{}, false
		default:
			start := at
			if st.detachedAt.After(start) {
				start = st.detachedAt
			}
			st.node = node
			st.holders[ps] = true
			if t := start.Add(c.opts.Timings.VolumeAttach); t.After(at) {
				at = t
			}
		}
	}
	return at, true
}

// releaseVolumes drops a removed pod's hold on its volumes; a volume no pod
// uses detaches and the first waiting pod takes it.
func (c *Cluster) releaseVolumes(ps *podState) {
	for _, name := range podClaims(ps.pod) {
		st := c.pvcs[key(ps.pod.Namespace, name)]
		if st == nil || !st.holders[ps] {
			continue
		}
		delete(st.holders, ps)
		if len(st.holders) > 0 {
			continue
		}
		st.lastNode = st.node
		st.node = ""
		st.detachedAt = c.eng.Now().Add(c.opts.Timings.VolumeDetach)
		waiters := st.waiters
		st.waiters = nil
		for _, w := range waiters {
			if _, alive := c.pods[w.key]; alive && !w.deleting && w.node != nil {
				c.startPod(w)
			}
		}
	}
}

// PersistentVolumeClaims returns the claims with their zones, sorted.
func (c *Cluster) PersistentVolumeClaims() []*corev1.PersistentVolumeClaim {
	out := make([]*corev1.PersistentVolumeClaim, 0, len(c.pvcs))
	for _, k := range sortedKeys(c.pvcs) {
		out = append(out, c.pvcs[k].pvc)
	}
	return out
}

// VolumesAttachedTo counts the volumes attached to, or still detaching
// from, a node — the VolumeAttachments Karpenter waits for.
func (c *Cluster) VolumesAttachedTo(node string) int {
	n := 0
	now := c.eng.Now()
	for _, st := range c.pvcs {
		if st.node == node || (st.lastNode == node && st.detachedAt.After(now)) {
			n++
		}
	}
	return n
}
