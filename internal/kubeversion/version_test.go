package kubeversion

import "testing"

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"1.30", "1.30", false},
		{"v1.31", "1.31", false},
		{"1.31.4", "1.31", false},
		{"v1.30.14-eks-f69f56f", "1.30", false},
		{"1.x", "", true},
		{"2.1", "", true},
		{"", "", true},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("Parse(%q) err = %v, wantErr %v", c.in, err, c.wantErr)
			continue
		}
		if err == nil && got.String() != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestKubeletSkew(t *testing.T) {
	// semantics.md §D.4: not newer than the apiserver; up to 3 minors older,
	// 2 for kubelets older than 1.25.
	cases := []struct {
		apiserver, kubelet string
		ok                 bool
	}{
		{"1.31", "1.31", true},
		{"1.31", "1.28", true},
		{"1.31", "1.27", false},
		{"1.30", "1.31", false},
		{"1.26", "1.24", true},
		{"1.27", "1.24", false}, // 1.24 kubelets may trail by 2 only
		{"1.28", "1.25", true},
	}
	for _, c := range cases {
		if got := KubeletSkewOK(MustParse(c.apiserver), MustParse(c.kubelet)); got != c.ok {
			t.Errorf("KubeletSkewOK(%s, %s) = %v, want %v", c.apiserver, c.kubelet, got, c.ok)
		}
	}
}

// TestKubeProxySkew: semantics.md §D.4 — kube-proxy not newer than
// kube-apiserver, up to three minors older than it and up to three minors
// either side of its kubelet; two below 1.25.
func TestKubeProxySkew(t *testing.T) {
	for _, c := range []struct {
		apiserver, kubelet, proxy string
		ok                        bool
	}{
		{"1.31", "1.30", "1.31", true},  // kube-proxy updated before the nodes
		{"1.31", "1.28", "1.31", true},  // three minors newer than the kubelet
		{"1.31", "1.27", "1.31", false}, // four
		{"1.30", "1.30", "1.31", false}, // newer than the API server
		{"1.33", "1.30", "1.30", true},  // three minors older than the API server
		{"1.34", "1.31", "1.30", false}, // four older
		{"1.24", "1.24", "1.21", false}, // below 1.25 the limit is two
		{"1.24", "1.24", "1.22", true},
	} {
		why := KubeProxySkew(MustParse(c.apiserver), MustParse(c.kubelet), MustParse(c.proxy))
		if (why == "") != c.ok {
			t.Errorf("apiserver %s kubelet %s kube-proxy %s: %q, want ok=%v", c.apiserver, c.kubelet, c.proxy, why, c.ok)
		}
	}
}
