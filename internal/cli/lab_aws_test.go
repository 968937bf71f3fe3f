package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/ladder-eks/ladder/internal/awsserve/labserve"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// `ladder lab aws-serve --scenario workshop` prints the exports of its
// endpoint, and aws-sdk-go-v2's EKS client configured from them alone
// upgrades the workshop's control plane one minor: accepted, UPDATING,
// then — the twin running 6,000 times faster than the wall clock — ACTIVE
// at the next minor, as the SDK's ClusterActive waiter sees it. Then, with
// the SSM, EC2 and Auto Scaling clients of the same exports, the
// self-managed group's instance refresh to the next minor's AMI, and
// EKS's nodegroup update of initial.
func TestLabAWSServe(t *testing.T) {
	sc, err := scenario.Resolve("workshop")
	if err != nil {
		t.Fatal(err)
	}
	cluster := sc.Spec.Cluster.Name
	cmd := newLabAWSServeCommand()
	cmd.SetArgs([]string{"--scenario", "workshop", "--time-scale", "6000"})
	out, w := io.Pipe()
	cmd.SetOut(w)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		w.Close()
	}()

	env := map[string]string{}
	lines := bufio.NewScanner(out)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "#") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(lines.Text(), "export "), "="); ok {
			env[k] = v
		}
	}
	go io.Copy(io.Discard, out)
	if env["AWS_ENDPOINT_URL_EKS"] == "" || env["AWS_ENDPOINT_URL_AUTO_SCALING"] == "" || env["AWS_ENDPOINT_URL_EC2"] == "" || env["AWS_REGION"] != sc.Spec.Cluster.Region || env["AWS_ACCESS_KEY_ID"] == "" {
		t.Fatalf("exports %v: want AWS_ENDPOINT_URL_EKS, _AUTO_SCALING, _EC2, AWS_REGION=%s and the credentials", env, sc.Spec.Cluster.Region)
	}
	client := eks.New(eks.Options{Region: env["AWS_REGION"], BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL_EKS"]),
		Credentials: credentials(env)})

	desc, err := client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: &cluster})
	if err != nil {
		t.Fatal(err)
	}
	next := kubeversion.MustParse(aws.ToString(desc.Cluster.Version)).Next().String()
	upd, err := client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: &cluster, Version: &next})
	if err != nil {
		t.Fatalf("UpdateClusterVersion to %s: %v", next, err)
	}
	if upd.Update.Status != ekstypes.UpdateStatusInProgress {
		t.Errorf("accepted update %s, want InProgress", upd.Update.Status)
	}
	after, err := eks.NewClusterActiveWaiter(client).WaitForOutput(ctx, &eks.DescribeClusterInput{Name: &cluster}, time.Minute,
		func(o *eks.ClusterActiveWaiterOptions) {
			o.MinDelay, o.MaxDelay = 20*time.Millisecond, 100*time.Millisecond
		})
	if err != nil {
		t.Fatalf("ClusterActive after UpdateClusterVersion: %v", err)
	}
	if v := aws.ToString(after.Cluster.Version); v != next {
		t.Errorf("cluster ACTIVE at %s, want %s", v, next)
	}
	selfManaged(ctx, t, env, next)
	nodegroup(ctx, t, client, cluster, next)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("aws-serve after its context ended: %v", err)
	}
}

// credentials are the printed dummy credentials as an SDK provider.
func credentials(env map[string]string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: env["AWS_ACCESS_KEY_ID"], SecretAccessKey: env["AWS_SECRET_ACCESS_KEY"]}, nil
	})
}

// poll calls done every 20 ms until it reports true, failing the test
// after a minute of wall time.
func poll(ctx context.Context, t *testing.T, what string, done func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := done()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s: not done after a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// selfManaged upgrades the workshop's self-managed group as a user does:
// the next minor's recommended AMI from SSM, a launch-template version
// with it, an instance refresh to $Latest, DescribeInstanceRefreshes until
// Successful.
func selfManaged(ctx context.Context, t *testing.T, env map[string]string, minor string) {
	const group = "default-selfmng"
	param, err := ssm.New(ssm.Options{Region: env["AWS_REGION"], BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL_SSM"]), Credentials: credentials(env)}).
		GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/" + minor + "/amazon-linux-2023/x86_64/standard/recommended/image_id")})
	if err != nil {
		t.Fatalf("GetParameter for %s: %v", minor, err)
	}
	ami := aws.ToString(param.Parameter.Value)
	ec2c := ec2.New(ec2.Options{Region: env["AWS_REGION"], BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL_EC2"]), Credentials: credentials(env)})
	v, err := ec2c.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String(group),
		SourceVersion: aws.String("1"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami)}})
	if err != nil {
		t.Fatalf("CreateLaunchTemplateVersion with %s: %v", ami, err)
	}
	if got := aws.ToString(v.LaunchTemplateVersion.LaunchTemplateData.ImageId); got != ami {
		t.Errorf("created version's ImageId %s, want %s", got, ami)
	}
	as := autoscaling.New(autoscaling.Options{Region: env["AWS_REGION"], BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL_AUTO_SCALING"]), Credentials: credentials(env)})
	start, err := as.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String(group),
		DesiredConfiguration: &asgtypes.DesiredConfiguration{LaunchTemplate: &asgtypes.LaunchTemplateSpecification{
			LaunchTemplateName: aws.String(group), Version: aws.String("$Latest")}},
		Preferences: &asgtypes.RefreshPreferences{MinHealthyPercentage: aws.Int32(100), MaxHealthyPercentage: aws.Int32(110), InstanceWarmup: aws.Int32(60)}})
	if err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	poll(ctx, t, "instance refresh", func() (bool, error) {
		out, err := as.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String(group),
			InstanceRefreshIds: []string{aws.ToString(start.InstanceRefreshId)}})
		if err != nil || len(out.InstanceRefreshes) != 1 {
			return false, err
		}
		switch s := out.InstanceRefreshes[0].Status; s {
		case asgtypes.InstanceRefreshStatusSuccessful:
			return true, nil
		case asgtypes.InstanceRefreshStatusFailed, asgtypes.InstanceRefreshStatusCancelled:
			return false, fmt.Errorf("status %s: %s", s, aws.ToString(out.InstanceRefreshes[0].StatusReason))
		}
		return false, nil
	})
	groups, err := as.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil || len(groups.AutoScalingGroups) != 1 {
		t.Fatalf("DescribeAutoScalingGroups %s: %v", group, err)
	}
	for _, i := range groups.AutoScalingGroups[0].Instances {
		if lt := i.LaunchTemplate; lt == nil || aws.ToString(lt.Version) != strconv.FormatInt(aws.ToInt64(v.LaunchTemplateVersion.VersionNumber), 10) {
			t.Errorf("instance %s on launch template %+v after the refresh, want version %d", aws.ToString(i.InstanceId), lt, aws.ToInt64(v.LaunchTemplateVersion.VersionNumber))
		}
	}
}

// nodegroup upgrades the managed group initial to minor: UpdateNodegroupVersion,
// then DescribeUpdate until Successful.
func nodegroup(ctx context.Context, t *testing.T, client *eks.Client, cluster, minor string) {
	const name = "initial"
	upd, err := client.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: &cluster,
		NodegroupName: aws.String(name), Version: &minor})
	if err != nil {
		t.Fatalf("UpdateNodegroupVersion %s to %s: %v", name, minor, err)
	}
	poll(ctx, t, "nodegroup update", func() (bool, error) {
		out, err := client.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: &cluster, NodegroupName: aws.String(name), UpdateId: upd.Update.Id})
		if err != nil {
			return false, err
		}
		switch s := out.Update.Status; s {
		case ekstypes.UpdateStatusSuccessful:
			return true, nil
		case ekstypes.UpdateStatusFailed, ekstypes.UpdateStatusCancelled:
			return false, fmt.Errorf("update %s", s)
		}
		return false, nil
	})
	ng, err := client.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: &cluster, NodegroupName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if v := aws.ToString(ng.Nodegroup.Version); v != minor {
		t.Errorf("nodegroup %s at %s after the update, want %s", name, v, minor)
	}
}

// With --lab-dir the endpoints act on the lab (labserve), reached through
// the lab's kubeconfig; without it they serve the twins. A lab directory
// without a kubeconfig is refused naming the flag.
func TestNewAWSBackendChoosesTheLab(t *testing.T) {
	sc, err := scenario.LoadBuiltin("workshop")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := newAWSBackend(sc, "", 60, nil); err != nil {
		t.Fatal(err)
	} else if _, ok := b.(*twinserve.Twin); !ok {
		t.Errorf("without --lab-dir: %T, want the twins", b)
	}
	dir := t.TempDir()
	if _, err := newAWSBackend(sc, dir, 60, nil); err == nil || !strings.Contains(err.Error(), "--lab-dir "+dir) {
		t.Errorf("a lab directory without a kubeconfig: %v", err)
	}
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: lab, cluster: {server: 'https://127.0.0.1:6443'}}]\n" +
		"users: [{name: admin, user: {token: t}}]\ncontexts: [{name: lab, context: {cluster: lab, user: admin}}]\ncurrent-context: lab\n"
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := newAWSBackend(sc, dir, 60, nil); err != nil {
		t.Fatal(err)
	} else if _, ok := b.(*labserve.Lab); !ok {
		t.Errorf("with --lab-dir: %T, want the lab's endpoints", b)
	}
}

// swapControlPlane on a directory that holds no lab is an error, not a
// swap. (Whether it swaps only one minor up is checked on a running lab
// only by lab.UpgradeControlPlane's own tests, not here.)
func TestSwapControlPlaneWithoutLab(t *testing.T) {
	dir := t.TempDir()
	if err := swapControlPlane(t.Context(), dir, "1.31"); err == nil {
		t.Error("a directory without a lab: no error")
	}
}

// `ladder lab aws-serve` refuses a bad flag in one line naming it, before
// a twin is built or a port taken: a --time-scale that is not a finite
// positive number, an --addr that is not HOST:PORT, or that is not a
// loopback address without --allow-remote.
func TestLabAWSServeRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--time-scale", "NaN"}, "--time-scale NaN: give virtual seconds per wall-clock second, above 0 and at most 86400"},
		{[]string{"--time-scale", "+Inf"}, "--time-scale +Inf: give virtual seconds per wall-clock second"},
		{[]string{"--time-scale", "-Inf"}, "--time-scale -Inf: give virtual seconds per wall-clock second"},
		{[]string{"--time-scale", "0"}, "--time-scale 0: give virtual seconds per wall-clock second"},
		{[]string{"--time-scale", "-60"}, "--time-scale -60: give virtual seconds per wall-clock second"},
		{[]string{"--time-scale", "1e9"}, "--time-scale 1e+09: give virtual seconds per wall-clock second"},
		{[]string{"--addr", "0.0.0.0:4566"}, `--addr "0.0.0.0:4566" is not a loopback address, and the endpoints accept the lab's public dummy credentials: use 127.0.0.1:PORT, or pass --allow-remote`},
		{[]string{"--addr", ":4566"}, `--addr ":4566" listens on every interface`},
		{[]string{"--addr", "[::]:4566"}, `--addr "[::]:4566" is not a loopback address`},
		{[]string{"--addr", "192.0.2.1:4566"}, `--addr "192.0.2.1:4566" is not a loopback address`},
		{[]string{"--addr", "example.com:4566"}, `--addr "example.com:4566": give an IP address (127.0.0.1:PORT), not a host name, or pass --allow-remote`},
		{[]string{"--addr", "127.0.0.1"}, `--addr "127.0.0.1": address 127.0.0.1: missing port in address (give HOST:PORT`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cmd := newLabAWSServeCommand()
			cmd.SetArgs(append([]string{"--scenario", "no-such-scenario"}, c.args...))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.ExecuteContext(t.Context())
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line containing %q", err, c.want)
			}
		})
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0", "127.0.0.2:0"} {
		if err := checkServeAddr(addr, false); err != nil {
			t.Errorf("checkServeAddr(%s): %v, want it accepted", addr, err)
		}
	}
	if err := checkServeAddr("0.0.0.0:4566", true); err != nil {
		t.Errorf("checkServeAddr(0.0.0.0:4566) with --allow-remote: %v, want it accepted", err)
	}
}
