package live

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/ladder-eks/ladder/internal/drainpredict"
	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/inventory"
	"github.com/ladder-eks/ladder/internal/kubelist"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// listNodes lists the cluster's nodes.
func listNodes(ctx context.Context, c *clients, chunk int64) ([]corev1.Node, error) {
	return kubelist.All[corev1.Node](ctx, chunk, metav1.ListOptions{}, kubelist.Page(c.cs.CoreV1().Nodes().List))
}

// fillCluster completes the cluster facts from the nodes and the pods:
// each node with its group (internal/inventory's reading of its labels)
// and its kube-proxy build (the tag of the kube-proxy pod's image on it,
// else what the node reports), the node groups as the inventory sees them,
// the region and zones of the nodes' topology labels.
func fillCluster(c *insights.Cluster, nodes []corev1.Node, objs []*insights.Object) {
	proxies := map[string]string{}
	for _, o := range objs {
		if p, ok := o.Typed.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			if v := insights.KubeProxyTag(p); v != "" {
				proxies[p.Spec.NodeName] = v
			}
		}
	}
	ptrs := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		ptrs[i] = &nodes[i]
	}
	group := map[string]string{}
	for _, g := range inventory.Build(inventory.Source{Kind: "cluster"}, inventory.Input{Nodes: ptrs}).Groups {
		ng := insights.NodeGroup{Name: g.Name, Type: insights.GroupType(g.Type), Zones: keys(g.Zones), AMIs: keys(g.AMIs),
			KubeletVersions: keys(g.KubeletVersions), Nodes: slices.Clone(g.NodeNames), CustomAMI: g.Type == inventory.CustomAMI}
		if lts := keys(g.LaunchTemplates); len(lts) > 0 {
			ng.LaunchTemplate = lts[0]
		}
		c.NodeGroups = append(c.NodeGroups, ng)
		for _, n := range g.NodeNames {
			group[n] = g.Name
		}
	}
	sort.Slice(c.NodeGroups, func(i, j int) bool { return c.NodeGroups[i].Name < c.NodeGroups[j].Name })
	zones := map[string]int{}
	for _, n := range nodes {
		zone := n.Labels[corev1.LabelTopologyZone]
		if zone == "" {
			zone = n.Labels[corev1.LabelFailureDomainBetaZone]
		}
		if zone != "" {
			zones[zone]++
		}
		if r := n.Labels[corev1.LabelTopologyRegion]; r != "" && c.Region == "" {
			c.Region = r
		}
		proxy := proxies[n.Name]
		if proxy == "" {
			//lint:ignore SA1019 where no kube-proxy pod runs (Fargate) only the node says it
			proxy = n.Status.NodeInfo.KubeProxyVersion
		}
		c.Nodes = append(c.Nodes, insights.Node{Name: n.Name, KubeletVersion: n.Status.NodeInfo.KubeletVersion, KubeProxyVersion: proxy,
			Group: group[n.Name], Zone: zone, Labels: n.Labels})
	}
	sort.Slice(c.Nodes, func(i, j int) bool { return c.Nodes[i].Name < c.Nodes[j].Name })
	c.Zones = keys(zones)
}

func keys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// zoneKeys are the node-affinity keys an EBS volume's zone is written
// under: the EBS CSI driver's, the well-known label, the in-tree plugin's.
var zoneKeys = []string{"topology.ebs.csi.aws.com/zone", corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaZone}

// listVolumes lists the claims and volumes (cluster facts only: core/v1
// claims and volumes are not deprecated, so they are not objects).
func listVolumes(ctx context.Context, c *clients, chunk int64) ([]corev1.PersistentVolumeClaim, []corev1.PersistentVolume, error) {
	claims, err := kubelist.All[corev1.PersistentVolumeClaim](ctx, chunk, metav1.ListOptions{}, kubelist.Page(c.cs.CoreV1().PersistentVolumeClaims("").List))
	if err != nil || len(claims) == 0 {
		return nil, nil, err
	}
	vols, err := kubelist.All[corev1.PersistentVolume](ctx, chunk, metav1.ListOptions{}, kubelist.Page(c.cs.CoreV1().PersistentVolumes().List))
	return claims, vols, err
}

// volumes are the bound claims whose volume lives in one zone, with the
// pods that use them, their nodes and workloads (a ReplicaSet's pods are
// its Deployment's).
func volumes(claims []corev1.PersistentVolumeClaim, pvs []corev1.PersistentVolume, objs []*insights.Object) []insights.Volume {
	zoneOf := map[string]string{}
	for _, pv := range pvs {
		if z := volumeZone(&pv); z != "" {
			zoneOf[pv.Name] = z
		}
	}
	rsOwner := map[string]string{} // namespace/name → "Deployment ns/name"
	var pods []*corev1.Pod
	for _, o := range objs {
		switch t := o.Typed.(type) {
		case *corev1.Pod:
			pods = append(pods, t)
		case interface {
			GetOwnerReferences() []metav1.OwnerReference
		}:
			if o.Kind == "ReplicaSet" {
				for _, ref := range t.GetOwnerReferences() {
					if ref.Controller != nil && *ref.Controller {
						rsOwner[o.Namespace+"/"+o.Name] = ref.Kind + " " + o.Namespace + "/" + ref.Name
					}
				}
			}
		}
	}
	var out []insights.Volume
	for _, c := range claims {
		zone := zoneOf[c.Spec.VolumeName]
		if zone == "" {
			continue
		}
		var users []insights.VolumeUser
		for _, p := range pods {
			if p.Namespace != c.Namespace || !insights.UsesClaim(p, c.Name) {
				continue
			}
			u := insights.VolumeUser{Pod: p.Namespace + "/" + p.Name, Node: p.Spec.NodeName}
			if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
				u.Workload = ref.Kind + " " + p.Namespace + "/" + ref.Name
				if up, ok := rsOwner[p.Namespace+"/"+ref.Name]; ok && ref.Kind == "ReplicaSet" {
					u.Workload = up
				}
			}
			users = append(users, u)
		}
		out = append(out, insights.NewVolume(c.Namespace, c.Name, zone, c.Spec.StorageClassName, users))
	}
	insights.SortVolumes(out)
	return out
}

// volumeZone is the one zone a volume's required node affinity (or, for
// old in-tree volumes, its zone label) pins it to; "" for volumes of no
// zone or several.
func volumeZone(pv *corev1.PersistentVolume) string {
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		zones := map[string]bool{}
		for _, term := range na.Required.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if slices.Contains(zoneKeys, e.Key) && e.Operator == corev1.NodeSelectorOpIn {
					for _, z := range e.Values {
						zones[z] = true
					}
				}
			}
		}
		if len(zones) == 1 {
			for z := range zones {
				return z
			}
		}
		if len(zones) > 1 {
			return ""
		}
	}
	for _, k := range zoneKeys[1:] {
		if z := pv.Labels[k]; z != "" && !strings.Contains(z, "__") {
			return z
		}
	}
	return ""
}

// PredictDrains predicts, in Ladder's twin, the drains of a live cluster
// that Read read into in (drain-blocked, drain-timeout-risk): it lists the
// nodes, claims and volumes again (the twin needs each node's allocatable
// and taints, and each claim's volume), loads them with in's pods,
// workloads and PodDisruptionBudgets into a twin with each pod on its
// node, and drains up to drainpredict.PerGroup nodes of each group,
// each on its own (drainpredict.Live). The twin has no node group,
// Karpenter or Fargate of its own: without the node group's surge or
// Karpenter's new nodes, a pod that fits on no other existing node is
// reported Pending. On success in.Cluster.Drains and DrainsPredicted are
// set; on an error they are left alone and the drain checks are skipped.
func PredictDrains(ctx context.Context, cfg *rest.Config, in *insights.Input, opts Options) error {
	if opts.ChunkSize == 0 {
		opts.ChunkSize = DefaultChunkSize
	}
	c, err := newClients(cfg)
	if err != nil {
		return err
	}
	nodes, err := listNodes(ctx, c, opts.ChunkSize)
	if err != nil {
		return serverError(c.host, "listing nodes", err)
	}
	// Without claims (forbidden), pods that mount one are not placed
	// again once evicted; the read already reported the forbidden list.
	claims, pvs, _ := listVolumes(ctx, c, opts.ChunkSize)
	start := in.Now
	if start.IsZero() {
		start = time.Now().UTC()
	}
	return predictDrains(in, nodes, claims, pvs, start)
}

// predictDrains fills in.Cluster's drain prediction from the live nodes,
// claims and volumes and in's listed objects.
func predictDrains(in *insights.Input, nodes []corev1.Node, claims []corev1.PersistentVolumeClaim, pvs []corev1.PersistentVolume, start time.Time) error {
	cl := in.Cluster
	if cl == nil {
		return fmt.Errorf("drain prediction: no cluster facts")
	}
	lc := &drainpredict.LiveCluster{Start: start, Region: cl.Region, Zones: cl.Zones}
	groupOf := map[string]string{}
	for _, n := range cl.Nodes {
		groupOf[n.Name] = n.Group
	}
	for i := range nodes {
		n := &nodes[i]
		ref := twinbuild.GroupRef{Name: groupOf[n.Name]}
		if g := cl.Group(ref.Name); g != nil {
			ref.Type = string(g.Type)
		}
		lc.Nodes = append(lc.Nodes, drainpredict.LiveNode{Node: n, Group: ref})
	}
	for _, o := range in.Objects {
		if !strings.HasPrefix(o.Source.Origin, "live:") {
			continue // Helm's manifests and the deprecated-API gauge are not the cluster's state
		}
		if m, ok := o.Typed.(metav1.Object); ok {
			lc.Objects = append(lc.Objects, m)
		}
	}
	for i := range pvs {
		lc.Objects = append(lc.Objects, &pvs[i])
	}
	for i := range claims {
		lc.Objects = append(lc.Objects, &claims[i])
	}
	drains, refused, err := drainpredict.Live(lc, drainpredict.PerGroup)
	if err != nil {
		return fmt.Errorf("drain prediction: %w", err)
	}
	if len(refused) > 0 {
		more := ""
		if len(refused) > 3 {
			more = fmt.Sprintf(" and %d more", len(refused)-3)
			refused = refused[:3]
		}
		in.Problems = append(in.Problems, insights.Problem{Source: insights.Source{Origin: cl.Source}, Severity: insights.Warning,
			Message: fmt.Sprintf("the drain prediction left out what Ladder's twin does not model: %s%s; drains may differ where their pods run", strings.Join(refused, "; "), more),
			Fix:     "nothing to change in the cluster; weigh drain-blocked and drain-timeout-risk for those workloads yourself"})
	}
	cl.Drains, cl.DrainsPredicted = nil, true
	for _, d := range drains {
		nd := insights.NodeDrain{Node: d.Node, Group: d.Group.Name, GroupType: insights.GroupType(d.Group.Type), Zone: d.Zone,
			Limit: d.Limit, Duration: d.Duration, Finished: d.Finished, Error: d.Error, Evicted: d.Evicted}
		for _, b := range d.Blocks {
			nd.Blocks = append(nd.Blocks, insights.DrainBlock{Pod: b.Pod, Workload: liveWorkload(b.Workload), PDB: b.PDB, For: b.For, Outcome: b.Outcome, Message: b.Message})
		}
		for _, p := range d.Pending {
			nd.Pending = append(nd.Pending, insights.PendingPod{Pod: p.Pod, Workload: liveWorkload(p.Workload), VolumeZones: p.VolumeZones,
				Reason: strings.TrimSuffix(p.Reason, ".") + " (predicted on the cluster's existing nodes, without the node group's surge or Karpenter's new nodes)"})
		}
		cl.Drains = append(cl.Drains, nd)
	}
	return nil
}

// liveWorkload is "Deployment shop/web"; "" for a bare pod.
func liveWorkload(w scenario.WorkloadRef) string {
	if w.Kind == "" || w.Kind == "Pod" {
		return ""
	}
	return w.Kind + " " + w.Namespace + "/" + w.Name
}
