package insights

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const deploymentWeb = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx}]\n"

// TestReadSkipsWhatIsNotForACluster: a repository root holds YAML and JSON
// that is not a Kubernetes object for a cluster — tool configurations that
// carry apiVersion and kind (kind, eksctl, skaffold, kubeconfig, kubeadm,
// nodeadm, kustomize's built-in plugin configurations), files that do not
// parse and name no apiVersion or kind (a CI file with a syntax error,
// JSON with comments, a Jinja template), and test fixtures under
// testdata/. None of them is a finding: they are counted as not
// manifests, or (testdata) not walked. A broken manifest, and a document
// without kind among manifests, still are findings.
func TestReadSkipsWhatIsNotForACluster(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"deploy/web.yaml": deploymentWeb,
		// Tool configurations with apiVersion and kind.
		"hack/kind.yaml":          "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n",
		"cluster/eksctl.yaml":     "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata:\n  name: prod\n  region: eu-west-1\n",
		"skaffold.yaml":           "apiVersion: skaffold/v4beta11\nkind: Config\nbuild:\n  artifacts: [{image: web}]\n",
		"kubeconfig.yaml":         "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
		"kubeadm.yaml":            "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.33.0\n",
		"kubelet.yaml":            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\n",
		"nodeadm.yaml":            "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster: {name: prod}\n",
		"kustomize/labels.yaml":   "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: labels}\nlabels: {team: a}\n",
		"kustomize/audit.yaml":    "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
		"ct.yaml":                 "chart-dirs: [charts]\ntarget-branch: main\n",
		"release-notes/1.2.yaml":  "features:\n  - |\n    New: web scales.\n",
		"ci/pipeline.yml":         "jobs:\n  build:\n    steps: [run: make\n",
		"tsconfig.json":           "{\n  // comments are not JSON\n  \"compilerOptions\": {}\n}\n",
		"ansible/site.yml":        "- hosts: all\n  tasks:\n    {% for t in tasks %}\n    - name: \"{% t %}\"\n    {% endfor %}\n",
		"testdata/bad.yaml":       "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: fixture\n",
		"pkg/x/testdata/pdb.yaml": "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: fixture}\n",
		"chart/tests/__snapshot__/deployment_test.yaml.snap.yaml": "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: snap}\n",
		// No metadata at all, of a group that is not Kubernetes': a
		// tool's configuration, or a custom resource's schema snapshot.
		"flux/.fluxschema.yml":      "apiVersion: schema.plugin.fluxcd.io/v1beta1\nkind: Config\nvalidate: {skipMissingSchemas: true}\n",
		"tests/snapshots/es.yaml":   "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {}\nspec: {}\n",
		"docs/snippets/secret.yaml": "{% raw %}\napiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: app\nspec:\n  target: {name: app}\n{% endraw %}\n",
		// Still findings: a broken manifest, a document without kind among
		// manifests.
		"deploy/broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  colors: [red, green\n",
		"deploy/mixed.yaml":  configMapA + "---\nname: b\n",
		// Kubernetes' own group without metadata, and a custom resource
		// without metadata among manifests: objects, with a WARNING.
		"deploy/pdb.yaml":    "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nspec: {maxUnavailable: 1}\n",
		"deploy/widget.yaml": configMapA + "---\napiVersion: example.com/v1\nkind: Widget\nspec: {}\n",
	})
	m, err := Read([]string{dir}, nil, ReadOptions{Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	var objs []string
	for _, o := range m.Objects {
		rel, _ := filepath.Rel(dir, o.Source.File)
		objs = append(objs, o.Kind+"/"+o.Name+"@"+rel)
	}
	if got, want := strings.Join(objs, " "), "ConfigMap/a@deploy/mixed.yaml PodDisruptionBudget/@deploy/pdb.yaml Deployment/web@deploy/web.yaml ConfigMap/a@deploy/widget.yaml Widget/@deploy/widget.yaml"; got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
	wantProblems := []string{
		"deploy/broken.yaml:7: ConfigMap shop/settings: malformed YAML: did not find expected ',' or ']'; the document was not checked (fix the YAML syntax)",
		"deploy/mixed.yaml:5: missing apiVersion or kind; the document was not checked (every document needs apiVersion and kind, e.g. apiVersion: apps/v1, kind: Deployment)",
		"deploy/pdb.yaml:1: PodDisruptionBudget: metadata.name: missing metadata.name (every object needs metadata.name)",
		"deploy/widget.yaml:5: Widget: metadata.name: missing metadata.name (every object needs metadata.name)",
	}
	if got := problemLines(dir, m.Problems); !reflect.DeepEqual(got, wantProblems) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantProblems, "\n"))
	}
	// 9 tool configurations, ct.yaml, release notes, the CI file,
	// tsconfig, the flux schema configuration and the snapshot; the Jinja
	// template and the documentation snippet are templates; testdata and
	// __snapshot__ are not walked.
	if want := (SkippedFiles{NotManifests: 15, Templates: 2}); m.Skipped != want {
		t.Errorf("skipped %+v, want %+v", m.Skipped, want)
	}

	// A testdata directory named with -f is the user's choice: read.
	m, err = Read([]string{filepath.Join(dir, "pkg/x/testdata")}, nil, ReadOptions{Plain: true})
	if err != nil || len(m.Objects) != 1 || m.Objects[0].Name != "fixture" {
		t.Errorf("-f testdata: %v, %+v", err, m)
	}
}

// TestToolConfig: kinds of tools' configurations against kinds of the same
// groups, or of the core group, that are objects.
func TestToolConfig(t *testing.T) {
	for _, tt := range []struct {
		apiVersion, kind string
		want             bool
	}{
		{"kind.x-k8s.io/v1alpha4", "Cluster", true},
		{"cluster.x-k8s.io/v1beta1", "Cluster", false}, // Cluster API: an object of the management cluster
		{"eksctl.io/v1alpha5", "ClusterConfig", true},
		{"skaffold/v2beta29", "Config", true},
		{"v1", "Config", true},
		{"v1", "ConfigMap", false},
		{"v1", "Policy", true},
		{"kustomize.config.k8s.io/v1beta1", "Kustomization", true},
		{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", false}, // Flux: applied
		{"builtin", "PatchTransformer", true},
		{"kubeadm.k8s.io/v1beta4", "InitConfiguration", true},
		{"apiserver.config.k8s.io/v1", "AdmissionConfiguration", true},
		{"node.eks.aws/v1alpha1", "NodeConfig", true},
		{"eks.amazonaws.com/v1", "NodeClass", false},
		{"apps/v1", "Deployment", false},
	} {
		if got := toolConfig(tt.apiVersion, tt.kind); got != tt.want {
			t.Errorf("toolConfig(%q, %q) = %v, want %v", tt.apiVersion, tt.kind, got, tt.want)
		}
	}
}
