package nodegroup

import (
	"errors"
	"fmt"
)

// EKS API exception names the twin returns.
const (
	InvalidParameterException = "InvalidParameterException"
	InvalidRequestException   = "InvalidRequestException"
	ResourceInUseException    = "ResourceInUseException"
	ResourceNotFoundException = "ResourceNotFoundException"
)

// Error codes of a failed update or an unhealthy node group (the errorCode
// of EKS's Update.errors and Nodegroup.health.issues).
const (
	// PodEvictionFailure: a node's pods did not leave within 15 minutes
	// (semantics.md §B upgrade phase step 3).
	PodEvictionFailure = "PodEvictionFailure"
	// NodeCreationFailure: new nodes did not launch or join (§B scale-up
	// phase, "Errors").
	NodeCreationFailure = "NodeCreationFailure"
)

// Error is an EKS API error, printed as the AWS CLI prints one. The
// messages are Ladder's wording of the documented rule; where AWS's own
// text is known (e.g. "Requested release version ... is not valid for
// kubernetes version ..."), it is used.
type Error struct {
	Code      string // InvalidParameterException, ...
	Operation string // UpdateNodegroupVersion, ...
	Message   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("An error occurred (%s) when calling the %s operation: %s", e.Code, e.Operation, e.Message)
}

// IsCode reports whether err is an EKS API error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// NewError is an EKS API error of operation op with code and a message.
func NewError(code, op, format string, args ...any) error {
	return &Error{Code: code, Operation: op, Message: fmt.Sprintf(format, args...)}
}

// Operations.
const (
	OpCreateNodegroup        = "CreateNodegroup"
	OpUpdateNodegroupVersion = "UpdateNodegroupVersion"
	OpDeleteNodegroup        = "DeleteNodegroup"
)
