// Package kubeversion parses Kubernetes versions and holds the version-skew
// arithmetic Ladder's planner and twins share (semantics.md §D.4, §E).
package kubeversion

import (
	"fmt"
	"regexp"
	"strconv"
)

// Minor is a Kubernetes minor version such as 1.31.
type Minor struct {
	Major, Minor int
}

var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$`)

// Parse reads "1.31", "v1.31", "1.31.4" or a kubelet version such as
// "v1.31.14-eks-ecaa3a6" and returns its minor version.
func Parse(s string) (Minor, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Minor{}, fmt.Errorf("%q is not a Kubernetes version (want e.g. 1.31 or v1.31.14-eks-ecaa3a6)", s)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major != 1 {
		return Minor{}, fmt.Errorf("%q is not a Kubernetes 1.x version", s)
	}
	return Minor{Major: major, Minor: minor}, nil
}

// MustParse is Parse for constants; it panics on a malformed version.
func MustParse(s string) Minor {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String prints the minor as "1.31".
func (v Minor) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Next is the following minor version.
func (v Minor) Next() Minor { return Minor{Major: v.Major, Minor: v.Minor + 1} }

// Less reports whether v is older than o.
func (v Minor) Less(o Minor) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	return v.Minor < o.Minor
}

// Sub returns how many minors v is ahead of o (negative when behind).
func (v Minor) Sub(o Minor) int { return (v.Major-o.Major)*1000 + v.Minor - o.Minor }

// IsZero reports whether v was never set.
func (v Minor) IsZero() bool { return v == Minor{} }

// MaxKubeletSkew is how many minors a kubelet may trail the API server:
// three, or two for kubelets older than 1.25 (semantics.md §D.4).
func MaxKubeletSkew(kubelet Minor) int {
	if kubelet.Less(Minor{1, 25}) {
		return 2
	}
	return 3
}

// KubeletSkewOK reports whether a kubelet may run against an API server:
// never newer, and at most MaxKubeletSkew minors older (semantics.md §D.4).
func KubeletSkewOK(apiserver, kubelet Minor) bool {
	d := apiserver.Sub(kubelet)
	return d >= 0 && d <= MaxKubeletSkew(kubelet)
}

// KubeProxySkew reports why a kube-proxy may not run against an API server
// and next to a kubelet, or "" when it may (semantics.md §D.4): not newer
// than kube-apiserver and at most three minors older (two below 1.25), and
// "up to three minor versions older or newer than the kubelet instance it
// runs alongside" (two below 1.25).
func KubeProxySkew(apiserver, kubelet, proxy Minor) string {
	limit := MaxKubeletSkew(proxy)
	switch d := apiserver.Sub(proxy); {
	case d < 0:
		return fmt.Sprintf("kube-proxy %s is newer than the API server %s", proxy, apiserver)
	case d > limit:
		return fmt.Sprintf("kube-proxy %s is %d minors older than the API server %s (at most %d)", proxy, d, apiserver, limit)
	}
	d := proxy.Sub(kubelet)
	if d < 0 {
		d = -d
	}
	if d > limit {
		return fmt.Sprintf("kube-proxy %s is %d minors away from kubelet %s (at most %d)", proxy, d, kubelet, limit)
	}
	return ""
}
