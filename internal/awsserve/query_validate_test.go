package awsserve

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
)

// rewriting is a transport that edits a request's form on the wire, as a
// client other than the SDK (or an attacker) would send it.
type rewriting func(form string) string

func (f rewriting) RoundTrip(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	form := f(string(b))
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(form)), int64(len(form))
	return http.DefaultTransport.RoundTrip(r)
}

// The query services check a form as AWS's front end does, and the SDK
// raises each refusal by its code and status: a Version that is not the
// service's (Auto Scaling's InvalidAction, EC2's NoSuchVersion) or none
// (MissingParameter), a parameter given twice (InvalidQueryParameter),
// awsQuery list items not numbered 1, 2, 3, … (ValidationError), and
// names outside the models' lengths and patterns (Auto Scaling's
// ValidationError in AWS's words, EC2's
// InvalidLaunchTemplateName.MalformedException). The port is never
// called for them.
func TestQueryInputValidation(t *testing.T) {
	asgRec := &recordingASG{out: &autoscaling.DescribeAutoScalingGroupsOutput{}}
	ec2Rec := &recordingEC2{out: &ec2.DescribeImagesOutput{}}
	asgURL := serve(t, NewAutoScaling(asgRec))
	ec2URL := serve(t, NewEC2(ec2Rec, ec2Rec))
	asg := func(edit rewriting) *autoscaling.Client {
		return autoscaling.NewFromConfig(sdkConfig(), func(o *autoscaling.Options) {
			o.BaseEndpoint, o.RetryMaxAttempts = aws.String(asgURL), 1
			if edit != nil {
				o.HTTPClient = &http.Client{Transport: edit}
			}
		})
	}
	ec2c := func(edit rewriting) *ec2.Client {
		return ec2.NewFromConfig(sdkConfig(), func(o *ec2.Options) {
			o.BaseEndpoint, o.RetryMaxAttempts = aws.String(ec2URL), 1
			if edit != nil {
				o.HTTPClient = &http.Client{Transport: edit}
			}
		})
	}
	replace := func(old, new string) rewriting {
		return func(form string) string { return strings.Replace(form, old, new, 1) }
	}
	names := func(n ...string) *autoscaling.DescribeAutoScalingGroupsInput {
		return &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: n}
	}
	long := strings.Repeat("g", 256)
	for _, c := range []struct {
		name    string
		call    func() error
		status  int
		code    string
		message string
	}{
		{"asg wrong version", func() error {
			_, err := asg(replace("Version=2011-01-01", "Version=2010-08-01")).DescribeAutoScalingGroups(t.Context(), names())
			return err
		}, 400, "InvalidAction", "Could not find operation DescribeAutoScalingGroups for version 2010-08-01"},
		{"asg no version", func() error {
			_, err := asg(replace("&Version=2011-01-01", "")).DescribeAutoScalingGroups(t.Context(), names())
			return err
		}, 400, "MissingParameter", "The request must contain the parameter Version."},
		{"asg duplicated parameter", func() error {
			_, err := asg(func(f string) string { return f + "&AutoScalingGroupName=other" }).
				StartInstanceRefresh(t.Context(), &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("g")})
			return err
		}, 400, "InvalidQueryParameter", "The parameter AutoScalingGroupName is given 2 times; give it once."},
		{"asg duplicated Action", func() error {
			_, err := asg(func(f string) string { return f + "&Action=SetDesiredCapacity" }).DescribeAutoScalingGroups(t.Context(), names())
			return err
		}, 400, "InvalidQueryParameter", "The parameter Action is given 2 times; give it once."},
		{"asg member.0", func() error {
			_, err := asg(replace("member.1", "member.0")).DescribeAutoScalingGroups(t.Context(), names("a"))
			return err
		}, 400, "ValidationError", "The parameter AutoScalingGroupNames.member.0 has list index '0': items are numbered 1, 2, 3, …"},
		{"asg member.01", func() error {
			_, err := asg(replace("member.1", "member.01")).DescribeAutoScalingGroups(t.Context(), names("a"))
			return err
		}, 400, "ValidationError", "The parameter AutoScalingGroupNames.member.01 has list index '01': items are numbered 1, 2, 3, …"},
		{"asg member gap", func() error {
			_, err := asg(replace("member.2", "member.3")).DescribeAutoScalingGroups(t.Context(), names("a", "b"))
			return err
		}, 400, "ValidationError", "The parameter AutoScalingGroupNames.member.3 has no item AutoScalingGroupNames.member.2 before it: items are numbered 1, 2, 3, … without gaps"},
		{"asg group name too long", func() error {
			_, err := asg(nil).StartInstanceRefresh(t.Context(), &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String(long)})
			return err
		}, 400, "ValidationError", "1 validation error detected: Value '" + long + "' at 'autoScalingGroupName' failed to satisfy constraint: Member must have length less than or equal to 255"},
		{"asg empty group name", func() error {
			_, err := asg(nil).SetDesiredCapacity(t.Context(), &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String(""), DesiredCapacity: aws.Int32(1)})
			return err
		}, 400, "ValidationError", "1 validation error detected: Value '' at 'autoScalingGroupName' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"asg listed group name too long", func() error {
			_, err := asg(nil).DescribeAutoScalingGroups(t.Context(), names("a", long))
			return err
		}, 400, "ValidationError", "1 validation error detected: Value '" + long + "' at 'autoScalingGroupNames.2' failed to satisfy constraint: Member must have length less than or equal to 255"},
		{"asg launch template name", func() error {
			_, err := asg(nil).StartInstanceRefresh(t.Context(), &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("g"),
				DesiredConfiguration: &asgtypes.DesiredConfiguration{LaunchTemplate: &asgtypes.LaunchTemplateSpecification{LaunchTemplateName: aws.String("my template"), Version: aws.String("$Latest")}}})
			return err
		}, 400, "ValidationError", `1 validation error detected: Value 'my template' at 'desiredConfiguration.launchTemplate.launchTemplateName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9\(\)\.\-/_]+`},
		{"asg lifecycle hook name", func() error {
			_, err := asg(nil).PutLifecycleHook(t.Context(), &autoscaling.PutLifecycleHookInput{AutoScalingGroupName: aws.String("g"), LifecycleHookName: aws.String("drain:now")})
			return err
		}, 400, "ValidationError", `1 validation error detected: Value 'drain:now' at 'lifecycleHookName' failed to satisfy constraint: Member must satisfy regular expression pattern: [A-Za-z0-9\-_\/]+`},
		{"asg control character in a group name", func() error {
			_, err := asg(nil).StartInstanceRefresh(t.Context(), &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("g\x00")})
			return err
		}, 400, "ValidationError", ""},
		{"ec2 wrong version", func() error {
			_, err := ec2c(replace("Version=2016-11-15", "Version=2014-10-01")).DescribeImages(t.Context(), &ec2.DescribeImagesInput{})
			return err
		}, 400, "NoSuchVersion", "The requested version (2014-10-01) of service AmazonEC2 does not exist"},
		{"ec2 no version", func() error {
			_, err := ec2c(replace("&Version=2016-11-15", "")).DescribeImages(t.Context(), &ec2.DescribeImagesInput{})
			return err
		}, 400, "MissingParameter", "The request must contain the parameter Version."},
		{"ec2 duplicated parameter", func() error {
			_, err := ec2c(func(f string) string { return f + "&Owner.1=self" }).DescribeImages(t.Context(), &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
			return err
		}, 400, "InvalidQueryParameter", "The parameter Owner.1 is given 2 times; give it once."},
		{"ec2 launch template name", func() error {
			_, err := ec2c(nil).CreateLaunchTemplateVersion(t.Context(), &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String("lt"),
				LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-1")}})
			return err
		}, 400, "InvalidLaunchTemplateName.MalformedException", "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			asgRec.in, ec2Rec.in = nil, nil
			err := c.call()
			var ae smithy.APIError
			var re interface{ HTTPStatusCode() int }
			if !errors.As(err, &ae) || !errors.As(err, &re) {
				t.Fatalf("%v, want an API error", err)
			}
			if re.HTTPStatusCode() != c.status || ae.ErrorCode() != c.code || (c.message != "" && ae.ErrorMessage() != c.message) {
				t.Errorf("%d %s %q\nwant %d %s %q", re.HTTPStatusCode(), ae.ErrorCode(), ae.ErrorMessage(), c.status, c.code, c.message)
			}
			if asgRec.in != nil || ec2Rec.in != nil {
				t.Errorf("the port was called")
			}
		})
	}
}
