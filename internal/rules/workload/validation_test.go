package workload

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func deployment() *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Name = "web"
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	d.Spec.Template.Labels = map[string]string{"app": "web"}
	return d
}

// TestValidateDeployment: the API server's field paths and messages, on a
// defaulted copy that leaves the object as it was; Fix says how to mend
// each.
func TestValidateDeployment(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(*appsv1.Deployment)
		want   string // "" for valid, else the first error's field
	}{
		{"valid, defaulted", func(*appsv1.Deployment) {}, ""},
		{"negative replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](-1) }, "spec.replicas"},
		{"no selector", func(d *appsv1.Deployment) { d.Spec.Selector = nil }, "spec.selector"},
		{"selector not matching", func(d *appsv1.Deployment) { d.Spec.Template.Labels = map[string]string{"app": "api"} }, "spec.template.metadata.labels"},
		{"maxSurge and maxUnavailable 0", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}
		}, "spec.strategy.rollingUpdate.maxUnavailable"},
		{"Recreate with rollingUpdate", func(d *appsv1.Deployment) {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{}}
		}, "spec.strategy.rollingUpdate"},
		{"progress deadline not above minReadySeconds", func(d *appsv1.Deployment) {
			d.Spec.MinReadySeconds = 600
		}, "spec.progressDeadlineSeconds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := deployment()
			c.mutate(d)
			before := d.DeepCopy()
			errs := ValidateDeployment(d)
			if !apiequality.Semantic.DeepEqual(d, before) {
				t.Errorf("ValidateDeployment changed the object")
			}
			switch {
			case c.want == "" && len(errs) > 0:
				t.Fatalf("errors %v", errs)
			case c.want == "":
			case len(errs) == 0:
				t.Fatalf("no error, want %s", c.want)
			case errs[0].Field != c.want:
				t.Fatalf("first error %v, want field %s", errs[0], c.want)
			case Fix(errs[0]) == "":
				t.Errorf("no fix for %v", errs[0])
			}
		})
	}
}

// TestValidateStatefulSetUpdate: only the fields upstream lists may change.
func TestValidateStatefulSetUpdate(t *testing.T) {
	old := &appsv1.StatefulSet{}
	old.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	s := old.DeepCopy()
	s.Spec.Replicas = ptr.To[int32](5)
	s.Spec.MinReadySeconds = 10
	if errs := ValidateStatefulSetUpdate(s, old); len(errs) > 0 {
		t.Errorf("replicas and minReadySeconds: %v", errs)
	}
	s.Spec.ServiceName = "other"
	errs := ValidateStatefulSetUpdate(s, old)
	if len(errs) != 1 || errs[0].Field != "spec" || !strings.Contains(errs[0].Detail, "forbidden") {
		t.Errorf("serviceName: %v", errs)
	}
}

// TestValidatePriorityClass: the system classes as they are, a reserved
// prefix, a user class above HighestUserDefinablePriority.
func TestValidatePriorityClass(t *testing.T) {
	pc := func(name string, value int32) *schedulingv1.PriorityClass {
		p := &schedulingv1.PriorityClass{Value: value}
		p.Name = name
		return p
	}
	for _, c := range []struct {
		pc    *schedulingv1.PriorityClass
		field string
	}{
		{pc(SystemNodeCritical, SystemCriticalPriority+1000), ""},
		{pc(SystemClusterCritical, SystemCriticalPriority), ""},
		{pc(SystemClusterCritical, 7), "metadata.name"},
		{pc("system-mine", 7), "metadata.name"},
		{pc("high", HighestUserDefinablePriority), ""},
		{pc("higher", HighestUserDefinablePriority+1), "value"},
	} {
		errs := ValidatePriorityClass(c.pc)
		if (c.field == "") != (len(errs) == 0) || (c.field != "" && errs[0].Field != c.field) {
			t.Errorf("%s %d: %v, want %q", c.pc.Name, c.pc.Value, errs, c.field)
		}
	}
	if got := SystemPriorityClasses(); len(got) != 2 || got[0].Name != SystemNodeCritical || got[0].Value != SystemCriticalPriority+1000 {
		t.Errorf("system classes %v", got)
	}
}

// TestValidateStartupAnnotation: a non-negative duration or nothing.
func TestValidateStartupAnnotation(t *testing.T) {
	for v, ok := range map[string]bool{"45s": true, "0s": true, "-1s": false, "soon": false} {
		if err := ValidateStartupAnnotation(map[string]string{StartupAnnotation: v}); (err == nil) != ok {
			t.Errorf("%q: %v", v, err)
		}
	}
	if err := ValidateStartupAnnotation(nil); err != nil {
		t.Errorf("no annotation: %v", err)
	}
}
