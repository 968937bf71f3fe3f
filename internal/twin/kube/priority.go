package kube

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	workloadrules "github.com/ladder-eks/ladder/internal/rules/workload"
)

// PriorityClasses and the Priority admission plugin
// (k8s.io/kubernetes plugin/pkg/admission/priority): a new pod's
// spec.priorityClassName is resolved to spec.priority and
// spec.preemptionPolicy; a pod that names no class gets the globalDefault
// class's, or priority 0 and PreemptLowerPriority; a pod naming a class that
// does not exist is refused. The API server runs the plugin before the
// mutating admission webhooks (pkg/kubeapiserver/options/plugins.go
// AllOrderedPlugins), so the webhooks (OnAdmit) see the resolved priority.
// The system classes and a PriorityClass's validation are
// internal/rules/workload's (priority.go).

// priorityClass is a stored PriorityClass, with the values admission gives
// every pod of the class: pods share the pointers, which nobody changes.
type priorityClass struct {
	obj    *schedulingv1.PriorityClass
	value  *int32
	policy *corev1.PreemptionPolicy
}

func newPriorityClass(pc *schedulingv1.PriorityClass) *priorityClass {
	v := pc.Value
	return &priorityClass{obj: pc, value: &v, policy: pc.PreemptionPolicy}
}

// noClass is what a pod gets when it names no class and no class is the
// global default (getDefaultPriority: DefaultPriorityWhenNoDefaultClassExists
// and PreemptLowerPriority).
var noClass = func() *priorityClass {
	policy := corev1.PreemptLowerPriority
	return newPriorityClass(&schedulingv1.PriorityClass{Value: 0, PreemptionPolicy: &policy})
}()

// applyPriorityClass stores a PriorityClass as the API server does: the
// defaults (PreemptLowerPriority), the validation above, value and
// preemptionPolicy immutable (ValidatePriorityClassUpdate), and one
// globalDefault at most (the Priority plugin's validatePriorityClass).
// Controllers whose pods were refused for want of the class try again.
func (c *Cluster) applyPriorityClass(pc *schedulingv1.PriorityClass) error {
	if pc.PreemptionPolicy == nil {
		policy := corev1.PreemptLowerPriority
		pc.PreemptionPolicy = &policy
	}
	gk := schedulingv1.SchemeGroupVersion.WithKind("PriorityClass").GroupKind()
	if errs := workloadrules.ValidatePriorityClass(pc); len(errs) > 0 {
		return apierrors.NewInvalid(gk, pc.Name, errs)
	}
	old, exists := c.priorityClasses[pc.Name]
	if exists {
		var errs field.ErrorList
		if pc.Value != old.obj.Value {
			errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
		}
		if *pc.PreemptionPolicy != *old.obj.PreemptionPolicy {
			errs = append(errs, field.Invalid(field.NewPath("preemptionPolicy"), *pc.PreemptionPolicy, "field is immutable"))
		}
		if len(errs) > 0 {
			return apierrors.NewInvalid(gk, pc.Name, errs)
		}
	}
	if pc.GlobalDefault {
		if d := c.defaultPriorityClass(); d != nil && d.obj.Name != pc.Name {
			return apierrors.NewForbidden(schedulingv1.Resource("priorityclasses"), pc.Name,
				fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", d.obj.Name))
		}
	}
	c.priorityClasses[pc.Name] = newPriorityClass(pc)
	c.globalDefault = c.defaultPriorityClass()
	if !exists {
		for _, w := range c.workloadOrder {
			w.kick()
		}
		c.dsAllDirty = true
		c.daemonSets.Fire()
	}
	return nil
}

// PriorityClass returns a stored PriorityClass, the system ones included,
// or nil.
func (c *Cluster) PriorityClass(name string) *schedulingv1.PriorityClass {
	if pc, ok := c.priorityClasses[name]; ok {
		return pc.obj
	}
	return nil
}

// defaultPriorityClass is the globalDefault class; of several (a race the
// API server can lose), the one with the lowest value
// (getDefaultPriorityClass).
func (c *Cluster) defaultPriorityClass() *priorityClass {
	var d *priorityClass
	for _, pc := range c.priorityClasses {
		if pc.obj.GlobalDefault && (d == nil || pc.obj.Value < d.obj.Value ||
			(pc.obj.Value == d.obj.Value && pc.obj.Name < d.obj.Name)) {
			d = pc
		}
	}
	return d
}

// admitPriority is the Priority plugin's admitPod on create: it resolves
// the pod's class (or the default) and sets spec.priorityClassName,
// spec.priority and spec.preemptionPolicy, refusing with 403 Forbidden a
// class that does not exist or a priority or preemption policy the pod
// set that differs from its class's.
func (c *Cluster) admitPriority(pod *corev1.Pod) error {
	var pc *priorityClass
	name := pod.Spec.PriorityClassName
	if name == "" {
		pc = c.globalDefault
		if pc == nil {
			pc = noClass
		}
	} else {
		var ok bool
		if pc, ok = c.priorityClasses[name]; !ok {
			return podForbidden(pod, fmt.Errorf("no PriorityClass with name %v was found", name))
		}
	}
	if p := pod.Spec.Priority; p != nil && *p != *pc.value {
		return podForbidden(pod, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *p, *pc.value))
	}
	if pc.policy != nil {
		if p := pod.Spec.PreemptionPolicy; p != nil && *p != *pc.policy {
			return podForbidden(pod, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *p, *pc.policy))
		}
		pod.Spec.PreemptionPolicy = pc.policy
	}
	pod.Spec.PriorityClassName = pc.obj.Name
	pod.Spec.Priority = pc.value
	return nil
}

// podForbidden is admission.NewForbidden for a pod: 403 with
// `pods "NAME" is forbidden: REASON`.
func podForbidden(pod *corev1.Pod, err error) error {
	name := pod.Name
	if name == "" {
		name = pod.GenerateName
	}
	return apierrors.NewForbidden(corev1.Resource("pods"), name, err)
}
