package scenario

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/rules/workload"
)

// priority is what the Priority admission plugin gives a pod of a class:
// its value and preemption policy.
type priority struct {
	value  int32
	policy corev1.PreemptionPolicy
}

// classPriority is a PriorityClass's priority, its preemptionPolicy
// defaulted as the API server defaults it.
func classPriority(pc *schedulingv1.PriorityClass) priority {
	p := priority{value: pc.Value, policy: corev1.PreemptLowerPriority}
	if pc.PreemptionPolicy != nil {
		p.policy = *pc.PreemptionPolicy
	}
	return p
}

// priorities collects the PriorityClasses pods may name — the system ones,
// then the scenario's in the order they are applied (the starting
// manifests, then the apply actions') — and refuses what the API server
// refuses of them after their own validation (validate.go object): a
// second globalDefault class ("Only one default can exist", the Priority
// plugin's validatePriorityClass), and an update of a class's value or
// preemptionPolicy (ValidatePriorityClassUpdate: immutable). A pod naming
// no class gets the default class's priority, or 0 and PreemptLowerPriority
// when there is none (getDefaultPriority).
func (v *validator) priorities(all []manifest.Object) {
	v.priorityClasses = map[string]priority{
		workload.SystemNodeCritical:    {value: workload.SystemCriticalPriority + 1000, policy: corev1.PreemptLowerPriority},
		workload.SystemClusterCritical: {value: workload.SystemCriticalPriority, policy: corev1.PreemptLowerPriority},
	}
	v.defaultPriority = priority{policy: corev1.PreemptLowerPriority}
	stored := map[string]*schedulingv1.PriorityClass{}
	for _, o := range all {
		pc, ok := o.Object.(*schedulingv1.PriorityClass)
		if !ok {
			continue
		}
		if old, ok := stored[pc.Name]; ok {
			if pc.Value != old.Value {
				v.failObject(o, "value", "may not be changed in an update", fmt.Sprintf("keep value %d, or create a PriorityClass of another name", old.Value))
				continue
			}
			if classPriority(pc).policy != classPriority(old).policy {
				v.failObject(o, "preemptionPolicy", "field is immutable", fmt.Sprintf("keep preemptionPolicy %s, or create a PriorityClass of another name", classPriority(old).policy))
				continue
			}
		}
		if pc.GlobalDefault {
			if d := defaultClass(stored); d != nil && d.Name != pc.Name {
				v.failObject(o, "globalDefault", fmt.Sprintf("PriorityClass %s is already marked as default. Only one default can exist", d.Name),
					"set globalDefault: true on one PriorityClass only")
				continue
			}
		}
		stored[pc.Name] = pc
		v.priorityClasses[pc.Name] = classPriority(pc)
	}
	if d := defaultClass(stored); d != nil {
		v.defaultPriority = classPriority(d)
	}
}

// defaultClass is the stored globalDefault class, if any.
func defaultClass(stored map[string]*schedulingv1.PriorityClass) *schedulingv1.PriorityClass {
	for _, pc := range stored {
		if pc.GlobalDefault {
			return pc
		}
	}
	return nil
}
