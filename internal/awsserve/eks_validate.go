package awsserve

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// What EKS checks of an input before it acts, as its API documents it,
// each refused with a typed InvalidParameterException (400) that names
// the member.

// nodegroupName is a managed node group's name: 1–63 characters, a
// letter or digit first, then letters, digits, hyphens and underscores
// (EKS User Guide, "Create a managed node group": "Node group names can't
// be longer than 63 characters. It must start with letter or digit, but
// can also include hyphens and underscores for the remaining
// characters.").
var nodegroupName = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]{0,62}$`)

// EKS's limits on a node group's labels and taints (EKS API reference,
// CreateNodegroup "labels": key and value 1–63 characters; Taint: key
// 1–63, value 0–63; User Guide, "Node taints on managed node groups": at
// most 50 taints a node group).
const (
	maxLabelKey, maxLabelValue = 63, 63
	maxTaintKey, maxTaintValue = 63, 63
	maxTaints                  = 50
)

// validateEKSInput checks in, the decoded input of an EKS operation; nil
// for inputs EKS constrains no further than their types.
func validateEKSInput(in any) error {
	switch v := in.(type) {
	case *eks.CreateNodegroupInput:
		return validateCreateNodegroup(v)
	}
	return nil
}

func validateCreateNodegroup(in *eks.CreateNodegroupInput) error {
	cluster, name := in.ClusterName, in.NodegroupName
	refuse := func(format string, args ...any) error {
		return &ekstypes.InvalidParameterException{ClusterName: cluster, NodegroupName: name, Message: aws.String(fmt.Sprintf(format, args...))}
	}
	if n := aws.ToString(name); !nodegroupName.MatchString(n) {
		return refuse("nodegroupName '%s' is not a valid node group name: 1 to 63 characters, a letter or digit first, then letters, digits, hyphens (-) and underscores (_)", truncated(n))
	}
	for _, k := range slices.Sorted(maps.Keys(in.Labels)) {
		v := in.Labels[k]
		switch {
		case len(k) < 1 || len(k) > maxLabelKey:
			return refuse("labels: key '%s' has %d characters; a label key has 1 to %d", truncated(k), len(k), maxLabelKey)
		case len(v) < 1 || len(v) > maxLabelValue:
			return refuse("labels: the value of '%s' has %d characters; a label value has 1 to %d", truncated(k), len(v), maxLabelValue)
		}
		// Kubernetes' own rule for the node's labels
		// (apimachinery/pkg/util/validation IsQualifiedName,
		// IsValidLabelValue, as ValidateLabels applies them).
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return refuse("labels: key '%s' is not a Kubernetes label key: %s", truncated(k), errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return refuse("labels: the value '%s' of '%s' is not a Kubernetes label value: %s", truncated(v), truncated(k), errs[0])
		}
	}
	if len(in.Taints) > maxTaints {
		return refuse("taints: %d given; a node group has at most %d", len(in.Taints), maxTaints)
	}
	for i, t := range in.Taints {
		k, v := aws.ToString(t.Key), aws.ToString(t.Value)
		switch {
		case len(k) < 1 || len(k) > maxTaintKey:
			return refuse("taints[%d]: key '%s' has %d characters; a taint key has 1 to %d", i, truncated(k), len(k), maxTaintKey)
		case len(v) > maxTaintValue:
			return refuse("taints[%d]: the value of '%s' has %d characters; a taint value has at most %d", i, truncated(k), len(v), maxTaintValue)
		}
		// Kubernetes' rule for a Node's taints (k8s.io/kubernetes
		// pkg/apis/core/validation validateTaints: the key a qualified
		// name, the value a label value).
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return refuse("taints[%d]: key '%s' is not a Kubernetes taint key: %s", i, truncated(k), errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return refuse("taints[%d]: the value '%s' of '%s' is not a Kubernetes taint value: %s", i, truncated(v), truncated(k), errs[0])
		}
		if !validTaintEffect(t.Effect) {
			return refuse("taints[%d]: effect '%s' is not one of %s", i, truncated(string(t.Effect)), strings.Join(taintEffects(), ", "))
		}
	}
	return nil
}

func validTaintEffect(e ekstypes.TaintEffect) bool {
	for _, v := range e.Values() {
		if e == v {
			return true
		}
	}
	return false
}

func taintEffects() []string {
	var out []string
	for _, v := range ekstypes.TaintEffect("").Values() {
		out = append(out, string(v))
	}
	return out
}
