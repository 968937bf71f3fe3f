package kubelist

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// pagedNodes serves nodes a..e in pages of the request's limit, page N
// continued by the token "page-N", and answers the token fail with err.
func pagedNodes(fail string, err error, requests *[]string) *fake.Clientset {
	names := []string{"a", "b", "c", "d", "e"}
	first := map[string]int{"": 0, "page-2": 2, "page-4": 4} // token → index of the page's first node
	cs := fake.NewClientset()
	cs.PrependReactor("list", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).GetListOptions()
		*requests = append(*requests, fmt.Sprintf("limit=%d continue=%q", opts.Limit, opts.Continue))
		if opts.Continue == fail {
			return true, nil, err
		}
		l := &corev1.NodeList{}
		for i := first[opts.Continue]; i < len(names); i++ {
			if opts.Limit > 0 && int64(len(l.Items)) == opts.Limit {
				l.Continue = fmt.Sprintf("page-%d", i)
				break
			}
			l.Items = append(l.Items, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: names[i]}})
		}
		return true, l, nil
	})
	return cs
}

func TestAll(t *testing.T) {
	expired := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result.")
	forbidden := apierrors.NewForbidden(corev1.Resource("nodes"), "", fmt.Errorf("no"))
	all := []string{"a", "b", "c", "d", "e"}
	for _, tc := range []struct {
		name  string
		chunk int64
		fail  string // the continue token answered with err
		err   error
		want  []string
		sent  []string
		error bool
	}{
		{name: "pages", chunk: 2, want: all,
			sent: []string{`limit=2 continue=""`, `limit=2 continue="page-2"`, `limit=2 continue="page-4"`}},
		{name: "one page", chunk: 500, want: all, sent: []string{`limit=500 continue=""`}},
		{name: "chunk 0 is one request", chunk: 0, want: all, sent: []string{`limit=0 continue=""`}},
		{name: "an expired token lists everything in one request", chunk: 2, fail: "page-2", err: expired, want: all,
			sent: []string{`limit=2 continue=""`, `limit=2 continue="page-2"`, `limit=0 continue=""`}},
		{name: "another error mid-list is returned", chunk: 2, fail: "page-4", err: forbidden, error: true,
			sent: []string{`limit=2 continue=""`, `limit=2 continue="page-2"`, `limit=2 continue="page-4"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fail := tc.fail
			if fail == "" {
				fail = "never"
			}
			var sent []string
			cs := pagedNodes(fail, tc.err, &sent)
			nodes, err := All[corev1.Node](context.Background(), tc.chunk, metav1.ListOptions{}, Page(cs.CoreV1().Nodes().List))
			if tc.error {
				if !apierrors.IsForbidden(err) {
					t.Errorf("err = %v, want the API server's Forbidden as it came", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range nodes {
				got = append(got, n.Name)
			}
			if !tc.error && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("listed %v, want %v (each once)", got, tc.want)
			}
			if !reflect.DeepEqual(sent, tc.sent) {
				t.Errorf("requests %v, want %v", sent, tc.sent)
			}
		})
	}
}
