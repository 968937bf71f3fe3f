package scenario

import (
	"strings"
	"testing"
)

// A pod template naming a PriorityClass is checked against the system
// classes and the scenario's own: an unknown name is one line at the
// field, with the fix; a scenario's PriorityClass is checked as the API
// server checks it.
func TestValidatePriorityClasses(t *testing.T) {
	const template = "    spec:\n      containers:\n        - {name: web"
	withClass := func(class string) string {
		return "    spec:\n      priorityClassName: " + class + "\n      containers:\n        - {name: web"
	}
	const class = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: web-critical\nvalue: %s\n---\napiVersion: v1\nkind: Service"
	defaultClass := func(name, value string) string {
		return "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: " + name + "\nvalue: " + value + "\nglobalDefault: true\n"
	}
	cases := []validateCase{
		{name: "a system class", replace: []string{template, withClass("system-cluster-critical")}},
		{name: "the scenario's class", replace: []string{template, withClass("web-critical"), "---\napiVersion: v1\nkind: Service", strings.Replace(class, "%s", "1000", 1)}},
		{name: "an unknown class", replace: []string{template, withClass("web-critcal")},
			want: `/virtual/manifests/cluster.yaml:43: Deployment app/web: spec.template.spec.priorityClassName: no PriorityClass with name web-critcal was found (add a scheduling.k8s.io/v1 PriorityClass manifest named web-critcal, or use system-cluster-critical or system-node-critical)`},
		{name: "a priority the class does not give", replace: []string{template, "    spec:\n      priority: 5\n      containers:\n        - {name: web"},
			want: `/virtual/manifests/cluster.yaml:43: Deployment app/web: spec.template.spec.priority: 5 must not be provided in pod spec; the priority admission controller computes 0 from the PriorityClass (remove spec.priority and name the class in priorityClassName)`},
		{name: "a priority equal to the class's", replace: []string{template, "    spec:\n      priorityClassName: system-node-critical\n      priority: 2000001000\n      containers:\n        - {name: web"}},
		{name: "one default class", replace: []string{"---\napiVersion: v1\nkind: Service", defaultClass("a", "100") + "---\napiVersion: v1\nkind: Service"}},
		{name: "a second default class", replace: []string{"---\napiVersion: v1\nkind: Service", defaultClass("a", "100") + defaultClass("b", "200") + "---\napiVersion: v1\nkind: Service"},
			want: `PriorityClass b: globalDefault: PriorityClass a is already marked as default. Only one default can exist (set globalDefault: true on one PriorityClass only)`},
		{name: "a default class re-applied", replace: []string{"---\napiVersion: v1\nkind: Service", defaultClass("a", "100") + "---\napiVersion: v1\nkind: Service",
			"    - wait: {settled: true}\n", "    - wait: {settled: true}\n    - apply: {inline: \"" + strings.ReplaceAll(defaultClass("a", "100"), "\n", "\\n") + "\"}\n"}},
		{name: "an update of a class's value", replace: []string{"---\napiVersion: v1\nkind: Service", defaultClass("a", "100") + "---\napiVersion: v1\nkind: Service",
			"    - wait: {settled: true}\n", "    - wait: {settled: true}\n    - apply: {inline: \"" + strings.ReplaceAll(defaultClass("a", "200"), "\n", "\\n") + "\"}\n"},
			want: `PriorityClass a: value: may not be changed in an update (keep value 100, or create a PriorityClass of another name)`},
		{name: "a preemptionPolicy the default does not give", replace: []string{template, "    spec:\n      preemptionPolicy: Never\n      containers:\n        - {name: web"},
			want: `/virtual/manifests/cluster.yaml:43: Deployment app/web: spec.template.spec.preemptionPolicy: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name (remove preemptionPolicy from the pod spec and set it on the PriorityClass the pod names)`},
		{name: "the class's preemptionPolicy", replace: []string{template, "    spec:\n      priorityClassName: web-critical\n      preemptionPolicy: Never\n      containers:\n        - {name: web",
			"---\napiVersion: v1\nkind: Service", strings.Replace(class, "%s", "1000\npreemptionPolicy: Never", 1)}},
		{name: "a class above the user range", replace: []string{"---\napiVersion: v1\nkind: Service", strings.Replace(class, "%s", "2000000000", 1)},
			want: `PriorityClass web-critical: value: Forbidden: maximum allowed value of a user defined priority is 1000000000`},
	}
	runValidateCases(t, cases)
}
