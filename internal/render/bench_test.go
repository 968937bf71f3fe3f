package render

import "testing"

// The Benchmark*InProcess twins measure the render alone; the others the
// render in its own process (sandboxed), as ladder runs it: the
// difference is the cost of the process.

func BenchmarkKustomizeOverlay(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Kustomize("testdata/kustomize/hello/overlays/staging"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKustomizeOverlayInProcess(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildKustomization("testdata/kustomize/hello/overlays/staging"); err != nil {
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

func BenchmarkHelmChartInProcess(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderHelm("testdata/helm/legacy", HelmOptions{KubeVersion: "1.32"}); err != nil {
			b.Fatal(err)
		}
	}
}
