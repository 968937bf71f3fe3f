package kube

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadrules "github.com/ladder-eks/ladder/internal/rules/workload"
)

func priorityClassOf(name string, value int32) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
}

func classPod(name, class string, priority *int32, policy *corev1.PreemptionPolicy) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{PriorityClassName: class, Priority: priority, PreemptionPolicy: policy,
			Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
}

// The Priority admission plugin resolves a new pod's class to its
// priority and preemption policy, and refuses what the API server refuses.
func TestPriorityAdmission(t *testing.T) {
	never := corev1.PreemptNever
	lower := corev1.PreemptLowerPriority
	i32 := func(v int32) *int32 { return &v }
	withNever := func(pc *schedulingv1.PriorityClass) *schedulingv1.PriorityClass {
		pc.PreemptionPolicy = &never
		return pc
	}
	globalDefault := func(pc *schedulingv1.PriorityClass) *schedulingv1.PriorityClass {
		pc.GlobalDefault = true
		return pc
	}
	cases := []struct {
		name      string
		classes   []*schedulingv1.PriorityClass
		pod       *corev1.Pod
		class     string
		priority  int32
		policy    corev1.PreemptionPolicy
		forbidden string // the refusal, when the pod is refused
	}{
		{name: "system-node-critical", pod: classPod("p", workloadrules.SystemNodeCritical, nil, nil),
			class: workloadrules.SystemNodeCritical, priority: 2000001000, policy: lower},
		{name: "system-cluster-critical", pod: classPod("p", workloadrules.SystemClusterCritical, nil, nil),
			class: workloadrules.SystemClusterCritical, priority: 2000000000, policy: lower},
		{name: "the scenario's own class", classes: []*schedulingv1.PriorityClass{withNever(priorityClassOf("batch", 1000))},
			pod: classPod("p", "batch", nil, nil), class: "batch", priority: 1000, policy: never},
		{name: "no class, no default", pod: classPod("p", "", nil, nil), class: "", priority: 0, policy: lower},
		{name: "no class, a globalDefault", classes: []*schedulingv1.PriorityClass{priorityClassOf("high", 500), globalDefault(priorityClassOf("low", 10))},
			pod: classPod("p", "", nil, nil), class: "low", priority: 10, policy: lower},
		{name: "a class named beats the default", classes: []*schedulingv1.PriorityClass{priorityClassOf("high", 500), globalDefault(priorityClassOf("low", 10))},
			pod: classPod("p", "high", nil, nil), class: "high", priority: 500, policy: lower},
		{name: "the pod's own priority, equal to its class's", pod: classPod("p", workloadrules.SystemClusterCritical, i32(2000000000), nil),
			class: workloadrules.SystemClusterCritical, priority: 2000000000, policy: lower},
		{name: "unknown class", pod: classPod("p", "hihg", nil, nil),
			forbidden: `pods "p" is forbidden: no PriorityClass with name hihg was found`},
		{name: "a priority other than the class's", pod: classPod("p", "", i32(100), nil),
			forbidden: `pods "p" is forbidden: the integer value of priority (100) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`},
		{name: "a preemption policy other than the class's", pod: classPod("p", workloadrules.SystemNodeCritical, nil, &never),
			forbidden: `pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newCluster(t)
			for _, pc := range tc.classes {
				must(t, c.Apply(pc))
			}
			err := c.Apply(tc.pod)
			if tc.forbidden != "" {
				if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.forbidden) {
					t.Fatalf("Apply = %v, want 403 %q", err, tc.forbidden)
				}
				if c.Pod("default", "p") != nil {
					t.Fatal("a refused pod was stored")
				}
				return
			}
			must(t, err)
			p := c.Pod("default", "p")
			if p.Spec.PriorityClassName != tc.class || p.Spec.Priority == nil || *p.Spec.Priority != tc.priority ||
				p.Spec.PreemptionPolicy == nil || *p.Spec.PreemptionPolicy != tc.policy {
				t.Fatalf("class %q priority %v policy %v, want %q %d %s", p.Spec.PriorityClassName, p.Spec.Priority, p.Spec.PreemptionPolicy, tc.class, tc.priority, tc.policy)
			}
		})
	}
}

// The API server's rules for PriorityClasses themselves.
func TestPriorityClassValidation(t *testing.T) {
	withDefault := func(pc *schedulingv1.PriorityClass) *schedulingv1.PriorityClass {
		pc.GlobalDefault = true
		return pc
	}
	cases := []struct {
		name    string
		before  []*schedulingv1.PriorityClass
		apply   *schedulingv1.PriorityClass
		invalid bool
		forbid  bool
		msg     string
	}{
		{name: "a user class", apply: priorityClassOf("high", 1000000000)},
		{name: "above the user range", apply: priorityClassOf("higher", 1000000001), invalid: true,
			msg: "maximum allowed value of a user defined priority is 1000000000"},
		{name: "a system- name that is not a system class", apply: priorityClassOf("system-important", 5), invalid: true,
			msg: "system-important is not a known system priority class"},
		{name: "a system class as it is", apply: priorityClassOf(workloadrules.SystemNodeCritical, 2000001000)},
		{name: "a system class with another value", apply: priorityClassOf(workloadrules.SystemClusterCritical, 7), invalid: true,
			msg: "value of system-cluster-critical PriorityClass must be 2000000000"},
		{name: "a second globalDefault", before: []*schedulingv1.PriorityClass{withDefault(priorityClassOf("a", 1))},
			apply: withDefault(priorityClassOf("b", 2)), forbid: true, msg: "PriorityClass a is already marked as default. Only one default can exist"},
		{name: "the globalDefault applied again", before: []*schedulingv1.PriorityClass{withDefault(priorityClassOf("a", 1))},
			apply: withDefault(priorityClassOf("a", 1))},
		{name: "a value changed", before: []*schedulingv1.PriorityClass{priorityClassOf("a", 1)},
			apply: priorityClassOf("a", 2), invalid: true, msg: "value: Forbidden: may not be changed in an update."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newCluster(t)
			for _, pc := range tc.before {
				must(t, c.Apply(pc))
			}
			err := c.Apply(tc.apply)
			switch {
			case tc.invalid && !apierrors.IsInvalid(err), tc.forbid && !apierrors.IsForbidden(err):
				t.Fatalf("Apply = %v, want invalid %v forbidden %v", err, tc.invalid, tc.forbid)
			case !tc.invalid && !tc.forbid && err != nil:
				t.Fatalf("Apply = %v", err)
			case err != nil && !strings.Contains(err.Error(), tc.msg):
				t.Fatalf("Apply = %v, want it to say %q", err, tc.msg)
			}
		})
	}
}

// A controller whose pods name a class that does not exist creates none:
// the refusal is a FailedCreate event, logged once, and the pods come once
// the class is applied.
func TestControllerPodsWaitForTheirPriorityClass(t *testing.T) {
	eng, c := newCluster(t)
	var events []Event
	c.OnEvent(func(e Event) { events = append(events, e) })
	must(t, c.AddNode(node("n1", "us-west-2a", "4", "8Gi"), true))
	d := deployment("default", "web", 2, "100m")
	d.Spec.Template.Spec.PriorityClassName = "business-critical"
	must(t, c.Apply(d))
	run(eng, time.Minute)
	if n := len(c.Pods()); n != 0 {
		t.Fatalf("%d pods created for an unknown class", n)
	}
	var failed []string
	for _, e := range events {
		if e.Reason == "FailedCreate" {
			failed = append(failed, e.Message)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "Error creating: pods") ||
		!strings.HasSuffix(failed[0], "is forbidden: no PriorityClass with name business-critical was found") {
		t.Fatalf("FailedCreate events %q, want one refusal", failed)
	}
	must(t, c.Apply(priorityClassOf("business-critical", 1000)))
	run(eng, time.Minute)
	if got := readyPods(c, "default"); got != 2 {
		t.Fatalf("%d pods ready once the class exists, want 2", got)
	}
	for _, p := range c.Pods() {
		if *p.Spec.Priority != 1000 {
			t.Fatalf("pod %s priority %d, want 1000", p.Name, *p.Spec.Priority)
		}
	}
}
