package awsserve

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/awsport/conformance"
	"github.com/ladder-eks/ladder/internal/awsport/twinaws"
)

// wireAMIs is the catalog's images behind NewEC2, through the SDK's EC2
// client; SSM's parameters come from the twin directly (another endpoint
// serves them).
type wireAMIs struct {
	images *ec2.Client
	params awsport.Parameters
}

func (e wireAMIs) Images() awsport.Images         { return e.images }
func (e wireAMIs) Parameters() awsport.Parameters { return e.params }
func (wireAMIs) Minor() string                    { return "1.31" }

// TestAMIConformanceOverTheWire runs the AMI suite's DescribeImages over
// ec2Query: ids, the name filter's wildcards, MaxResults/NextToken pages,
// InvalidAMIID.NotFound.
func TestAMIConformanceOverTheWire(t *testing.T) {
	amis := twinaws.NewAMIs(func() time.Time { return t0 })
	conformance.RunAMI(t, wireAMIs{images: ec2Client(serve(t, NewEC2(amis, nil))), params: amis})
}

// recordingEC2 answers with out (an output, or an error) and keeps the
// input it got.
type recordingEC2 struct {
	in, out any
}

func (r *recordingEC2) DescribeImages(_ context.Context, in *ec2.DescribeImagesInput, _ ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	r.in = in
	if err, ok := r.out.(error); ok {
		return nil, err
	}
	return r.out.(*ec2.DescribeImagesOutput), nil
}
func (r *recordingEC2) DescribeLaunchTemplateVersions(_ context.Context, in *ec2.DescribeLaunchTemplateVersionsInput, _ ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error) {
	r.in = in
	if err, ok := r.out.(error); ok {
		return nil, err
	}
	return r.out.(*ec2.DescribeLaunchTemplateVersionsOutput), nil
}
func (r *recordingEC2) CreateLaunchTemplateVersion(_ context.Context, in *ec2.CreateLaunchTemplateVersionInput, _ ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	r.in = in
	if err, ok := r.out.(error); ok {
		return nil, err
	}
	return r.out.(*ec2.CreateLaunchTemplateVersionOutput), nil
}

// The members of RequestLaunchTemplateData, LaunchTemplateVersion's
// ResponseLaunchTemplateData and Image that NewEC2 does not carry: the
// lab's node groups set none of them. A request that sets one is refused
// (TestEC2RefusesWhatItDoesNotModel); an answer loses it.
var (
	ec2RequestDataLeftOut = []string{"BlockDeviceMappings", "CapacityReservationSpecification", "CpuOptions", "CreditSpecification",
		"ElasticGpuSpecifications", "ElasticInferenceAccelerators", "EnclaveOptions", "HibernationOptions", "InstanceMarketOptions",
		"InstanceRequirements", "LicenseSpecifications", "MaintenanceOptions", "MetadataOptions", "Monitoring", "NetworkInterfaces",
		"NetworkPerformanceOptions", "Operator", "Placement", "PrivateDnsNameOptions", "SecondaryInterfaces"}
	ec2ResponseDataLeftOut = ec2RequestDataLeftOut
	ec2ImageLeftOut        = []string{"BlockDeviceMappings", "ImageWatermarks", "ProductCodes", "StateReason"}
)

// Every member NewEC2 claims crosses the wire both ways through the SDK's
// client; the members it leaves out are exactly the lists above.
func TestEC2MembersRoundTrip(t *testing.T) {
	rec := &recordingEC2{}
	c := ec2Client(serve(t, NewEC2(rec, rec)))
	ctx := t.Context()

	images := filled[ec2.DescribeImagesInput]("DryRun")
	rec.out = filled[ec2.DescribeImagesOutput]()
	out, err := c.DescribeImages(ctx, images)
	if err != nil {
		t.Fatal(err)
	}
	if d := differingFields(images, rec.in); len(d) > 0 {
		t.Errorf("DescribeImagesInput: the port got %v different", d)
	}
	want := rec.out.(*ec2.DescribeImagesOutput)
	if len(out.Images) != 1 || aws.ToString(out.NextToken) != aws.ToString(want.NextToken) {
		t.Fatalf("DescribeImages: %d images, next %q; want 1, %q", len(out.Images), aws.ToString(out.NextToken), aws.ToString(want.NextToken))
	}
	if d := differingFields(want.Images[0], out.Images[0]); !slices.Equal(d, ec2ImageLeftOut) {
		t.Errorf("Image: %v differ, want only %v", d, ec2ImageLeftOut)
	}

	versions := filled[ec2.DescribeLaunchTemplateVersionsInput]("DryRun")
	rec.out = filled[ec2.DescribeLaunchTemplateVersionsOutput]()
	described, err := c.DescribeLaunchTemplateVersions(ctx, versions)
	if err != nil {
		t.Fatal(err)
	}
	if d := differingFields(versions, rec.in); len(d) > 0 {
		t.Errorf("DescribeLaunchTemplateVersionsInput: the port got %v different", d)
	}
	wantVersions := rec.out.(*ec2.DescribeLaunchTemplateVersionsOutput)
	if aws.ToString(described.NextToken) != aws.ToString(wantVersions.NextToken) || len(described.LaunchTemplateVersions) != 1 {
		t.Fatalf("DescribeLaunchTemplateVersions: %d versions, next %q", len(described.LaunchTemplateVersions), aws.ToString(described.NextToken))
	}
	checkVersion(t, &wantVersions.LaunchTemplateVersions[0], &described.LaunchTemplateVersions[0])

	create := filled[ec2.CreateLaunchTemplateVersionInput]("DryRun")
	create.LaunchTemplateData = filled[ec2types.RequestLaunchTemplateData](ec2RequestDataLeftOut...)
	rec.out = filled[ec2.CreateLaunchTemplateVersionOutput]()
	created, err := c.CreateLaunchTemplateVersion(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	if d := differingFields(create, rec.in); len(d) > 0 {
		t.Errorf("CreateLaunchTemplateVersionInput: the port got %v different", d)
	}
	wantCreated := rec.out.(*ec2.CreateLaunchTemplateVersionOutput)
	checkVersion(t, wantCreated.LaunchTemplateVersion, created.LaunchTemplateVersion)
	if d := differingFields(wantCreated, created); !slices.Equal(d, []string{"LaunchTemplateVersion"}) {
		t.Errorf("CreateLaunchTemplateVersionOutput: %v differ, want the version's left-out data only", d)
	}
}

func checkVersion(t *testing.T, want, got *ec2types.LaunchTemplateVersion) {
	t.Helper()
	if d := differingFields(want, got); !slices.Equal(d, []string{"LaunchTemplateData", "Operator"}) {
		t.Errorf("LaunchTemplateVersion: %v differ, want only LaunchTemplateData (in part) and Operator", d)
	}
	if d := differingFields(want.LaunchTemplateData, got.LaunchTemplateData); !slices.Equal(d, ec2ResponseDataLeftOut) {
		t.Errorf("ResponseLaunchTemplateData: %v differ, want only %v", d, ec2ResponseDataLeftOut)
	}
}

// A parameter the lab does not model is UnknownParameter, naming it; a
// DryRun that would have succeeded is DryRunOperation (aws-apis.md §4).
func TestEC2RefusesWhatItDoesNotModel(t *testing.T) {
	rec := &recordingEC2{out: &ec2.CreateLaunchTemplateVersionOutput{}}
	c := ec2Client(serve(t, NewEC2(rec, rec)))
	_, err := c.CreateLaunchTemplateVersion(t.Context(), &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String("workers-a"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-1"), Monitoring: &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(true)}}})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnknownParameter" || ae.ErrorMessage() != "The parameter LaunchTemplateData.Monitoring.Enabled is not recognized (the lab does not model it)." {
		t.Errorf("CreateLaunchTemplateVersion with Monitoring: %v, want UnknownParameter naming LaunchTemplateData.Monitoring.Enabled", err)
	}
	if rec.in != nil {
		t.Errorf("the port was called with %+v", rec.in)
	}
	_, err = c.DescribeImages(t.Context(), &ec2.DescribeImagesInput{DryRun: aws.Bool(true)})
	if !errors.As(err, &ae) || ae.ErrorCode() != "DryRunOperation" {
		t.Errorf("DescribeImages with DryRun: %v, want DryRunOperation", err)
	}
}

// EC2's errors (aws-apis.md §1.4): <Response><Errors><Error> with Code and
// Message, then RequestID with a capital ID, at the code's status; the
// SDK returns each as a smithy.GenericAPIError with its code.
func TestEC2Errors(t *testing.T) {
	for _, c := range []struct {
		err    error
		code   string
		status int
	}{
		{&smithy.GenericAPIError{Code: "InvalidAMIID.NotFound", Message: "The image id '[ami-1]' does not exist"}, "InvalidAMIID.NotFound", 400},
		{&smithy.GenericAPIError{Code: "InvalidLaunchTemplateName.NotFoundException", Message: "At least one of the launch templates specified in the request does not exist."}, "InvalidLaunchTemplateName.NotFoundException", 400},
		{&smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "Request limit exceeded."}, "RequestLimitExceeded", 503},
		{errors.New("the twin broke"), "InternalError", 500},
	} {
		t.Run(c.code, func(t *testing.T) {
			url := serve(t, NewEC2(&recordingEC2{out: c.err}, nil))
			status, body := post(t, url, "Action=DescribeImages&Version=2016-11-15&ImageId.1=ami-1")
			want := "<Response><Errors><Error><Code>" + c.code + "</Code><Message>"
			if status != c.status || !strings.HasPrefix(body, want) || !strings.Contains(body, "</Message></Error></Errors><RequestID>") {
				t.Errorf("HTTP %d %s\nwant %d %s…<RequestID>", status, body, c.status, want)
			}
			client := ec2.NewFromConfig(sdkConfig(), func(o *ec2.Options) { o.BaseEndpoint = aws.String(url); o.RetryMaxAttempts = 1 })
			_, err := client.DescribeImages(t.Context(), &ec2.DescribeImagesInput{ImageIds: []string{"ami-1"}})
			var ae *smithy.GenericAPIError
			if !errors.As(err, &ae) || ae.Code != c.code {
				t.Errorf("the SDK returned %T %v, want a GenericAPIError %s", err, err, c.code)
			}
		})
	}
}

// The success envelope: <ActionResponse> in EC2's namespace with
// <requestId> and the output's locationNames, no Result wrapper, list
// items as <item> (aws-apis.md §1.4).
func TestEC2ResponseShape(t *testing.T) {
	rec := &recordingEC2{out: &ec2.DescribeImagesOutput{Images: []ec2types.Image{{ImageId: aws.String("ami-1"), State: ec2types.ImageStateAvailable,
		Public: aws.Bool(true), OwnerId: aws.String("602401143452"), Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}}}}
	status, body := post(t, serve(t, NewEC2(rec, nil)), "Action=DescribeImages&Version=2016-11-15&Owner.1=amazon&Filter.1.Name=name&Filter.1.Value.1=a*&Filter.1.Value.2=b*")
	if !strings.HasPrefix(body, `<DescribeImagesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>`) ||
		!strings.HasSuffix(body, `</requestId><imagesSet><item><imageId>ami-1</imageId><imageOwnerId>602401143452</imageOwnerId><isPublic>true</isPublic>`+
			`<imageState>available</imageState><tagSet><item><key>k</key><value>v</value></item></tagSet></item></imagesSet></DescribeImagesResponse>`) || status != 200 {
		t.Errorf("HTTP %d %s", status, body)
	}
	in := rec.in.(*ec2.DescribeImagesInput)
	if !slices.Equal(in.Owners, []string{"amazon"}) || len(in.Filters) != 1 || aws.ToString(in.Filters[0].Name) != "name" || !slices.Equal(in.Filters[0].Values, []string{"a*", "b*"}) {
		t.Errorf("decoded %+v", in)
	}
}
