package eks

import (
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/rules/addon"
)

// EKS add-ons: the rules are internal/rules/addon's (semantics.md §E); the
// names below keep the twin's API.

// AddonVersion is a parsed EKS add-on version.
type AddonVersion = addon.Version

// ParseAddonVersion reads "v1.31.14-eksbuild.20".
func ParseAddonVersion(s string) (AddonVersion, error) { return addon.ParseVersion(s) }

// AddonImage returns an add-on container's image for a version, and
// whether the image is the add-on's own.
func AddonImage(name, image string, v AddonVersion) (string, bool) {
	return addon.Image(name, image, v)
}

// CheckAddonUpdate is UpdateAddon's validation (addon.CheckUpdate).
func CheckAddonUpdate(name, from, to string, cluster kubeversion.Minor, kubelets map[string]string) error {
	return addon.CheckUpdate(name, from, to, cluster, kubelets)
}
