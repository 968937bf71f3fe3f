package drain

import (
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const nodeName = "node-1"

type podOpt func(*corev1.Pod)

func mkPod(namespace, name string, opts ...podOpt) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: nodeName},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func owner(apiVersion, kind, name string) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
			APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: new(true),
		})
	}
}

func daemonSet(name string) podOpt  { return owner("apps/v1", "DaemonSet", name) }
func replicaSet(name string) podOpt { return owner("apps/v1", "ReplicaSet", name) }

// nonControllerOwner adds an owner that is not the controller.
func nonControllerOwner(kind, name string) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
			APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID("uid-" + name),
		})
	}
}

func mirror(p *corev1.Pod) {
	p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
}

func emptyDir(p *corev1.Pod) {
	p.Spec.Volumes = append(p.Spec.Volumes,
		corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
		corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
}

func hostPath(p *corev1.Pod) {
	p.Spec.Volumes = append(p.Spec.Volumes,
		corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}})
}

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func deletingSince(now time.Time, d time.Duration) podOpt {
	return func(p *corev1.Pod) {
		t := metav1.NewTime(now.Add(-d))
		p.DeletionTimestamp = &t
		p.Finalizers = []string{"example.com/hold"}
	}
}

// nodePods is the node fixture: one pod per filter path. Deleting pods are
// 10 s and 100 s old against a 30 s threshold, far from the boundary, so
// upstream's time.Now and our now agree.
func nodePods(now time.Time) []corev1.Pod {
	ps := []corev1.Pod{
		mkPod("kube-system", "ds-present-pod", daemonSet("ds-present")),
		mkPod("kube-system", "ds-missing-pod", daemonSet("ds-missing")),
		mkPod("kube-system", "ds-missing-emptydir", daemonSet("ds-missing"), emptyDir),
		mkPod("kube-system", "ds-succeeded", daemonSet("ds-missing"), phase(corev1.PodSucceeded)),
		mkPod("kube-system", "ds-failed-present", daemonSet("ds-present"), phase(corev1.PodFailed)),
		mkPod("kube-system", "ds-extensions-apiversion", owner("extensions/v1beta1", "DaemonSet", "ds-present")),
		mkPod("kube-system", "kube-proxy-node-1", owner("v1", "Node", nodeName), mirror),
		mkPod("kube-system", "mirror-emptydir-unmanaged", mirror, emptyDir),
		mkPod("default", "ds-present-other-namespace", daemonSet("ds-present")),
		mkPod("default", "ds-non-controller-owner", nonControllerOwner("DaemonSet", "ds-present")),
		mkPod("default", "emptydir-rs", replicaSet("web-rs"), emptyDir),
		mkPod("default", "emptydir-unmanaged", emptyDir),
		mkPod("default", "emptydir-failed-unmanaged", emptyDir, phase(corev1.PodFailed)),
		mkPod("default", "hostpath-rs", replicaSet("web-rs"), hostPath),
		mkPod("default", "pending-unmanaged", phase(corev1.PodPending)),
		mkPod("default", "rs-pod", replicaSet("web-rs")),
		mkPod("default", "statefulset-pod", owner("apps/v1", "StatefulSet", "db")),
		mkPod("default", "succeeded-unmanaged", phase(corev1.PodSucceeded)),
		mkPod("default", "failed-unmanaged", phase(corev1.PodFailed)),
		mkPod("default", "terminating-10s", replicaSet("web-rs"), deletingSince(now, 10*time.Second)),
		mkPod("default", "terminating-100s", replicaSet("web-rs"), deletingSince(now, 100*time.Second)),
		mkPod("default", "terminating-100s-unmanaged", deletingSince(now, 100*time.Second)),
		mkPod("default", "terminating-100s-ds-present", daemonSet("ds-present"), deletingSince(now, 100*time.Second)),
		mkPod("default", "unmanaged-pod"),
	}
	// The apiserver (and the fake clientset) list pods sorted by namespace/name.
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Namespace != ps[j].Namespace {
			return ps[i].Namespace < ps[j].Namespace
		}
		return ps[i].Name < ps[j].Name
	})
	return ps
}

func existingDaemonSets() []*appsv1.DaemonSet {
	return []*appsv1.DaemonSet{{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ds-present"}}}
}

func dsLookup(dss []*appsv1.DaemonSet) DaemonSetLookup {
	return func(namespace, name string) bool {
		for _, ds := range dss {
			if ds.Namespace == namespace && ds.Name == name {
				return true
			}
		}
		return false
	}
}
