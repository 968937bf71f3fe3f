package insights

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// toolConfigs are the apiVersion groups (and, for the core group, the
// kinds) of documents that carry apiVersion and kind but are a tool's own
// configuration: the tool reads them, and the API server never sees them,
// so no upgrade can break them. A file that holds only such documents is
// skipped and counted as not a manifest, like a values file.
//
// Each entry names where the kind is defined.
var toolConfigs = map[string][]string{
	// kustomize build: sigs.k8s.io/kustomize/api/types Kustomization,
	// Component; "builtin" is the apiVersion of the configurations of
	// kustomize's built-in generators and transformers
	// (api/konfig/builtinpluginconsts).
	"kustomize.config.k8s.io": {"Kustomization", "Component"},
	"builtin":                 nil,
	// kind create cluster --config: sigs.k8s.io/kind
	// pkg/apis/config/v1alpha4 Cluster.
	"kind.x-k8s.io": {"Cluster"},
	// eksctl create cluster -f: github.com/eksctl-io/eksctl
	// pkg/apis/eksctl.io/v1alpha5 ClusterConfig.
	"eksctl.io": {"ClusterConfig"},
	// nodeadm's user data on EKS nodes (Amazon Linux 2023):
	// github.com/awslabs/amazon-eks-ami nodeadm/api/v1alpha1 NodeConfig.
	"node.eks.aws": {"NodeConfig"},
	// skaffold.yaml: github.com/GoogleContainerTools/skaffold
	// pkg/skaffold/schema (apiVersion skaffold/v4beta…, kind Config).
	"skaffold": {"Config"},
	// k3d cluster create --config: github.com/k3d-io/k3d
	// pkg/config/v1alpha5 SimpleConfig (kind Simple).
	"k3d.io": {"Simple"},
	// kpt's package file: github.com/kptdev/kpt pkg/api/kptfile/v1.
	"kpt.dev": {"Kptfile"},
	// Crossplane package metadata (crossplane.yaml), built into a package
	// image: github.com/crossplane/crossplane apis/pkg/meta.
	"meta.pkg.crossplane.io": {"Configuration", "Provider", "Function"},
	// Test suites run by kuttl and chainsaw against a cluster, not applied
	// to it: github.com/kudobuilder/kuttl pkg/apis/testharness/v1beta1,
	// github.com/kyverno/chainsaw pkg/apis/v1alpha1.
	"kuttl.dev":           {"TestSuite", "TestStep", "TestAssert"},
	"chainsaw.kyverno.io": {"Test", "Configuration", "StepTemplate"},
	"cli.kyverno.io":      {"Test", "Values", "UserInfo", "Context"},
	// The configuration files of the Kubernetes components themselves,
	// given to kubeadm, the kubelet, kube-proxy, the scheduler and the API
	// server by flag: k8s.io/kubernetes cmd/kubeadm/app/apis/kubeadm,
	// k8s.io/kubelet/config, k8s.io/kube-proxy/config,
	// k8s.io/kube-scheduler/config, k8s.io/apiserver/pkg/apis/apiserver,
	// k8s.io/apiserver/pkg/apis/audit, k8s.io/pod-security-admission/admission/api.
	"kubeadm.k8s.io":                       nil,
	"kubelet.config.k8s.io":                nil,
	"kubeproxy.config.k8s.io":              nil,
	"kubescheduler.config.k8s.io":          nil,
	"kubecontrollermanager.config.k8s.io":  nil,
	"apiserver.config.k8s.io":              nil,
	"apiserver.k8s.io":                     nil,
	"audit.k8s.io":                         nil,
	"pod-security.admission.config.k8s.io": nil,
	"eventratelimit.admission.k8s.io":      nil,
	"client.authentication.k8s.io":         nil,
	// The core group serves no kind Config or Policy: apiVersion v1 with
	// them is a kubeconfig (k8s.io/client-go/tools/clientcmd/api/v1
	// Config), or kube-scheduler's legacy --policy-config-file
	// (k8s.io/kube-scheduler/config/v1 Policy, until Kubernetes 1.23).
	"": {"Config", "Policy"},
}

// toolConfig reports whether apiVersion and kind are a tool's
// configuration rather than an object for the API server (toolConfigs).
func toolConfig(apiVersion, kind string) bool {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = "" // "v1": the core group
		if apiVersion == "builtin" {
			group = "builtin"
		}
	}
	kinds, ok := toolConfigs[group]
	if !ok {
		return false
	}
	if kinds == nil {
		return group != "" // every kind of the group
	}
	for _, k := range kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// skippedDir reports whether a walk leaves out a directory it finds:
// hidden directories (.git, .github: a CI system's files), and testdata,
// which holds a project's test fixtures — inputs built to be wrong, never
// applied — and which the go tool leaves out of its walks likewise ("go
// help packages": "Directory and file names that begin with "." or "_"
// are ignored by the go tool, as are directories named "testdata"."). A
// directory named with -f is read whatever its name.
func skippedDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "testdata" || name == "__snapshot__"
}

// unnamedConfig reports whether a document with apiVersion and kind has
// no metadata at all (none, or {}) and is of an API group that is not
// Kubernetes' own (the core group, the groups without a dot — apps,
// batch, policy — and *.k8s.io). The API server refuses to store an
// object without a name, so such a document is a tool's configuration
// Ladder does not list (flux's .fluxschema.yml, schema.plugin.fluxcd.io
// Config) or a test's snapshot of a custom resource's schema (helm-unittest
// writes metadata: {}), not something an upgrade can break. Alone in a
// file it is skipped as not a manifest; among manifests it is reported,
// as a document without apiVersion or kind is.
func unnamedConfig(h manifest.Head) bool {
	m := h.Metadata
	if m.Name != "" || m.GenerateName != "" || m.Namespace != "" || len(m.Labels) > 0 || len(m.Annotations) > 0 {
		return false
	}
	group, _, found := strings.Cut(h.APIVersion, "/")
	if !found {
		return false // the core group
	}
	return strings.Contains(group, ".") && !strings.HasSuffix(group, ".k8s.io") && group != "k8s.io"
}

var (
	apiVersionKey = regexp.MustCompile(`(?m)^[\t ]*(?:-[\t ]+)?["']?apiVersion["']?[\t ]*:`)
	kindKey       = regexp.MustCompile(`(?m)^[\t ]*(?:-[\t ]+)?["']?kind["']?[\t ]*:`)
	jsonKeys      = regexp.MustCompile(`"apiVersion"\s*:[\s\S]*"kind"\s*:|"kind"\s*:[\s\S]*"apiVersion"\s*:`)
)

// mayBeObject reports whether a document that did not parse could have
// been a Kubernetes object: its text has an apiVersion key and a kind key,
// as every object has. Without them it is some other YAML or JSON — a CI
// file with a syntax error, a JSON file with comments, a Jinja or
// CloudFormation template — and is judged as a document without
// apiVersion or kind: not a manifest, unless it sits among manifests.
func mayBeObject(doc []byte) bool {
	if apiVersionKey.Match(doc) && kindKey.Match(doc) {
		return true
	}
	return bytes.Contains(doc, []byte(`"apiVersion"`)) && jsonKeys.Match(doc)
}
