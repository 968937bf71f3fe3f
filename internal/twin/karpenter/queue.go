package karpenter

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The orchestration queue (semantics.md §A.4, queue.go): a command taints
// its candidates karpenter.sh/disrupted:NoSchedule, launches replacements
// first, marks the candidates for deletion, and deletes them only once every
// replacement is initialized. A command whose replacements are not
// initialized within 10 minutes fails: the candidates are untainted and
// become schedulable again.

const queueRetryDuration = 10 * time.Minute // clamp(80ms × commands, 10m, 1h) for < 7,500 commands

type command struct {
	reason       string // drifted, empty, expired
	candidates   []*candidate
	replacements []*simClaim
	launched     []*NodeClaim
	created      time.Time
	// plan is the simulation that justified the command; its candidates'
	// pods are nominated to the places it found for them.
	plan packResult
}

func (k *Karpenter) startCommand(cmd *command) {
	cmd.created = k.eng.Now()
	for _, c := range cmd.candidates {
		c.claim.command = cmd
		c.claim.disruptionReason = cmd.reason
		_ = k.kube.AddTaint(c.claim.Node, corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule})
	}
	k.log(Event{Code: "DisruptionStarted", Message: k.disruptionMessage(cmd), Reason: cmd.reason,
		NodePool: cmd.candidates[0].claim.NodePool, NodeClaim: cmd.candidates[0].claim.Name, Node: cmd.candidates[0].claim.Node})
	for _, r := range cmd.replacements {
		cmd.launched = append(cmd.launched, k.createNodeClaim(r))
	}
	for _, c := range cmd.candidates {
		c.claim.markedForDeletion = true
		k.noteDisrupting(c.claim, true)
	}
	k.nominate(cmd)
	k.queue = append(k.queue, cmd)
	k.eng.After(queueRetryDuration, k.commandProgress)
	k.commandProgress()
}

// disruptionMessage is Karpenter's log line for a command.
func (k *Karpenter) disruptionMessage(cmd *command) string {
	pods := 0
	names := ""
	for i, c := range cmd.candidates {
		pods += len(c.pods)
		if i > 0 {
			names += ", "
		}
		names += c.claim.launchedType()
	}
	if len(cmd.replacements) == 0 {
		return fmt.Sprintf("disrupting nodeclaim(s) via delete, terminating %d nodes (%d pods) %s", len(cmd.candidates), pods, names)
	}
	return fmt.Sprintf("disrupting nodeclaim(s) via replace, terminating %d nodes (%d pods) %s and replacing with node from types %s",
		len(cmd.candidates), pods, names, typeList(cmd.replacements[0].options, 5))
}

// commandProgress is the queue's reconcile: finish commands whose
// replacements are initialized, fail those past their deadline.
func (k *Karpenter) commandProgress() {
	var keep []*command
	for _, cmd := range k.queue {
		ready, lost := true, false
		for _, r := range cmd.launched {
			if _, ok := k.claims[r.Name]; !ok {
				lost = true
			} else if r.Initialized.IsZero() {
				ready = false
			}
		}
		switch {
		case lost || (!ready && !k.eng.Now().Before(cmd.created.Add(queueRetryDuration))):
			k.failCommand(cmd, lost)
		case ready:
			for _, c := range cmd.candidates {
				k.deleteNodeClaim(c.claim)
			}
		default:
			keep = append(keep, cmd)
		}
	}
	k.queue = keep
}

func (k *Karpenter) failCommand(cmd *command, lost bool) {
	k.releaseCommand(cmd)
	why := "replacement nodeclaims were not initialized within 10m"
	if lost {
		why = "a replacement nodeclaim was lost"
	}
	for _, c := range cmd.candidates {
		c.claim.command = nil
		c.claim.markedForDeletion = false
		c.claim.disruptionReason = ""
		_ = k.kube.RemoveTaint(c.claim.Node, DisruptedTaintKey)
		k.noteDisrupting(c.claim, false)
		k.log(Event{Type: "Warning", Code: "DisruptionFailed", Message: "failed to disrupt nodeclaim: " + why, Reason: cmd.reason, NodePool: c.claim.NodePool, NodeClaim: c.claim.Name, Node: c.claim.Node})
	}
}
