package render

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/konfig"
)

// DirKind is the kind of directory a render tool builds.
type DirKind int

const (
	// Kustomization is a kustomize root: a directory with a kustomization file.
	Kustomization DirKind = iota + 1
	// Chart is a Helm chart: a directory with Chart.yaml.
	Chart
)

func (k DirKind) String() string {
	switch k {
	case Kustomization:
		return "kustomization"
	case Chart:
		return "chart"
	}
	return "plain"
}

// Kind says what builds dir. A Helm chart wins over a kustomization when a
// directory has both, since Helm reads the whole directory as its chart.
func Kind(dir string) (DirKind, bool) {
	if isRegular(filepath.Join(dir, "Chart.yaml")) {
		return Chart, true
	}
	if kustomizationFile(dir) != "" {
		return Kustomization, true
	}
	return 0, false
}

// kustomizationFile is the kustomization file in dir, tried in kustomize's
// own order (konfig.RecognizedKustomizationFileNames), or "".
func kustomizationFile(dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if p := filepath.Join(dir, name); isRegular(p) {
			return p
		}
	}
	return ""
}

func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
