package materialize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// document is one manifest as written, ready to apply.
type document struct {
	src manifest.Source
	obj *unstructured.Unstructured
}

func (d document) String() string {
	name := d.obj.GetName()
	if ns := d.obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", d.obj.GetKind(), name, d.src)
}

// documents reads every manifest of the scenario again, this time keeping
// the kinds the twin ignores: a real API server needs the ServiceAccounts
// pods run as (the ServiceAccount admission plugin refuses a pod whose
// account does not exist), and Services, ConfigMaps and Secrets make the lab
// what the manifests describe. A scenario whose files cannot be read again
// (built in memory) falls back to the objects the twin applied; skipped
// names the kinds that were then left out.
func documents(sc *scenario.Scenario) (docs []document, skipped []string, err error) {
	objs, err := rereadManifests(sc)
	if err != nil {
		objs = sc.Objects
		for kind, n := range sc.Ignored {
			skipped = append(skipped, fmt.Sprintf("%d %s", n, kind))
		}
		sort.Strings(skipped)
	}
	for _, o := range objs {
		js, err := yaml.YAMLToJSON(o.Document())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %v", o.Source, o.Name(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %v", o.Source, o.Name(), err)
		}
		docs = append(docs, document{src: o.Source, obj: u})
	}
	sort.SliceStable(docs, func(i, j int) bool { return kindRank(docs[i].obj.GetKind()) < kindRank(docs[j].obj.GetKind()) })
	return docs, skipped, nil
}

// rereadManifests decodes the scenario's manifest sources as scenario.Parse
// does, ignored kinds included.
func rereadManifests(sc *scenario.Scenario) ([]manifest.Object, error) {
	var dir fs.FS
	display := func(file string) string { return filepath.Join(filepath.Dir(sc.Path), file) }
	if name, ok := strings.CutPrefix(sc.Path, "builtin:"); ok {
		d, err := scenario.BuiltinDir(name)
		if err != nil {
			return nil, err
		}
		dir = d
		display = func(file string) string { return sc.Path + "/" + file }
	} else {
		if _, err := os.Stat(sc.Path); err != nil {
			return nil, err
		}
		dir = os.DirFS(filepath.Dir(sc.Path))
	}
	var out []manifest.Object
	for i, src := range sc.Spec.Manifests {
		var objs []manifest.Object
		var err error
		switch {
		case src.File != "":
			var data []byte
			data, err = fs.ReadFile(dir, path.Clean(filepath.ToSlash(src.File)))
			if err != nil {
				return nil, fmt.Errorf("%s: spec.manifests[%d].file: %v", sc.Path, i, err)
			}
			objs, err = manifest.Decode(display(src.File), data)
		case src.Inline != "":
			objs, err = manifest.Decode(sc.Path, []byte(src.Inline))
		default:
			err = errors.New("no file or inline")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: spec.manifests[%d]: %v", sc.Path, i, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// applyOrder is the order kinds are applied in, dependencies first, as Helm
// installs a chart: what pods need (namespaces, classes, volumes, accounts,
// configuration, NodePools) before the workloads that make pods. Kinds not
// listed go after the configuration and before the workloads.
var applyOrder = map[string]int{
	"Namespace": 0, "CustomResourceDefinition": 1,
	"StorageClass": 2, "PriorityClass": 2, "RuntimeClass": 2,
	"PersistentVolume": 3, "PersistentVolumeClaim": 4,
	"ServiceAccount": 5, "ClusterRole": 5, "Role": 5, "ClusterRoleBinding": 6, "RoleBinding": 6,
	"ConfigMap": 7, "Secret": 7, "Service": 8,
	"EC2NodeClass": 9, "NodePool": 10, "PodDisruptionBudget": 11,
	"DaemonSet": 13, "StatefulSet": 14, "Deployment": 15, "ReplicaSet": 15, "Job": 16, "CronJob": 16, "Pod": 17,
}

func kindRank(kind string) int {
	if r, ok := applyOrder[kind]; ok {
		return r
	}
	return 12
}

// podSpecPath is where a kind keeps the spec of the pods it makes.
var podSpecPath = map[string][]string{
	"Pod":         {"spec"},
	"Deployment":  {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template", "spec"},
}

// toFargate gives the pods of a workload a Fargate profile selects the
// scheduler name EKS's Fargate admission webhook gives them at creation.
// The lab runs no webhook, so the name goes into the pod template: the one
// place the lab's objects differ from the manifests.
func toFargate(u *unstructured.Unstructured) error {
	p, ok := podSpecPath[u.GetKind()]
	if !ok {
		return fmt.Errorf("%s %s/%s: a Fargate profile selects its pods, but the lab cannot send a %s's pods to Fargate", u.GetKind(), u.GetNamespace(), u.GetName(), u.GetKind())
	}
	return unstructured.SetNestedField(u.Object, FargateScheduler, append(append([]string(nil), p...), "schedulerName")...)
}
