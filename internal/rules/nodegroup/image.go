package nodegroup

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

// Image is the AMI a node group's nodes run and the Kubernetes minor the
// group reports. Family and Arch are an EKS-AMI group's amiType; a
// custom-AMI group has neither.
type Image struct {
	AMI          catalog.AMI
	Version      kubeversion.Minor
	Family, Arch string
}

// ImageError is CreateNodegroup's refusal of a group's image, with the
// request field it is about (amiType, version, releaseVersion,
// launchTemplate, launchTemplate.imageId), for a scenario's validation to
// name. It prints as the EKS API error it wraps.
type ImageError struct {
	Field string
	Err   error
}

func (e *ImageError) Error() string { return e.Err.Error() }
func (e *ImageError) Unwrap() error { return e.Err }

func imageError(field, format string, args ...any) error {
	return &ImageError{Field: field, Err: NewError(InvalidParameterException, OpCreateNodegroup, format, args...)}
}

// ResolveImage is CreateNodegroup's choice of a group's AMI and version,
// with no Service: the twin creates a group with it, and a scenario's
// validation refuses before a rehearsal what it refuses. it is the group's
// (first) instance type, cp the control plane's minor, extra the
// scenario's own AMIs (looked up before the catalog), now the clock
// (releases dated after it do not exist yet). existing is a group that is
// already there at the start: it may trail the control plane; a group
// created now must be at the control plane's minor ("You can only create a
// node group for your cluster that is equal to the current Kubernetes
// version for the cluster", CreateNodegroup API reference). No group is
// ever ahead of the control plane (semantics.md §B).
//
// A custom-AMI group runs its launch template's image, and its version is
// that image's Kubernetes minor. "The following fields can't be set in the
// API if you specify an AMI ID: amiType, releaseVersion, version" (§B
// Custom launch template / AMI): version and releaseVersion are refused;
// amiType is ignored instead, because the terraform-aws-eks module of the
// workshop seed (§6.1, group custom-Y) takes ami_type next to ami_id to
// choose the user-data format and does not send it to EKS for custom-AMI
// groups.
func ResolveImage(spec Spec, it catalog.InstanceType, cp kubeversion.Minor, extra []catalog.AMI, now time.Time, existing bool) (Image, error) {
	lt := spec.LaunchTemplate
	if lt != nil && lt.ID == "" && lt.Name == "" {
		return Image{}, imageError("launchTemplate", "launchTemplate: set its id or name")
	}
	if lt != nil && lt.ImageID != "" {
		if spec.Version != "" || spec.ReleaseVersion != "" {
			return Image{}, imageError("version", "version and releaseVersion can't be specified when the launch template specifies an AMI ID (%s)", lt.ImageID)
		}
		a, err := CustomAMI(extra, lt.ImageID, OpCreateNodegroup)
		if err != nil {
			return Image{}, &ImageError{Field: "launchTemplate.imageId", Err: err}
		}
		if a.KubeArch() != it.Arch {
			return Image{}, imageError("launchTemplate.imageId", "AMI %s is %s but instance type %s is %s", a.ID, a.Arch, it.Name, it.Arch)
		}
		v, err := kubeversion.Parse(a.KubernetesMinor)
		if err != nil {
			return Image{}, imageError("launchTemplate.imageId", "AMI %s: %v", a.ID, err)
		}
		return Image{AMI: a, Version: v}, nil
	}
	if spec.AMIType == AMITypeCustom {
		// EKS's amiType CUSTOM is a launch template's AMI: without one the
		// group has no image to launch.
		return Image{}, imageError("amiType", "amiType %s needs a launch template that specifies an AMI ID (launchTemplate.imageId)", spec.AMIType)
	}
	family, arch, ok := amiFamilyArch(spec.AMIType, it.Arch)
	if !ok {
		return Image{}, imageError("amiType", "amiType %s is not modelled (use AL2023_*, AL2_* or BOTTLEROCKET_*)", spec.AMIType)
	}
	v := cp
	if spec.Version != "" {
		var err error
		if v, err = kubeversion.Parse(spec.Version); err != nil {
			return Image{}, imageError("version", "version: %v", err)
		}
	}
	if cp.Less(v) {
		return Image{}, imageError("version", "version %s is greater than the cluster's Kubernetes version %s", v, cp)
	}
	if !existing && v != cp {
		return Image{}, imageError("version", "version %s: a node group can only be created at the cluster's Kubernetes version %s", v, cp)
	}
	a, err := EKSAMI(extra, family, arch, v, spec.ReleaseVersion, now, OpCreateNodegroup)
	if err != nil {
		field := "amiType"
		if spec.ReleaseVersion != "" {
			field = "releaseVersion"
		}
		return Image{}, &ImageError{Field: field, Err: err}
	}
	if a.KubeArch() != it.Arch {
		return Image{}, imageError("amiType", "amiType %s does not run on instance type %s (%s)", spec.AMIType, it.Name, it.Arch)
	}
	return Image{AMI: a, Version: v, Family: family, Arch: arch}, nil
}

// AMITypeCustom is the amiType of a group whose launch template names its
// AMI.
const AMITypeCustom = "CUSTOM"

// amiFamilyArch maps an EKS amiType (AL2023_x86_64_STANDARD, AL2_ARM_64,
// BOTTLEROCKET_x86_64, ...) to the catalog's AMI family and architecture.
// An empty amiType is AL2023 for the instance type's architecture, as for
// new node groups since Kubernetes 1.30 (and as the rehearsal's static
// groups assume, internal/rehearse/static.go amiType).
func amiFamilyArch(amiType, instanceArch string) (family, arch string, ok bool) {
	arch = catalog.ArchX8664
	if instanceArch == "arm64" {
		arch = catalog.ArchARM64
	}
	switch {
	case amiType == "":
		return catalog.FamilyAL2023, arch, true
	case strings.HasPrefix(amiType, "AL2023_"):
		family = catalog.FamilyAL2023
	case strings.HasPrefix(amiType, "AL2_"):
		family = catalog.FamilyAL2
	case strings.HasPrefix(amiType, "BOTTLEROCKET_"):
		family = catalog.FamilyBottlerocket
	default:
		return "", "", false
	}
	if strings.Contains(amiType, "ARM_64") {
		return family, catalog.ArchARM64, true
	}
	return family, catalog.ArchX8664, true
}

// CustomAMI looks up a launch template's image: the scenario's own AMIs
// (extra) first, then the catalog.
func CustomAMI(extra []catalog.AMI, id, op string) (catalog.AMI, error) {
	for _, a := range extra {
		if a.ID == id {
			return a, nil
		}
	}
	if a, ok := catalog.LookupAMI(id); ok {
		return a, nil
	}
	return catalog.AMI{}, NewError(InvalidParameterException, op, "the launch template's image %s does not exist", id)
}

// EKSAMI is the EKS-optimized AMI of a family, architecture and minor:
// the release asked for, or else the newest one released by now ("All node
// groups are created with the latest AMI release version for the respective
// minor Kubernetes version", CreateNodegroup API reference). Releases dated
// after now do not exist yet.
func EKSAMI(extra []catalog.AMI, family, arch string, v kubeversion.Minor, release string, now time.Time, op string) (catalog.AMI, error) {
	var latest catalog.AMI
	found := false
	for _, a := range append(slices.Clone(extra), catalog.AMIs()...) {
		if a.Family != family || a.Arch != arch || a.KubernetesMinor != v.String() || a.ReleaseDate.After(now) {
			continue
		}
		if release != "" {
			if a.Release == release || ReleaseVersion(a) == release {
				return a, nil
			}
			continue
		}
		if !found || a.ReleaseDate.After(latest.ReleaseDate) {
			latest, found = a, true
		}
	}
	if release != "" {
		// EKS's own wording (eksctl-io/eksctl#7976).
		return catalog.AMI{}, NewError(InvalidParameterException, op, "Requested release version %s is not valid for kubernetes version %s.", release, v)
	}
	if !found {
		return catalog.AMI{}, NewError(InvalidParameterException, op, "no %s %s AMI for Kubernetes %s has been released by %s", family, arch, v, now.Format("2006-01-02"))
	}
	return latest, nil
}

// ReleaseVersion is an AMI's EKS release version: "1.30.14-20260220" for
// Amazon Linux (the kubelet's patch version and the release date, as in
// "Requested release version 1.31.3-20250103", eksctl-io/eksctl#7976),
// "1.20.0" for Bottlerocket. A custom AMI has none.
func ReleaseVersion(a catalog.AMI) string {
	if a.Family == "" || a.Release == "" {
		return ""
	}
	rel := strings.TrimPrefix(a.Release, "v")
	if a.Family == catalog.FamilyBottlerocket {
		return rel
	}
	patch, _, _ := strings.Cut(strings.TrimPrefix(a.KubeletVersion, "v"), "-")
	return fmt.Sprintf("%s-%s", patch, rel)
}
