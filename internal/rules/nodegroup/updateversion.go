package nodegroup

import (
	"time"

	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// UpdateNodegroupVersion's refusals (semantics.md §B "Other MNG rules" and
// "Custom launch template / AMI"; UpdateNodegroupVersion API reference), one
// function per rule, each over the fields of DescribeNodegroup and of the
// request it reads.

// LaunchTemplate is a LaunchTemplateSpecification (id or name, and version).
// ImageID is the AMI that version specifies: EKS reads it from EC2, a caller
// without EC2 tells it.
type LaunchTemplate struct {
	ID, Name, Version, ImageID string
}

// UpdateRequest is UpdateNodegroupVersion's request.
type UpdateRequest struct {
	// Version is the Kubernetes minor to update to. Default: "If no
	// version is specified, then the node group will be updated to match
	// the cluster's current Kubernetes version, and the latest available
	// AMI for that version will be used" (UpdateNodegroupVersion API).
	Version string
	// ReleaseVersion pins the AMI release ("1.31.14-20260320" or
	// "v20260320"); default: the newest for Version.
	ReleaseVersion string
	// LaunchTemplate moves the group to another version of its launch
	// template; for a custom-AMI group, ImageID is that version's AMI
	// (empty: the same AMI as before).
	LaunchTemplate *LaunchTemplate
	// Force deletes the pods that do not leave a node within 15 minutes
	// instead of failing the update.
	Force bool
}

// Node group statuses that accept an update.
const (
	statusActive     = "ACTIVE"
	statusDegraded   = "DEGRADED"
	updateInProgress = "InProgress"
)

// CheckUpdatable refuses an update of a node group that has one in
// progress (its id in runningUpdate) or is not ACTIVE or DEGRADED.
func CheckUpdatable(name, status, runningUpdate string) error {
	if runningUpdate != "" {
		return NewError(ResourceInUseException, OpUpdateNodegroupVersion, "Nodegroup %s is already being updated (update %s is %s); wait until it is ACTIVE", name, runningUpdate, updateInProgress)
	}
	if status != statusActive && status != statusDegraded {
		return NewError(ResourceInUseException, OpUpdateNodegroupVersion, "Nodegroup %s is %s; only an ACTIVE node group can be updated", name, status)
	}
	return nil
}

// CheckLaunchTemplate checks a request's launch template against the one
// the group was created with (group nil: none; groupID its id, resolved
// from its name if need be): "You can update a node group using a launch
// template only if the node group was originally deployed with a launch
// template. Additionally, the launch template ID or name must match what
// was used when the node group was created" (UpdateNodegroupVersion API);
// "You must create a new node group to switch between specifying an AMI ID
// in a launch template and not specifying an AMI ID" (§B).
func CheckLaunchTemplate(name string, group *LaunchTemplate, groupID string, req *LaunchTemplate) error {
	switch {
	case group == nil:
		return NewError(InvalidParameterException, OpUpdateNodegroupVersion, "You can only update a node group using a launch template if the node group was originally deployed with a launch template.")
	case req.ID != "" && req.ID != groupID, req.Name != "" && req.Name != group.Name:
		return NewError(InvalidParameterException, OpUpdateNodegroupVersion, "The launch template %s does not match the node group's launch template %s.", templateRef(req), templateRef(group))
	case req.Version == "":
		return NewError(InvalidParameterException, OpUpdateNodegroupVersion, "launchTemplate.version: name the launch template version to update to")
	case group.ImageID == "" && req.ImageID != "":
		return NewError(InvalidParameterException, OpUpdateNodegroupVersion, "Launch template version %s specifies an AMI ID but node group %s was created without one; create a new node group to switch.", req.Version, name)
	}
	return nil
}

// CheckCustomAMIRequest refuses a version or release version for a group
// whose launch template specifies an AMI (imageID): "The following fields
// can't be set in the API if you specify an AMI ID: amiType,
// releaseVersion, version" (§B); a version bump does not reach a
// custom-AMI group (workshop seed §6.1, custom-Y).
func CheckCustomAMIRequest(name, imageID string, req UpdateRequest) error {
	if req.Version != "" || req.ReleaseVersion != "" {
		return NewError(InvalidParameterException, OpUpdateNodegroupVersion, "Nodegroup %s uses a launch template with a custom AMI (%s): version and releaseVersion can't be specified. Create a new version of the launch template with the new AMI ID and update the node group to it.", name, imageID)
	}
	return nil
}

// TargetVersion is the Kubernetes minor an update of a group at version
// goes to: the requested one, by default the control plane's. "The version
// that you update to can't be greater than the control plane's version";
// "You cannot roll back a node group to an earlier Kubernetes version or
// AMI version" (§B).
func TargetVersion(name string, version, controlPlane kubeversion.Minor, requested string) (kubeversion.Minor, error) {
	target := controlPlane
	if requested != "" {
		v, err := kubeversion.Parse(requested)
		if err != nil {
			return kubeversion.Minor{}, NewError(InvalidParameterException, OpUpdateNodegroupVersion, "version: %v", err)
		}
		target = v
	}
	if controlPlane.Less(target) {
		return kubeversion.Minor{}, NewError(InvalidParameterException, OpUpdateNodegroupVersion, "Requested Kubernetes version %s is greater than the cluster's Kubernetes version %s; a node group can't be newer than its control plane.", target, controlPlane)
	}
	if target.Less(version) {
		return kubeversion.Minor{}, NewError(InvalidParameterException, OpUpdateNodegroupVersion, "Requested Kubernetes version %s is older than node group %s's version %s; node groups can't be rolled back to an earlier Kubernetes version.", target, name, version)
	}
	return target, nil
}

// Release is an EKS-optimized AMI release as DescribeNodegroup's
// releaseVersion names it, with its release date.
type Release struct {
	Version string
	Date    time.Time
}

// CheckRelease refuses a release older than the group's within the same
// Kubernetes minor (§B: no rollback "to an earlier ... AMI version").
func CheckRelease(name string, version, target kubeversion.Minor, from, to Release) error {
	if target == version && to.Date.Before(from.Date) {
		return NewError(InvalidParameterException, OpUpdateNodegroupVersion, "Requested release version %s is older than node group %s's release version %s; node groups can't be rolled back to an earlier AMI version.", to.Version, name, from.Version)
	}
	return nil
}

// Configuration is what a group's instances are launched with: the AMI and
// the user's launch template version ("" without one).
type Configuration struct {
	AMI, LaunchTemplateVersion string
}

// CheckChange refuses an update that changes nothing: the target
// configuration is the one the group launches now and no instance
// (oldInstances) still runs an earlier one. version and ami are what
// DescribeNodegroup reports.
func CheckChange(name string, version kubeversion.Minor, ami string, current, target Configuration, oldInstances int) error {
	if target == current && oldInstances == 0 {
		suffix := ""
		if current.LaunchTemplateVersion != "" {
			suffix = ", launch template version " + current.LaunchTemplateVersion
		}
		return NewError(InvalidParameterException, OpUpdateNodegroupVersion, "Nodegroup %s is already at Kubernetes version %s, AMI %s%s; there is nothing to update.", name, version, ami, suffix)
	}
	return nil
}

func templateRef(lt *LaunchTemplate) string {
	if lt.ID != "" {
		return lt.ID
	}
	return lt.Name
}
