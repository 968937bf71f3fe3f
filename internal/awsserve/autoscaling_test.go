package awsserve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/conformance"
	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeport"
	"github.com/ladder-eks/ladder/internal/kubeport/twinport"
	"github.com/ladder-eks/ladder/internal/sim"
	"github.com/ladder-eks/ladder/internal/twin/asg"
	twinec2 "github.com/ladder-eks/ladder/internal/twin/ec2"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twin/worker"
)

// t0 is a day on which EKS offers 1.30 and 1.31, with AMIs for both.
var t0 = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

// serve starts h on 127.0.0.1 for the test.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sdkConfig is how a caller configures aws-sdk-go-v2 for an endpoint of
// its own (aws-apis.md §1.8): a region to sign for and dummy static
// credentials; the clients sign every request with them.
func sdkConfig() aws.Config {
	return aws.Config{
		Region: "us-west-2",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "test"}, nil
		}),
	}
}

func autoScalingClient(url string) *autoscaling.Client {
	return autoscaling.NewFromConfig(sdkConfig(), func(o *autoscaling.Options) { o.BaseEndpoint = aws.String(url) })
}

func ec2Client(url string) *ec2.Client {
	return ec2.NewFromConfig(sdkConfig(), func(o *ec2.Options) { o.BaseEndpoint = aws.String(url) })
}

// wireASG is two self-managed groups of two nodes on the twins, served
// over Auto Scaling's and EC2's query protocols and called through the
// SDK's own clients; Wait advances the twin behind the servers.
type wireASG struct {
	api  *autoscaling.Client
	lts  *ec2.Client
	port *twinport.Port
}

type wireASGHarness struct{}

func (wireASGHarness) NewAutoScalingEnv(t *testing.T) conformance.AutoScalingEnv {
	eng := sim.New(t0, 1)
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	kc := kube.New(eng, kube.Options{Region: "us-west-2", Zones: zones})
	a := asg.New(eng, kc, worker.New(eng, kc, twinec2.New("us-west-2", zones, eng.Rand()), worker.Timings{}),
		asg.Options{InstanceTypes: catalog.InstanceTypes(), Zones: zones})
	for _, name := range []string{"workers-b", "workers-a"} {
		if err := a.Create(asg.Spec{Name: name, InstanceType: "m5.large", Desired: 2, Min: 2, Max: 4,
			LaunchTemplate: asg.LaunchTemplate{Name: name, Version: "1", ImageID: "ami-0f676a166352f02ab"}}, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	ports := twinaws.NewAutoScaling(a).WithClock(eng.Now)
	return &wireASG{
		api:  autoScalingClient(serve(t, NewAutoScaling(ports))),
		lts:  ec2Client(serve(t, NewEC2(twinaws.NewAMIs(eng.Now), ports))),
		port: twinport.New(kc, twinport.Options{}),
	}
}

func (e *wireASG) AutoScaling() awsport.AutoScaling         { return e.api }
func (e *wireASG) LaunchTemplates() awsport.LaunchTemplates { return e.lts }
func (e *wireASG) Groups() [2]string                        { return [2]string{"workers-b", "workers-a"} }
func (e *wireASG) NextImage() string                        { return "ami-0c4dea04571b1b508" }
func (e *wireASG) Wait(ctx context.Context, timeout time.Duration, cond kubeport.Condition) error {
	return e.port.Wait(ctx, timeout, cond)
}

// TestAutoScalingConformanceOverTheWire runs the Auto Scaling suite on the
// twin behind NewAutoScaling and NewEC2, through aws-sdk-go-v2's clients.
func TestAutoScalingConformanceOverTheWire(t *testing.T) {
	conformance.RunAutoScaling(t, wireASGHarness{})
}

// recordingASG answers each call with out (an output, or an error) and
// keeps the input it got.
type recordingASG struct {
	in, out any
}

func recordASG[I, O any](r *recordingASG, in *I) (*O, error) {
	r.in = in
	if err, ok := r.out.(error); ok {
		return nil, err
	}
	return r.out.(*O), nil
}

func (r *recordingASG) DescribeAutoScalingGroups(_ context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	return recordASG[autoscaling.DescribeAutoScalingGroupsInput, autoscaling.DescribeAutoScalingGroupsOutput](r, in)
}
func (r *recordingASG) StartInstanceRefresh(_ context.Context, in *autoscaling.StartInstanceRefreshInput, _ ...func(*autoscaling.Options)) (*autoscaling.StartInstanceRefreshOutput, error) {
	return recordASG[autoscaling.StartInstanceRefreshInput, autoscaling.StartInstanceRefreshOutput](r, in)
}
func (r *recordingASG) DescribeInstanceRefreshes(_ context.Context, in *autoscaling.DescribeInstanceRefreshesInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeInstanceRefreshesOutput, error) {
	return recordASG[autoscaling.DescribeInstanceRefreshesInput, autoscaling.DescribeInstanceRefreshesOutput](r, in)
}
func (r *recordingASG) DescribeLifecycleHooks(_ context.Context, in *autoscaling.DescribeLifecycleHooksInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeLifecycleHooksOutput, error) {
	return recordASG[autoscaling.DescribeLifecycleHooksInput, autoscaling.DescribeLifecycleHooksOutput](r, in)
}
func (r *recordingASG) PutLifecycleHook(_ context.Context, in *autoscaling.PutLifecycleHookInput, _ ...func(*autoscaling.Options)) (*autoscaling.PutLifecycleHookOutput, error) {
	return recordASG[autoscaling.PutLifecycleHookInput, autoscaling.PutLifecycleHookOutput](r, in)
}
func (r *recordingASG) CompleteLifecycleAction(_ context.Context, in *autoscaling.CompleteLifecycleActionInput, _ ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error) {
	return recordASG[autoscaling.CompleteLifecycleActionInput, autoscaling.CompleteLifecycleActionOutput](r, in)
}

func (r *recordingASG) UpdateAutoScalingGroup(_ context.Context, in *autoscaling.UpdateAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.UpdateAutoScalingGroupOutput, error) {
	return recordASG[autoscaling.UpdateAutoScalingGroupInput, autoscaling.UpdateAutoScalingGroupOutput](r, in)
}

func (r *recordingASG) SetDesiredCapacity(_ context.Context, in *autoscaling.SetDesiredCapacityInput, _ ...func(*autoscaling.Options)) (*autoscaling.SetDesiredCapacityOutput, error) {
	return recordASG[autoscaling.SetDesiredCapacityInput, autoscaling.SetDesiredCapacityOutput](r, in)
}

func (r *recordingASG) TerminateInstanceInAutoScalingGroup(_ context.Context, in *autoscaling.TerminateInstanceInAutoScalingGroupInput, _ ...func(*autoscaling.Options)) (*autoscaling.TerminateInstanceInAutoScalingGroupOutput, error) {
	return recordASG[autoscaling.TerminateInstanceInAutoScalingGroupInput, autoscaling.TerminateInstanceInAutoScalingGroupOutput](r, in)
}

// roundTrip sends an input with every member set through the client and
// answers with an output with every member set: the port must get the
// one and the client the other, member for member.
func roundTrip[I, O any](t *testing.T, rec *recordingASG, call func(context.Context, *I, ...func(*autoscaling.Options)) (*O, error)) {
	in, out := filled[I](), filled[O]()
	rec.out = out
	got, err := call(t.Context(), in)
	name := reflect.TypeOf(in).Elem().Name()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if d := differingFields(in, rec.in); len(d) > 0 {
		t.Errorf("%s: the port got %v different:\n%+v\nwant\n%+v", name, d, rec.in, in)
	}
	if d := differingFields(out, got); len(d) > 0 {
		t.Errorf("%s's output: the client got %v different:\n%+v\nwant\n%+v", name, d, got, out)
	}
}

// Every member of every Auto Scaling operation's input and output — the
// groups with their instances, launch templates, mixed instances
// policies and tags, the refreshes with their preferences, progress and
// rollback details, the hooks — crosses the wire both ways intact.
func TestAutoScalingMembersRoundTrip(t *testing.T) {
	rec := &recordingASG{}
	c := autoScalingClient(serve(t, NewAutoScaling(rec)))
	roundTrip(t, rec, c.DescribeAutoScalingGroups)
	roundTrip(t, rec, c.StartInstanceRefresh)
	roundTrip(t, rec, c.DescribeInstanceRefreshes)
	roundTrip(t, rec, c.DescribeLifecycleHooks)
	roundTrip(t, rec, c.PutLifecycleHook)
	roundTrip(t, rec, c.CompleteLifecycleAction)
}

// post sends a raw form to url and returns the status and body.
func post(t *testing.T, url, form string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/x-www-form-urlencoded; charset=utf-8", strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Auto Scaling's errors (aws-apis.md §1.3, §3.5): <ErrorResponse> with
// the model's error code, Sender for a 4xx and Receiver for a 5xx, the
// status from the fault's awsQueryError trait; the SDK raises the
// modelled faults as their types and ValidationError as a
// smithy.GenericAPIError.
func TestAutoScalingErrors(t *testing.T) {
	msg := aws.String("An Instance Refresh is already in progress")
	for _, c := range []struct {
		name   string
		err    error
		status int
		body   string
		typed  func(error) bool
	}{
		{"in-progress", &asgtypes.InstanceRefreshInProgressFault{Message: msg}, 400,
			`<Error><Type>Sender</Type><Code>InstanceRefreshInProgress</Code><Message>An Instance Refresh is already in progress</Message></Error>`,
			func(err error) bool {
				var e *asgtypes.InstanceRefreshInProgressFault
				return errors.As(err, &e) && aws.ToString(e.Message) == *msg
			}},
		{"none-active", &asgtypes.ActiveInstanceRefreshNotFoundFault{Message: aws.String("No in progress or pending Instance Refresh found")}, 400,
			`<Code>ActiveInstanceRefreshNotFound</Code>`,
			func(err error) bool { var e *asgtypes.ActiveInstanceRefreshNotFoundFault; return errors.As(err, &e) }},
		{"contention", &asgtypes.ResourceContentionFault{Message: aws.String("You already have a pending update")}, 500,
			`<Error><Type>Receiver</Type><Code>ResourceContention</Code>`,
			func(err error) bool { var e *asgtypes.ResourceContentionFault; return errors.As(err, &e) }},
		{"next-token", &asgtypes.InvalidNextToken{Message: aws.String("bad token")}, 400, `<Code>InvalidNextToken</Code>`,
			func(err error) bool { var e *asgtypes.InvalidNextToken; return errors.As(err, &e) }},
		{"validation", &smithy.GenericAPIError{Code: "ValidationError", Message: "AutoScalingGroup name not found - x"}, 400,
			`<Error><Type>Sender</Type><Code>ValidationError</Code><Message>AutoScalingGroup name not found - x</Message></Error>`,
			func(err error) bool {
				var e *smithy.GenericAPIError
				return errors.As(err, &e) && e.Code == "ValidationError" && e.Message == "AutoScalingGroup name not found - x"
			}},
		{"internal", errors.New("the twin broke"), 500, `<Error><Type>Receiver</Type><Code>InternalFailure</Code><Message>the twin broke</Message></Error>`,
			func(err error) bool {
				var e *smithy.GenericAPIError
				return errors.As(err, &e) && e.Code == "InternalFailure"
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := serve(t, NewAutoScaling(&recordingASG{out: c.err}))
			status, body := post(t, url, "Action=StartInstanceRefresh&Version=2011-01-01&AutoScalingGroupName=g")
			prefix := `<ErrorResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/">`
			if status != c.status || !strings.HasPrefix(body, prefix) || !strings.Contains(body, c.body) || !strings.Contains(body, "</Error><RequestId>") {
				t.Errorf("HTTP %d %s\nwant %d, %s…%s…<RequestId>", status, body, c.status, prefix, c.body)
			}
			client := autoscaling.NewFromConfig(sdkConfig(), func(o *autoscaling.Options) { o.BaseEndpoint = aws.String(url); o.RetryMaxAttempts = 1 })
			_, err := client.StartInstanceRefresh(t.Context(), &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("g")})
			if !c.typed(err) {
				t.Errorf("the SDK returned %T %v", err, err)
			}
		})
	}
}

// The success envelope the SDKs look for by name: <ActionResponse> in
// Auto Scaling's namespace, <ActionResult>, list items as <member>, and
// the request id in <ResponseMetadata>; an empty output still has its
// Result. An unknown action is InvalidAction.
func TestAutoScalingResponseShape(t *testing.T) {
	rec := &recordingASG{out: &autoscaling.DescribeLifecycleHooksOutput{LifecycleHooks: []asgtypes.LifecycleHook{{LifecycleHookName: aws.String("drain"), HeartbeatTimeout: aws.Int32(300)}}}}
	url := serve(t, NewAutoScaling(rec))
	status, body := post(t, url, "Action=DescribeLifecycleHooks&Version=2011-01-01&AutoScalingGroupName=g&LifecycleHookNames=")
	want := `<DescribeLifecycleHooksResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><DescribeLifecycleHooksResult>` +
		`<LifecycleHooks><member><HeartbeatTimeout>300</HeartbeatTimeout><LifecycleHookName>drain</LifecycleHookName></member></LifecycleHooks>` +
		`</DescribeLifecycleHooksResult><ResponseMetadata><RequestId>`
	if status != 200 || !strings.HasPrefix(body, want) || !strings.HasSuffix(body, "</RequestId></ResponseMetadata></DescribeLifecycleHooksResponse>") {
		t.Errorf("HTTP %d %s\nwant 200 %s…", status, body, want)
	}
	// The empty list Go's client sends as a bare key is an empty list.
	if in := rec.in.(*autoscaling.DescribeLifecycleHooksInput); in.LifecycleHookNames == nil || len(in.LifecycleHookNames) != 0 {
		t.Errorf("LifecycleHookNames= decoded as %#v, want an empty list", in.LifecycleHookNames)
	}
	for _, out := range []*autoscaling.PutLifecycleHookOutput{{}, nil} {
		rec.out = out
		_, body = post(t, url, "Action=PutLifecycleHook&Version=2011-01-01&AutoScalingGroupName=g&LifecycleHookName=h")
		if !strings.Contains(body, "<PutLifecycleHookResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\"><PutLifecycleHookResult></PutLifecycleHookResult><ResponseMetadata>") {
			t.Errorf("PutLifecycleHook answering %#v: %s, want an empty PutLifecycleHookResult", out, body)
		}
	}
	status, body = post(t, url, "Action=DeleteAutoScalingGroup&Version=2011-01-01")
	if status != 400 || !strings.Contains(body, "<Code>InvalidAction</Code>") {
		t.Errorf("an action the lab does not serve: HTTP %d %s, want 400 InvalidAction", status, body)
	}
	status, body = post(t, url, "Action=DescribeAutoScalingGroups&Version=2011-01-01&MaxRecords=many")
	if status != 400 || !strings.Contains(body, "<Code>ValidationError</Code><Message>Value &#39;many&#39; for parameter MaxRecords is invalid") {
		t.Errorf("MaxRecords=many: HTTP %d %s, want 400 ValidationError naming MaxRecords", status, body)
	}
}

// The SDK's paginators walk the twin's pages over the wire:
// DescribeAutoScalingGroups one group a page, DescribeLaunchTemplateVersions
// one version a page.
func TestPaginatorsOverTheWire(t *testing.T) {
	env := wireASGHarness{}.NewAutoScalingEnv(t).(*wireASG)
	ctx := t.Context()
	var groups []string
	pages := autoscaling.NewDescribeAutoScalingGroupsPaginator(env.api, &autoscaling.DescribeAutoScalingGroupsInput{MaxRecords: aws.Int32(1)})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range out.AutoScalingGroups {
			groups = append(groups, aws.ToString(g.AutoScalingGroupName))
		}
	}
	if !slices.Equal(groups, []string{"workers-a", "workers-b"}) {
		t.Errorf("groups page by page: %v, want [workers-a workers-b]", groups)
	}
	for _, image := range []string{"ami-0c4dea04571b1b508", "ami-9611a9490b074d3c1"} {
		if _, err := env.lts.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String("workers-a"),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(image)}}); err != nil {
			t.Fatal(err)
		}
	}
	var versions []int64
	var images []string
	lts := ec2.NewDescribeLaunchTemplateVersionsPaginator(env.lts, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("workers-a"), MaxResults: aws.Int32(1)})
	for lts.HasMorePages() {
		out, err := lts.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range out.LaunchTemplateVersions {
			versions = append(versions, aws.ToInt64(v.VersionNumber))
			images = append(images, aws.ToString(v.LaunchTemplateData.ImageId))
		}
	}
	if !slices.Equal(versions, []int64{1, 2, 3}) || !slices.Equal(images, []string{"ami-0f676a166352f02ab", "ami-0c4dea04571b1b508", "ami-9611a9490b074d3c1"}) {
		t.Errorf("launch template versions page by page: %v with images %v", versions, images)
	}
}
