package awsserve

import (
	"context"
	"net/http"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/ladder-eks/ladder/internal/awsport"
)

// EC2's client (service/ec2) is generated without schemas: its
// serializers.go and deserializers.go name each member by hand. So the
// operations here name theirs by hand too, member by member as those
// files read and write them (aws-apis.md §1.4, §4): request keys are the
// capitalised query names with lists flattened (ImageId.1, Owner.1,
// Filter.1.Value.1, LaunchTemplateVersion.1), response elements the
// lower-camel locationNames with lists of <item> (imagesSet,
// launchTemplateVersionSet, tagSet). A request key no operation reads is
// refused with UnknownParameter rather than dropped, so a caller learns
// what the lab does not model.

// ec2Namespace is EC2's XML namespace (aws-apis.md §1.1).
const ec2Namespace = "http://ec2.amazonaws.com/doc/" + ec2Version + "/"

// ec2Version is EC2's API version, every request's Version.
const ec2Version = "2016-11-15"

// ec2Operation decodes its input from the form, calls the port and writes
// its output members into the response.
type ec2Operation func(ctx context.Context, f *ec2Form, x *queryXML) error

func ec2Serve(op ec2Operation) queryOperation {
	return func(ctx context.Context, form *queryForm, _ string, body *queryXML) error {
		return op(ctx, &ec2Form{f: form}, body)
	}
}

// NewEC2 serves EC2's ec2Query protocol (aws-apis.md §1.4, §4) for the
// operations of awsport.Images and awsport.LaunchTemplates: DescribeImages,
// DescribeLaunchTemplateVersions and CreateLaunchTemplateVersion, errors in
// ec2Query's <Response><Errors> envelope (every EC2 error reaches the SDK
// as a smithy.GenericAPIError with its code). As NewAutoScaling, it calls
// the ports from the request's goroutine.
func NewEC2(images awsport.Images, lts awsport.LaunchTemplates) http.Handler {
	ops := map[string]queryOperation{
		"DescribeImages": ec2Serve(func(ctx context.Context, f *ec2Form, x *queryXML) error {
			in := f.describeImages()
			if err := f.done(in.DryRun); err != nil {
				return err
			}
			out, err := images.DescribeImages(ctx, in)
			if err != nil {
				return err
			}
			ec2WriteImages(x, out)
			return nil
		}),
		"DescribeLaunchTemplateVersions": ec2Serve(func(ctx context.Context, f *ec2Form, x *queryXML) error {
			in := f.describeLaunchTemplateVersions()
			if err := f.done(in.DryRun); err != nil {
				return err
			}
			out, err := lts.DescribeLaunchTemplateVersions(ctx, in)
			if err != nil {
				return err
			}
			ec2WriteList(x, "launchTemplateVersionSet", out.LaunchTemplateVersions, func(v ec2types.LaunchTemplateVersion) {
				ec2WriteLaunchTemplateVersion(x, &v)
			})
			x.str("nextToken", out.NextToken)
			return nil
		}),
		"CreateLaunchTemplateVersion": ec2Serve(func(ctx context.Context, f *ec2Form, x *queryXML) error {
			in := f.createLaunchTemplateVersion()
			if err := f.done(in.DryRun); err != nil {
				return err
			}
			out, err := lts.CreateLaunchTemplateVersion(ctx, in)
			if err != nil {
				return err
			}
			if out.LaunchTemplateVersion != nil {
				x.start("launchTemplateVersion")
				ec2WriteLaunchTemplateVersion(x, out.LaunchTemplateVersion)
				x.end("launchTemplateVersion")
			}
			if out.Warning != nil {
				x.start("warning")
				ec2WriteList(x, "errorSet", out.Warning.Errors, func(e ec2types.ValidationError) {
					x.str("code", e.Code)
					x.str("message", e.Message)
				})
				x.end("warning")
			}
			return nil
		}),
	}
	return &queryService{ops: ops, envelope: ec2Envelope, errorBody: ec2ErrorBody, status: ec2Status, internalError: "InternalError",
		version: ec2Version, wrongVersion: ec2WrongVersion, check: checkEC2Form}
}

// ec2Envelope is ec2Query's success response: <ActionResponse> in the
// service's namespace with <requestId> and the output's members, no
// Result wrapper.
func ec2Envelope(action, id string, body []byte) []byte {
	var x queryXML
	x.b.WriteString(`<` + action + `Response xmlns="` + ec2Namespace + `">`)
	x.text("requestId", id)
	x.b.Write(body)
	x.end(action + "Response")
	return x.b.Bytes()
}

// ec2Status is the HTTP status EC2 answers an error code with (aws-apis.md
// §1.9, §4): DryRunOperation 412 (as moto), UnauthorizedOperation 403,
// throttling and unavailability 503, otherwise 400 for the client's
// faults and 500 for the service's.
func ec2Status(code string, fault smithy.ErrorFault) int {
	switch code {
	case "DryRunOperation":
		return http.StatusPreconditionFailed
	case "UnauthorizedOperation":
		return http.StatusForbidden
	case "RequestLimitExceeded", "Unavailable":
		return http.StatusServiceUnavailable
	case "InternalError":
		return http.StatusInternalServerError
	}
	return queryStatus(fault)
}

// ec2ErrorBody is ec2Query's error response: Response, Errors, Error,
// and RequestID with a capital ID (aws-apis.md §1.4).
func ec2ErrorBody(ae smithy.APIError, _ int, id string) []byte {
	var x queryXML
	x.start("Response")
	x.start("Errors")
	x.start("Error")
	x.text("Code", ae.ErrorCode())
	x.text("Message", ae.ErrorMessage())
	x.end("Error")
	x.end("Errors")
	x.text("RequestID", id)
	x.end("Response")
	return x.b.Bytes()
}

// ec2Form decodes an ec2Query form; err is the first value that does not
// parse.
type ec2Form struct {
	f   *queryForm
	err error
}

func (d *ec2Form) str(key string) *string {
	if v, ok := d.f.get(key); ok {
		return &v
	}
	return nil
}

func (d *ec2Form) int32(key string) *int32 {
	v, ok := d.f.get(key)
	if !ok {
		return nil
	}
	n, err := parseQueryInt(key, v, 32)
	if err != nil && d.err == nil {
		d.err = err
	}
	i := int32(n)
	return &i
}

func (d *ec2Form) bool(key string) *bool {
	v, ok := d.f.get(key)
	if !ok {
		return nil
	}
	b, err := parseQueryBool(key, v)
	if err != nil && d.err == nil {
		d.err = err
	}
	return &b
}

// items is the number of items of the flattened list key: key.1, key.2, …
// until one is missing.
func (d *ec2Form) items(key string) int {
	n := 0
	for d.f.has(key + "." + strconv.Itoa(n+1)) {
		n++
	}
	return n
}

// strings is a flattened list of strings, nil when the form has none.
func (d *ec2Form) strings(key string) []string {
	var out []string
	for i := 1; i <= d.items(key); i++ {
		v, _ := d.f.get(key + "." + strconv.Itoa(i))
		out = append(out, v)
	}
	return out
}

// filters is Filter.N.Name with its values Filter.N.Value.M.
func (d *ec2Form) filters() []ec2types.Filter {
	var out []ec2types.Filter
	for i := 1; i <= d.items("Filter"); i++ {
		k := "Filter." + strconv.Itoa(i)
		out = append(out, ec2types.Filter{Name: d.str(k + ".Name"), Values: d.strings(k + ".Value")})
	}
	return out
}

// done refuses what the operation did not read, then a DryRun: the
// request would have succeeded.
func (d *ec2Form) done(dryRun *bool) error {
	if d.err != nil {
		return &smithy.GenericAPIError{Code: "InvalidParameterValue", Message: d.err.Error(), Fault: smithy.FaultClient}
	}
	if k, ok := d.f.unread(); ok {
		return &smithy.GenericAPIError{Code: "UnknownParameter", Message: "The parameter " + k + " is not recognized (the lab does not model it).", Fault: smithy.FaultClient}
	}
	if dryRun != nil && *dryRun {
		return &smithy.GenericAPIError{Code: "DryRunOperation", Message: "Request would have succeeded, but DryRun flag is set.", Fault: smithy.FaultClient}
	}
	return nil
}

func (d *ec2Form) describeImages() *ec2.DescribeImagesInput {
	return &ec2.DescribeImagesInput{
		DryRun:            d.bool("DryRun"),
		ExecutableUsers:   d.strings("ExecutableBy"),
		Filters:           d.filters(),
		ImageIds:          d.strings("ImageId"),
		IncludeDeprecated: d.bool("IncludeDeprecated"),
		IncludeDisabled:   d.bool("IncludeDisabled"),
		MaxResults:        d.int32("MaxResults"),
		NextToken:         d.str("NextToken"),
		Owners:            d.strings("Owner"),
	}
}

func (d *ec2Form) describeLaunchTemplateVersions() *ec2.DescribeLaunchTemplateVersionsInput {
	return &ec2.DescribeLaunchTemplateVersionsInput{
		DryRun:                  d.bool("DryRun"),
		Filters:                 d.filters(),
		IncludeManagedResources: d.bool("IncludeManagedResources"),
		LaunchTemplateId:        d.str("LaunchTemplateId"),
		LaunchTemplateName:      d.str("LaunchTemplateName"),
		MaxResults:              d.int32("MaxResults"),
		MaxVersion:              d.str("MaxVersion"),
		MinVersion:              d.str("MinVersion"),
		NextToken:               d.str("NextToken"),
		ResolveAlias:            d.bool("ResolveAlias"),
		Versions:                d.strings("LaunchTemplateVersion"),
	}
}

func (d *ec2Form) createLaunchTemplateVersion() *ec2.CreateLaunchTemplateVersionInput {
	in := &ec2.CreateLaunchTemplateVersionInput{
		ClientToken:        d.str("ClientToken"),
		DryRun:             d.bool("DryRun"),
		LaunchTemplateId:   d.str("LaunchTemplateId"),
		LaunchTemplateName: d.str("LaunchTemplateName"),
		ResolveAlias:       d.bool("ResolveAlias"),
		SourceVersion:      d.str("SourceVersion"),
		VersionDescription: d.str("VersionDescription"),
	}
	if d.f.has("LaunchTemplateData") {
		in.LaunchTemplateData = d.launchTemplateData("LaunchTemplateData.")
	}
	return in
}

// launchTemplateData reads the members of RequestLaunchTemplateData a
// node group's template sets: the image, instance type, user data, key,
// security groups, instance profile and tags.
func (d *ec2Form) launchTemplateData(p string) *ec2types.RequestLaunchTemplateData {
	data := &ec2types.RequestLaunchTemplateData{
		DisableApiStop:        d.bool(p + "DisableApiStop"),
		DisableApiTermination: d.bool(p + "DisableApiTermination"),
		EbsOptimized:          d.bool(p + "EbsOptimized"),
		ImageId:               d.str(p + "ImageId"),
		KernelId:              d.str(p + "KernelId"),
		KeyName:               d.str(p + "KeyName"),
		RamDiskId:             d.str(p + "RamDiskId"),
		SecurityGroupIds:      d.strings(p + "SecurityGroupId"),
		SecurityGroups:        d.strings(p + "SecurityGroup"),
		UserData:              d.str(p + "UserData"),
	}
	if v := d.str(p + "InstanceInitiatedShutdownBehavior"); v != nil {
		data.InstanceInitiatedShutdownBehavior = ec2types.ShutdownBehavior(*v)
	}
	if v := d.str(p + "InstanceType"); v != nil {
		data.InstanceType = ec2types.InstanceType(*v)
	}
	if d.f.has(p + "IamInstanceProfile") {
		data.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{
			Arn: d.str(p + "IamInstanceProfile.Arn"), Name: d.str(p + "IamInstanceProfile.Name")}
	}
	for i := 1; i <= d.items(p+"TagSpecification"); i++ {
		k := p + "TagSpecification." + strconv.Itoa(i)
		spec := ec2types.LaunchTemplateTagSpecificationRequest{Tags: d.tags(k + ".Tag")}
		if v := d.str(k + ".ResourceType"); v != nil {
			spec.ResourceType = ec2types.ResourceType(*v)
		}
		data.TagSpecifications = append(data.TagSpecifications, spec)
	}
	return data
}

func (d *ec2Form) tags(key string) []ec2types.Tag {
	var out []ec2types.Tag
	for i := 1; i <= d.items(key); i++ {
		k := key + "." + strconv.Itoa(i)
		out = append(out, ec2types.Tag{Key: d.str(k + ".Key"), Value: d.str(k + ".Value")})
	}
	return out
}

func ec2WriteImages(x *queryXML, out *ec2.DescribeImagesOutput) {
	ec2WriteList(x, "imagesSet", out.Images, func(img ec2types.Image) {
		x.enum("architecture", string(img.Architecture))
		x.enum("bootMode", string(img.BootMode))
		x.str("creationDate", img.CreationDate)
		x.str("deprecationTime", img.DeprecationTime)
		x.str("deregistrationProtection", img.DeregistrationProtection)
		x.str("description", img.Description)
		x.bool("enaSupport", img.EnaSupport)
		x.bool("freeTierEligible", img.FreeTierEligible)
		x.enum("hypervisor", string(img.Hypervisor))
		x.bool("imageAllowed", img.ImageAllowed)
		x.str("imageId", img.ImageId)
		x.str("imageLocation", img.ImageLocation)
		x.str("imageOwnerAlias", img.ImageOwnerAlias)
		x.enum("imageType", string(img.ImageType))
		x.enum("imdsSupport", string(img.ImdsSupport))
		x.str("kernelId", img.KernelId)
		x.str("lastLaunchedTime", img.LastLaunchedTime)
		x.str("name", img.Name)
		x.str("imageOwnerId", img.OwnerId)
		x.enum("platform", string(img.Platform))
		x.str("platformDetails", img.PlatformDetails)
		x.bool("isPublic", img.Public)
		x.str("ramdiskId", img.RamdiskId)
		x.str("rootDeviceName", img.RootDeviceName)
		x.enum("rootDeviceType", string(img.RootDeviceType))
		x.str("sourceImageId", img.SourceImageId)
		x.str("sourceImageRegion", img.SourceImageRegion)
		x.str("sourceInstanceId", img.SourceInstanceId)
		x.str("sriovNetSupport", img.SriovNetSupport)
		x.enum("imageState", string(img.State))
		ec2WriteTags(x, "tagSet", img.Tags)
		x.enum("tpmSupport", string(img.TpmSupport))
		x.str("usageOperation", img.UsageOperation)
		x.enum("virtualizationType", string(img.VirtualizationType))
	})
	x.str("nextToken", out.NextToken)
}

// ec2WriteList writes a list as EC2 does, its items as <item>; a nil
// list writes nothing.
func ec2WriteList[T any](x *queryXML, name string, items []T, item func(T)) {
	if items == nil {
		return
	}
	x.start(name)
	for _, v := range items {
		x.start("item")
		item(v)
		x.end("item")
	}
	x.end(name)
}

func ec2WriteTags(x *queryXML, name string, tags []ec2types.Tag) {
	ec2WriteList(x, name, tags, func(t ec2types.Tag) {
		x.str("key", t.Key)
		x.str("value", t.Value)
	})
}

func ec2WriteStrings(x *queryXML, name string, vs []string) {
	if vs == nil {
		return
	}
	x.start(name)
	for _, v := range vs {
		x.text("item", v)
	}
	x.end(name)
}

// ec2WriteLaunchTemplateVersion writes a version's members.
func ec2WriteLaunchTemplateVersion(x *queryXML, v *ec2types.LaunchTemplateVersion) {
	x.str("createdBy", v.CreatedBy)
	x.time("createTime", v.CreateTime)
	x.bool("defaultVersion", v.DefaultVersion)
	if d := v.LaunchTemplateData; d != nil {
		x.start("launchTemplateData")
		x.bool("disableApiStop", d.DisableApiStop)
		x.bool("disableApiTermination", d.DisableApiTermination)
		x.bool("ebsOptimized", d.EbsOptimized)
		if p := d.IamInstanceProfile; p != nil {
			x.start("iamInstanceProfile")
			x.str("arn", p.Arn)
			x.str("name", p.Name)
			x.end("iamInstanceProfile")
		}
		x.str("imageId", d.ImageId)
		x.enum("instanceInitiatedShutdownBehavior", string(d.InstanceInitiatedShutdownBehavior))
		x.enum("instanceType", string(d.InstanceType))
		x.str("kernelId", d.KernelId)
		x.str("keyName", d.KeyName)
		x.str("ramDiskId", d.RamDiskId)
		ec2WriteStrings(x, "securityGroupIdSet", d.SecurityGroupIds)
		ec2WriteStrings(x, "securityGroupSet", d.SecurityGroups)
		ec2WriteList(x, "tagSpecificationSet", d.TagSpecifications, func(s ec2types.LaunchTemplateTagSpecification) {
			x.enum("resourceType", string(s.ResourceType))
			ec2WriteTags(x, "tagSet", s.Tags)
		})
		x.str("userData", d.UserData)
		x.end("launchTemplateData")
	}
	x.str("launchTemplateId", v.LaunchTemplateId)
	x.str("launchTemplateName", v.LaunchTemplateName)
	x.str("versionDescription", v.VersionDescription)
	x.int64("versionNumber", v.VersionNumber)
}
