package insights

import (
	"reflect"
	"testing"
)

func TestNewVolumeFoldsUsers(t *testing.T) {
	sc := "gp3"
	got := NewVolume("orders", "data", "us-west-2a", &sc, []VolumeUser{
		{Pod: "orders/mysql-1", Node: "ip-b", Workload: "StatefulSet orders/mysql"},
		{Pod: "orders/mysql-0", Node: "ip-a", Workload: "StatefulSet orders/mysql"},
		{Pod: "orders/debug"},
	})
	want := Volume{Namespace: "orders", Claim: "data", StorageClass: "gp3", Zone: "us-west-2a",
		Pods: []string{"orders/debug", "orders/mysql-0", "orders/mysql-1"}, Nodes: []string{"ip-a", "ip-b"},
		Workloads: []string{"StatefulSet orders/mysql"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NewVolume = %+v, want %+v", got, want)
	}
}

func TestSortVolumesByNamespaceThenClaim(t *testing.T) {
	vs := []Volume{{Namespace: "b", Claim: "a"}, {Namespace: "a", Claim: "z"}, {Namespace: "a", Claim: "c"}}
	SortVolumes(vs)
	var got []string
	for _, v := range vs {
		got = append(got, v.Namespace+"/"+v.Claim)
	}
	if want := []string{"a/c", "a/z", "b/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SortVolumes order = %v, want %v", got, want)
	}
}
