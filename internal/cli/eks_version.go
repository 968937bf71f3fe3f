package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/sdkaws"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// eksEndpointEnv is the EKS endpoint the SDKs read from the environment
// (aws-apis.md §1.8): set, Ladder's commands ask it for the cluster's version.
const eksEndpointEnv = "AWS_ENDPOINT_URL_EKS"

// clusterFlagHelp documents --cluster for every command that reads a live
// cluster.
const clusterFlagHelp = "the EKS cluster's name: its control plane's version is read with EKS DescribeCluster (also when AWS_ENDPOINT_URL_EKS is set; default: the kubeconfig's cluster ARN, else the only cluster ListClusters returns)"

// eksRequestTimeout bounds the EKS calls, so that an endpoint that does
// not answer is an error, not a hang.
const eksRequestTimeout = 30 * time.Second

// eksCluster is the control plane as EKS describes it.
type eksCluster struct {
	Name    string
	Version kubeversion.Minor
}

// source is how the reports name where the version came from.
func (c *eksCluster) source() string { return "EKS DescribeCluster of cluster " + c.Name }

// askEKS reports whether a live cluster's version comes from EKS rather
// than from its API server's /version: when --cluster names the EKS
// cluster, or an EKS endpoint is configured (a lab's, or a proxy's). On
// EKS the two agree; where they do not (a lab's API server plays an EKS
// control plane of another version) EKS's is the one upgrades act on.
func askEKS(clusterFlag string) bool {
	return clusterFlag != "" || os.Getenv(eksEndpointEnv) != ""
}

// describeEKSCluster asks EKS, through aws-sdk-go-v2 and its default
// configuration chain (environment, shared config, SSO, instance role),
// for the control plane's version. The cluster is clusterFlag, else the
// one the kubeconfig's cluster entry names (kubeconfigCluster, as `aws eks
// update-kubeconfig` or eksctl write it), else the only one ListClusters
// returns.
func describeEKSCluster(ctx context.Context, clusterFlag, kubeconfigCluster string) (*eksCluster, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, eksRequestTimeout)
	defer cancel()
	ports, region, err := sdkaws.New(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("asking EKS for the cluster's version: %v (for a lab: eval \"$(ladder lab env)\")", err)
	}
	client := ports.EKS
	where := eksWhere(region)
	name := clusterFlag
	if name == "" {
		name, _ = eksClusterFromKubeconfig(kubeconfigCluster)
	}
	if name == "" {
		lister, _ := client.(awsport.ClusterLister)
		if name, err = onlyCluster(ctx, lister, where); err != nil {
			return nil, err
		}
	}
	out, err := client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	var notFound *ekstypes.ResourceNotFoundException
	switch {
	case errors.As(err, &notFound):
		return nil, fmt.Errorf("EKS %s has no cluster %q: pass --cluster with the EKS cluster's name", where, name)
	case err != nil:
		return nil, fmt.Errorf("EKS DescribeCluster %s %s: %v (%s)", name, where, oneLine(err), eksFix())
	case out.Cluster == nil:
		return nil, fmt.Errorf("EKS DescribeCluster %s %s: the answer has no cluster (%s)", name, where, eksFix())
	}
	v, err := kubeversion.Parse(aws.ToString(out.Cluster.Version))
	if err != nil {
		return nil, fmt.Errorf("EKS DescribeCluster %s %s: version %q: %v", name, where, aws.ToString(out.Cluster.Version), err)
	}
	return &eksCluster{Name: name, Version: v}, nil
}

// onlyCluster is the one cluster ListClusters returns.
func onlyCluster(ctx context.Context, client awsport.ClusterLister, where string) (string, error) {
	if client == nil {
		return "", fmt.Errorf("EKS %s cannot list clusters: pass --cluster with the EKS cluster's name", where)
	}
	out, err := client.ListClusters(ctx, &eks.ListClustersInput{})
	if err != nil {
		return "", fmt.Errorf("EKS ListClusters %s, to find the cluster: %v (pass --cluster with the EKS cluster's name, or %s)", where, oneLine(err), eksFix())
	}
	switch len(out.Clusters) {
	case 0:
		return "", fmt.Errorf("EKS %s lists no cluster: pass --cluster with the EKS cluster's name", where)
	case 1:
		if out.NextToken == nil {
			return out.Clusters[0], nil
		}
	}
	return "", fmt.Errorf("EKS %s lists several clusters (%s): pass --cluster with the one to check", where, strings.Join(out.Clusters, ", "))
}

// eksWhere names the endpoint asked: the configured one, else AWS's
// regional one.
func eksWhere(region string) string {
	if url := os.Getenv(eksEndpointEnv); url != "" {
		return fmt.Sprintf("at %s (%s, region %s)", url, eksEndpointEnv, region)
	}
	return "in " + region
}

// eksFix is what to do when EKS cannot be asked.
func eksFix() string {
	if os.Getenv(eksEndpointEnv) != "" {
		return "check that the endpoint runs — `ladder lab status` for a lab — or unset " + eksEndpointEnv + " to take the version from the API server"
	}
	return "check the AWS credentials and region, or leave --cluster out to take the version from the API server"
}

// eksClusterFromKubeconfig is the EKS cluster a kubeconfig cluster entry
// names, when it is one of the EKS tools' spellings: `aws eks
// update-kubeconfig`'s ARN (arn:aws:eks:REGION:ACCOUNT:cluster/NAME) or
// eksctl's NAME.REGION.eksctl.io.
func eksClusterFromKubeconfig(entry string) (string, bool) {
	if strings.HasPrefix(entry, "arn:") {
		if _, name, ok := strings.Cut(entry, ":cluster/"); ok && name != "" {
			return name, true
		}
	}
	if name, ok := strings.CutSuffix(entry, ".eksctl.io"); ok {
		if i := strings.LastIndex(name, "."); i > 0 {
			return name[:i], true
		}
	}
	return "", false
}

// oneLine keeps an SDK error on the one line Ladder's errors take.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
