package kube

import (
	"fmt"
	"strings"
)

// A pod the API server refuses (the Priority admission plugin's "no
// PriorityClass with name … was found") is a FailedCreate event and an
// error of the controller's sync, which the controller retries; the twin
// syncs the workload again when what admission reads changes (a
// PriorityClass applied). Until a sync creates the pods, the cluster is not
// settled — the workload is missing pods it wants — and RefusedCreates
// names it and admission's answer.

// failedCreate is a controller's FailedCreate event for a pod the API
// server refused (controller_utils.go CreatePods: "Error creating: %v").
// Like the event recorder's aggregation, a refusal repeating the last one
// is not logged again.
func (c *Cluster) failedCreate(w *workload, err error) {
	msg := "Error creating: " + err.Error()
	if w.kind != "DaemonSet" { // a DaemonSet's sync is per node (daemonset.go)
		c.setRefused(w, true)
	}
	if msg == w.lastFailedCreate {
		return
	}
	w.lastFailedCreate = msg
	c.log(Event{Type: "Warning", Reason: "FailedCreate", Message: msg, Object: w.kind + "/" + w.namespace + "/" + w.name})
}

// setRefused keeps Quiet's count of the workloads missing pods a create
// was refused for.
func (c *Cluster) setRefused(w *workload, refused bool) {
	if w.refused == refused {
		return
	}
	w.refused = refused
	if refused {
		c.refused++
	} else {
		c.refused--
	}
}

// RefusedCreates says, for each workload whose last sync could not create
// a pod it wants, how many it has and why the API server refused the
// next: "deployment shop/web: 0 of 3 pods created: pods "web-…" is
// forbidden: no PriorityClass with name … was found".
func (c *Cluster) RefusedCreates() []string {
	var out []string
	if c.refused == 0 {
		return nil
	}
	for _, w := range c.workloadOrder {
		if w.refused {
			out = append(out, fmt.Sprintf("%s %s/%s: %d of %d pods created: %s", strings.ToLower(w.kind), w.namespace, w.name,
				len(w.activePods()), w.replicas, strings.TrimPrefix(w.lastFailedCreate, "Error creating: ")))
		}
	}
	return out
}
