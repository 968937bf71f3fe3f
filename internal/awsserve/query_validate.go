package awsserve

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/smithy-go"
)

// What the query services check of a form before an operation reads it,
// as AWS's front end does: each parameter given once, the service's API
// version, list items numbered from 1 without gaps, and the names the
// models constrain, each refused with the service's own error code.

// checkQueryForm refuses a duplicated parameter (Action=A&Action=B, or a
// key in both the URL and the body) with InvalidQueryParameter: the
// lab, unlike a lenient parser, does not pick one of the values.
func checkQueryForm(f *queryForm) error {
	for _, k := range f.keys {
		if n := len(f.values[k]); n > 1 {
			return &smithy.GenericAPIError{Code: "InvalidQueryParameter", Fault: smithy.FaultClient,
				Message: fmt.Sprintf("The parameter %s is given %d times; give it once.", truncated(k), n)}
		}
	}
	return nil
}

// checkVersion refuses a form without the service's API version, or
// with another, as the service does: MissingParameter, then the
// service's own code for a version it does not have (wrongVersion).
func checkAPIVersion(f *queryForm, action, want string, wrongVersion func(action, got string) error) error {
	got, ok := f.values["Version"]
	if !ok || len(got) == 0 || got[0] == "" {
		return &smithy.GenericAPIError{Code: "MissingParameter", Fault: smithy.FaultClient,
			Message: "The request must contain the parameter Version."}
	}
	if got[0] != want {
		return wrongVersion(action, got[0])
	}
	return nil
}

// asgWrongVersion is awsQuery's answer to an unknown Version: the
// operation is looked up by action and version, and not found.
func asgWrongVersion(action, version string) error {
	return &smithy.GenericAPIError{Code: "InvalidAction", Fault: smithy.FaultClient,
		Message: fmt.Sprintf("Could not find operation %s for version %s", truncated(action), truncated(version))}
}

// ec2WrongVersion is EC2's answer to an unknown Version.
func ec2WrongVersion(_, version string) error {
	return &smithy.GenericAPIError{Code: "NoSuchVersion", Fault: smithy.FaultClient,
		Message: fmt.Sprintf("The requested version (%s) of service AmazonEC2 does not exist", truncated(version))}
}

// checkMemberIndexes refuses an awsQuery list item whose index is not a
// positive decimal without leading zeros (member.0, member.01, member.x),
// or that follows a gap (member.3 without member.2): the SDKs number
// items 1, 2, 3, …, and an item after a gap would otherwise be dropped
// without a word.
func checkMemberIndexes(f *queryForm) error {
	for _, k := range f.keys {
		segs := strings.Split(k, ".")
		for i := 0; i+1 < len(segs); i++ {
			if segs[i] != "member" && segs[i] != "entry" {
				continue
			}
			n, err := strconv.Atoi(segs[i+1])
			if err != nil || n < 1 || strconv.Itoa(n) != segs[i+1] {
				return asgValidation(fmt.Sprintf("The parameter %s has list index '%s': items are numbered 1, 2, 3, …", truncated(k), truncated(segs[i+1])))
			}
			if n > 1 {
				prev := strings.Join(segs[:i+1], ".") + "." + strconv.Itoa(n-1)
				if !f.has(prev) {
					return asgValidation(fmt.Sprintf("The parameter %s has no item %s before it: items are numbered 1, 2, 3, … without gaps", truncated(k), prev))
				}
			}
		}
	}
	return nil
}

func asgValidation(msg string) error {
	return &smithy.GenericAPIError{Code: "ValidationError", Message: msg, Fault: smithy.FaultClient}
}

// asgConstraint is a string member's length and pattern in Auto
// Scaling's model (the API reference's "Length Constraints" and
// "Pattern").
type asgConstraint struct {
	list     bool // the constraint of a list's items
	min, max int
	pattern  *regexp.Regexp
	text     string // the pattern as the model spells it
}

// xmlString is the model's XmlString pattern: any character XML allows,
// [\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\r\n\t]*.
const xmlStringPattern = `[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\r\n\t]*`

var (
	xmlString         = regexp.MustCompile(`^[\x{20}-\x{D7FF}\x{E000}-\x{FFFD}\x{10000}-\x{10FFFF}\r\n\t]*$`)
	asciiLTName       = regexp.MustCompile(`^[a-zA-Z0-9\(\)\.\-/_]+$`)
	asgHookName       = regexp.MustCompile(`^[A-Za-z0-9\-_\/]+$`)
	asgNameConstraint = asgConstraint{false, 1, 255, xmlString, xmlStringPattern}
	asgNamesItem      = asgConstraint{true, 1, 255, xmlString, xmlStringPattern}
)

// asgConstraints are the constrained members of the operations served,
// by their last form key segment (list items: the list's name), from the
// Auto Scaling API reference: XmlStringMaxLen255 for group names and
// refresh ids, LaunchTemplateName (3–255, [a-zA-Z0-9\(\)\.\-/_]+),
// AsciiStringMaxLen255 for hook names ([A-Za-z0-9\-_\/]+), XmlStringMaxLen19
// for instance ids, XmlStringMaxLen255 for a launch template version.
var asgConstraints = map[string]asgConstraint{
	"AutoScalingGroupName":  asgNameConstraint,
	"AutoScalingGroupNames": asgNamesItem,
	"InstanceRefreshIds":    asgNamesItem,
	"LaunchTemplateName":    {false, 3, 255, asciiLTName, `[a-zA-Z0-9\(\)\.\-/_]+`},
	"LaunchTemplateId":      asgNameConstraint,
	"Version":               asgNameConstraint,
	"LifecycleHookName":     {false, 1, 255, asgHookName, `[A-Za-z0-9\-_\/]+`},
	"LifecycleHookNames":    {true, 1, 255, asgHookName, `[A-Za-z0-9\-_\/]+`},
	"InstanceId":            {false, 1, 19, xmlString, xmlStringPattern},
}

// checkASGConstraints refuses a constrained member outside its length or
// pattern with Auto Scaling's ValidationError, in AWS's words ("1
// validation error detected: Value 'x' at 'autoScalingGroupName' failed
// to satisfy constraint: Member must have length less than or equal to
// 255"). The top-level Version is the API version, not a member.
func checkASGConstraints(f *queryForm) error {
	for _, k := range f.keys {
		if k == "Version" || k == "Action" {
			continue
		}
		segs := strings.Split(k, ".")
		name, path, item := segs[len(segs)-1], segs, false
		if len(segs) >= 3 && segs[len(segs)-2] == "member" {
			name, item = segs[len(segs)-3], true
		}
		c, ok := asgConstraints[name]
		if !ok || c.list != item {
			// A list's bare key is the SDKs' empty list (Names=).
			continue
		}
		v := f.values[k][0]
		var violated string
		switch n := utf8.RuneCountInString(v); {
		case n < c.min:
			violated = fmt.Sprintf("Member must have length greater than or equal to %d", c.min)
		case n > c.max:
			violated = fmt.Sprintf("Member must have length less than or equal to %d", c.max)
		case !utf8.ValidString(v) || !c.pattern.MatchString(v):
			violated = "Member must satisfy regular expression pattern: " + c.text
		default:
			continue
		}
		return asgValidation(fmt.Sprintf("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: %s", truncated(v), memberPath(path), violated))
	}
	return nil
}

// memberPath is a form key as AWS's validation messages name the member:
// lower camel case, list items by index (autoScalingGroupNames.1.member
// → autoScalingGroupNames.1).
func memberPath(segs []string) string {
	var out []string
	for _, s := range segs {
		if s == "member" {
			continue
		}
		if s != "" {
			s = strings.ToLower(s[:1]) + s[1:]
		}
		out = append(out, s)
	}
	return strings.Join(out, ".")
}

// ec2LaunchTemplateName is EC2's LaunchTemplateName: 3–128 characters of
// [a-zA-Z0-9\(\)\.\-/_] (EC2 API reference, CreateLaunchTemplate).
var ec2LaunchTemplateName = regexp.MustCompile(`^[a-zA-Z0-9\(\)\.\-/_]{3,128}$`)

// checkEC2Form refuses a malformed launch template name with EC2's
// InvalidLaunchTemplateName.MalformedException.
func checkEC2Form(f *queryForm) error {
	for _, k := range f.keys {
		if k != "LaunchTemplateName" && !strings.HasPrefix(k, "LaunchTemplateName.") {
			continue
		}
		if v := f.values[k][0]; !ec2LaunchTemplateName.MatchString(v) {
			return &smithy.GenericAPIError{Code: "InvalidLaunchTemplateName.MalformedException", Fault: smithy.FaultClient,
				Message: "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.'"}
		}
	}
	return nil
}

// truncated shortens a client's text echoed in an error to 256 bytes
// (at a rune boundary), so that an answer is never much larger than
// the error itself.
func truncated(s string) string {
	const most = 256
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
