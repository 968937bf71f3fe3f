package karpenter

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ladder-eks/ladder/internal/twin/kube"
)

// Nominations are Karpenter's memory of where the pods of a node being
// disrupted will go: when a command starts, each of its candidates' pods is
// nominated to the existing node or replacement NodeClaim the simulation
// placed it on, and that capacity stays reserved until the pod is evicted
// (its replacement pod is then pending or bound, and counted as such) or the
// command ends. Later simulations pack only the pods nobody planned for, so a
// disruption wave of hundreds of nodes does not re-plan every draining pod
// for every new candidate (cluster state's nominations in Karpenter).

type nomination struct {
	target string // capacityKey of the node or NodeClaim
	source string // node the pod runs on
	req    kube.Resources
	cmd    *command
}

// capacityKey names a place in the simulation: a NodeClaim (launched or
// not) by its name, a node that has none by its own.
func (k *Karpenter) capacityKey(node string) string {
	if c := k.byNode[node]; c != nil {
		return c.simName()
	}
	return node
}

func (k *Karpenter) nominate(cmd *command) {
	candidatePods := map[*corev1.Pod]string{}
	for _, c := range cmd.candidates {
		for _, p := range c.pods {
			candidatePods[p] = c.claim.Node
		}
	}
	add := func(p *corev1.Pod, target string) {
		source, ok := candidatePods[p]
		if !ok {
			return
		}
		key := p.Namespace + "/" + p.Name
		n := &nomination{target: target, source: source, req: k.kube.RequestsOf(p), cmd: cmd}
		k.nominations[key] = n
		k.reservedOn[target] = k.reservedOn[target].Add(n.req)
		k.nominatedOn[source]++
	}
	for simName, pods := range cmd.plan.existing {
		target := simName
		if len(simName) < len("nodeclaim/") || simName[:len("nodeclaim/")] != "nodeclaim/" {
			target = k.capacityKey(simName)
		}
		for _, p := range pods {
			add(p, target)
		}
	}
	for i, sc := range cmd.plan.claims {
		if i >= len(cmd.launched) {
			break
		}
		for _, p := range sc.pods {
			add(p, "nodeclaim/"+cmd.launched[i].Name)
		}
	}
}

// release drops a pod's nomination.
func (k *Karpenter) release(podKey string) {
	n, ok := k.nominations[podKey]
	if !ok {
		return
	}
	delete(k.nominations, podKey)
	k.reservedOn[n.target] = k.reservedOn[n.target].Sub(n.req)
	if k.reservedOn[n.target] == (kube.Resources{}) {
		delete(k.reservedOn, n.target)
	}
	if k.nominatedOn[n.source]--; k.nominatedOn[n.source] <= 0 {
		delete(k.nominatedOn, n.source)
	}
}

// releaseCommand drops every nomination a command made.
func (k *Karpenter) releaseCommand(cmd *command) {
	for _, c := range cmd.candidates {
		for _, p := range c.pods {
			if n, ok := k.nominations[p.Namespace+"/"+p.Name]; ok && n.cmd == cmd {
				k.release(p.Namespace + "/" + p.Name)
			}
		}
	}
}

// releaseNode drops the nominations of the pods still on a node.
func (k *Karpenter) releaseNode(c *NodeClaim) {
	if c.command != nil {
		k.releaseCommand(c.command)
	}
}
