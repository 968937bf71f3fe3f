package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ladder-eks/ladder/internal/insights"
	"github.com/ladder-eks/ladder/internal/insights/live"
	kubelive "github.com/ladder-eks/ladder/internal/kubeport/live"
)

// liveRequestTimeout is --request-timeout's default: it bounds each
// request to the API server, so an unreachable cluster is an error, not a
// hang. A page of 500 pods takes well under a second; the bound is for
// the network.
const liveRequestTimeout = 60 * time.Second

// liveInput reads a live cluster for ladder check: its objects (with the
// apiVersion each was last written with), the manifests of its Helm 3
// releases, the deprecated APIs its clients request, its nodes and
// version, and the drains of its nodes predicted in Ladder's twin
// (live.PredictDrains: up to 3 nodes of each group). kubeconfig and
// kubeContext follow kubectl's rules ("" means the default loading rules
// and the current context). When EKS is to be asked (askEKS: --cluster,
// or an EKS endpoint configured), the control plane's version is EKS's
// DescribeCluster's, not the API server's. Target and Now are left to the
// caller.
func liveInput(ctx context.Context, kubeconfig, kubeContext, clusterFlag string, requestTimeout time.Duration) (*insights.Input, error) {
	kt, err := liveConfig(kubeconfig, kubeContext, requestTimeout, "check manifests with -f")
	if err != nil {
		return nil, err
	}
	cfg, entry := kt.cfg, kt.entry
	if ctx == nil {
		ctx = context.Background()
	}
	var cp *eksCluster
	if askEKS(clusterFlag) {
		// Before the read: a wrong cluster name should not cost one.
		if cp, err = describeEKSCluster(ctx, clusterFlag, entry); err != nil {
			return nil, err
		}
	}
	in, err := live.Read(ctx, cfg, live.Options{ClusterName: eksClusterName(entry)})
	if err != nil {
		return nil, err
	}
	if cp != nil {
		in.Current, in.CurrentSource = cp.Version, cp.source()
		in.Cluster.Name, in.Cluster.Version = cp.Name, cp.Version
	}
	if err := live.PredictDrains(ctx, cfg, in, live.Options{}); err != nil {
		// The read stands; only the drain checks go without.
		in.Problems = append(in.Problems, insights.Problem{Source: insights.Source{Origin: in.Cluster.Source}, Severity: insights.Warning,
			Message: fmt.Sprintf("the drains of the nodes could not be predicted (%v): drain-blocked and drain-timeout-risk were skipped", err),
			Fix:     "fix what the message names and check again"})
	}
	return in, nil
}

// kubeTarget is a kubeconfig context resolved: its client configuration,
// the context's name and its cluster entry's (an EKS cluster's ARN, as
// `aws eks update-kubeconfig` writes it).
type kubeTarget struct {
	cfg            *rest.Config
	context, entry string
}

// liveConfig builds the client configuration of a kubeconfig context, with
// messages that say what is missing, each request to the API server
// bounded by requestTimeout (kubelive.BoundRequests). orElse is what the
// command can do without a cluster, offered when there is no kubeconfig
// ("check manifests with -f"), or "".
func liveConfig(kubeconfig, kubeContext string, requestTimeout time.Duration, orElse string) (kubeTarget, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	raw, err := loader.RawConfig()
	if err != nil {
		return kubeTarget{}, fmt.Errorf("reading the kubeconfig: %v (fix the file or pass another with --kubeconfig)", err)
	}
	name := raw.CurrentContext
	if kubeContext != "" {
		name = kubeContext
	}
	if len(raw.Contexts) == 0 {
		return kubeTarget{}, fmt.Errorf("no kubeconfig with a context found (looked at %s): %s", kubeconfigPaths(rules), orElseHint(orElse))
	}
	kc, ok := raw.Contexts[name]
	switch {
	case !ok && name == "":
		return kubeTarget{}, fmt.Errorf("the kubeconfig has no current context: pass --context (one of %s)", contextNames(raw.Contexts))
	case !ok:
		return kubeTarget{}, fmt.Errorf("--context %q: no such context in the kubeconfig (known: %s)", name, contextNames(raw.Contexts))
	case kc == nil:
		return kubeTarget{}, fmt.Errorf("kubeconfig context %q is empty: give it a cluster and a user, or pick another with --context", name)
	}
	switch cluster, ok := raw.Clusters[kc.Cluster]; {
	case !ok:
		return kubeTarget{}, fmt.Errorf("kubeconfig context %q names cluster %q, which the kubeconfig does not define (known clusters: %s): fix the context or pick another with --context", name, kc.Cluster, contextNames(raw.Clusters))
	case cluster.Server == "":
		return kubeTarget{}, fmt.Errorf("kubeconfig cluster %q (context %q) has no server: set clusters[].cluster.server, or for EKS run aws eks update-kubeconfig --name CLUSTER", kc.Cluster, name)
	}
	if _, ok := raw.AuthInfos[kc.AuthInfo]; kc.AuthInfo != "" && !ok {
		return kubeTarget{}, fmt.Errorf("kubeconfig context %q names user %q, which the kubeconfig does not define (known users: %s): fix the context or pick another with --context", name, kc.AuthInfo, contextNames(raw.AuthInfos))
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return kubeTarget{}, fmt.Errorf("kubeconfig context %q: %s", name, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	kubelive.BoundRequests(cfg, requestTimeout)
	return kubeTarget{cfg: cfg, context: name, entry: kc.Cluster}, nil
}

// eksClusterName is the EKS cluster's name in a kubeconfig cluster entry
// (eksClusterFromKubeconfig), else the entry itself.
func eksClusterName(entry string) string {
	if name, ok := eksClusterFromKubeconfig(entry); ok {
		return name
	}
	return entry
}

func orElseHint(orElse string) string {
	if orElse == "" {
		return "pass --kubeconfig or set KUBECONFIG"
	}
	return "pass --kubeconfig, set KUBECONFIG, or " + orElse
}
