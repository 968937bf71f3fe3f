package workload

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The system classes every cluster has from bootstrap, as
// k8s.io/kubernetes pkg/apis/scheduling (types.go) names and values them
// and pkg/apis/scheduling/v1 helpers.go systemPriorityClasses creates them.
// k8s.io/api/scheduling/v1 does not export these constants.
const (
	SystemNodeCritical    = "system-node-critical"
	SystemClusterCritical = "system-cluster-critical"
	// systemPriorityClassPrefix is reserved for the classes above.
	systemPriorityClassPrefix = "system-"
	// HighestUserDefinablePriority is the largest value a PriorityClass
	// that is not a system class may have.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is system-cluster-critical's value;
	// system-node-critical's is 1000 more.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
)

// SystemPriorityClasses returns the two system classes.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	policy := corev1.PreemptLowerPriority
	mk := func(name string, value int32, desc string) *schedulingv1.PriorityClass {
		pc := &schedulingv1.PriorityClass{Value: value, Description: desc, PreemptionPolicy: &policy}
		pc.Name = name
		return pc
	}
	return []*schedulingv1.PriorityClass{
		mk(SystemNodeCritical, SystemCriticalPriority+1000, "Used for system critical pods that must not be moved from their current node."),
		mk(SystemClusterCritical, SystemCriticalPriority, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
	}
}

// ValidatePriorityClass is the API server's validation of a new
// PriorityClass (pkg/apis/scheduling/validation ValidatePriorityClass): a
// name starting with "system-" must be one of the system classes, as they
// are; any other class's value is at most HighestUserDefinablePriority; the
// preemption policy is Never or PreemptLowerPriority.
func ValidatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, systemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"), "priority class names with '"+systemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if p := pc.PreemptionPolicy; p != nil && *p != corev1.PreemptNever && *p != corev1.PreemptLowerPriority {
		errs = append(errs, field.NotSupported(field.NewPath("preemptionPolicy"), *p, []string{string(corev1.PreemptLowerPriority), string(corev1.PreemptNever)}))
	}
	return errs
}

// knownSystemPriorityClass is pkg/apis/scheduling/v1
// IsKnownSystemPriorityClass.
func knownSystemPriorityClass(pc *schedulingv1.PriorityClass) error {
	for _, spc := range SystemPriorityClasses() {
		if spc.Name != pc.Name {
			continue
		}
		if spc.Value != pc.Value {
			return fmt.Errorf("value of %v PriorityClass must be %v", spc.Name, spc.Value)
		}
		if spc.GlobalDefault != pc.GlobalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", spc.Name, spc.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", pc.Name)
}
