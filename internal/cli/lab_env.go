package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/lab"
)

func newLabEnvCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print the exports that point the AWS CLI, SDKs, kubectl and ladder at a running lab",
		Long: `Prints, shell-quoted, the exports for the lab in DIR: AWS_ENDPOINT_URL_EKS,
AWS_ENDPOINT_URL_AUTO_SCALING, AWS_ENDPOINT_URL_EC2 and AWS_ENDPOINT_URL_SSM (the
lab's one AWS endpoint), AWS_REGION and AWS_DEFAULT_REGION (the scenario's),
the lab's dummy credentials, and KUBECONFIG. The AWS CLI (v2.13+), boto3
(1.28+), aws-sdk-go-v2 and ladder's own commands then talk to the lab.

The lab must run and have been started with --scenario, which is what starts
its AWS endpoints.`,
		Example: `  eval "$(ladder lab env)"
  aws eks describe-cluster --name eksworkshop-eksctl
  ladder check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := lab.GetStatus(dir)
			if nolab := (*lab.NoLabError)(nil); errors.As(err, &nolab) {
				return fmt.Errorf("no lab in %s: start one with `ladder lab up --dir %s --scenario workshop` (the scenario starts its AWS endpoints)", nolab.Dir, nolab.Dir)
			}
			if err != nil {
				return err
			}
			lb := st.Lab
			if lb.AWS == nil {
				return fmt.Errorf("the lab in %s serves no AWS endpoints: it was started without --scenario; `ladder lab down --dir %s` then `ladder lab up --dir %s --scenario workshop` starts one that does", lb.Dir(), lb.Dir(), lb.Dir())
			}
			if err := awsEndpointsUp(st); err != nil {
				return err
			}
			env := append(awsserve.ClientEnv(lb.AWS.Endpoint, lb.AWS.Region, twinserve.AccessKeyID, twinserve.SecretAccessKey),
				awsserve.EnvVar{Name: "KUBECONFIG", Value: lb.Kubeconfig})
			out := cmd.OutOrStdout()
			if err := awsserve.WriteExports(out, env); err != nil {
				return err
			}
			_, err = fmt.Fprintf(out, "# then: aws eks describe-cluster --name %s; kubectl get nodes; ladder check\n", lb.AWS.Cluster)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", labDirHelp)
	return cmd
}

// awsEndpointsUp is nil when the lab's AWS endpoints answer, else says why
// not and what to do.
func awsEndpointsUp(st *lab.Status) error {
	dir := st.Lab.Dir()
	if st.Stale() {
		return fmt.Errorf("the lab in %s does not run (its processes are gone): `ladder lab up --dir %s --scenario %s` starts it again", dir, dir, st.Lab.AWS.Scenario)
	}
	for _, c := range st.Components {
		if c.Name == lab.AWSEndpoints && !c.Healthy {
			return fmt.Errorf("the lab's AWS endpoints (%s, pid %d) are not healthy (%s): see %s; `ladder lab down --dir %s` then `ladder lab up --dir %s --scenario %s` restarts the lab", c.Name, c.PID, c.Problem, c.Log, dir, dir, st.Lab.AWS.Scenario)
		}
		if c.Name == lab.AWSEndpoints {
			return nil
		}
	}
	return errors.New("lab.json names AWS endpoints but records no aws-serve process: `ladder lab down --dir " + dir + "` and start the lab again")
}
