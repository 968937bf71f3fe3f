package render

import "testing"

func BenchmarkKustomizeOverlay(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Kustomize("testdata/kustomize/hello/overlays/staging"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHelmChart(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Helm("testdata/helm/legacy", HelmOptions{KubeVersion: "1.32"}); err != nil {
			b.Fatal(err)
		}
	}
}
