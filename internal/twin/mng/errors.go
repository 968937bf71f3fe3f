package mng

import "github.com/ladder-eks/ladder/internal/rules/nodegroup"

// Error is an EKS API error, printed as the AWS CLI prints one
// (nodegroup.Error).
type Error = nodegroup.Error

// EKS API exception names the twin returns.
const (
	InvalidParameterException = nodegroup.InvalidParameterException
	InvalidRequestException   = nodegroup.InvalidRequestException
	ResourceInUseException    = nodegroup.ResourceInUseException
	ResourceNotFoundException = nodegroup.ResourceNotFoundException
)

// Error codes of a failed update or an unhealthy node group (the errorCode
// of EKS's Update.errors and Nodegroup.health.issues).
const (
	PodEvictionFailure  = nodegroup.PodEvictionFailure
	NodeCreationFailure = nodegroup.NodeCreationFailure
)

// The update's arithmetic is nodegroup's (semantics.md §B, §F.9).
const MaxUnavailableQuota = nodegroup.MaxUnavailableQuota

// MaxUnavailable is how many nodes an update replaces in parallel in a
// group of size nodes with updateConfig c (nodegroup.MaxUnavailable).
func MaxUnavailable(c UpdateConfig, size int) int { return nodegroup.MaxUnavailable(c, size) }

// Surge is how many nodes the scale-up phase adds (nodegroup.Surge).
func Surge(zones, maxUnavailable int) int { return nodegroup.Surge(zones, maxUnavailable) }

// IsCode reports whether err is an EKS API error with the given code.
func IsCode(err error, code string) bool { return nodegroup.IsCode(err, code) }

func apiError(code, op, format string, args ...any) error {
	return nodegroup.NewError(code, op, format, args...)
}

// Operations.
const (
	opCreate = nodegroup.OpCreateNodegroup
	opUpdate = nodegroup.OpUpdateNodegroupVersion
	opDelete = nodegroup.OpDeleteNodegroup
)
