package insights

import (
	"strings"
	"testing"
)

const statefulSetNoProbe = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: rabbitmq
  namespace: orders
spec:
  serviceName: rabbitmq
  replicas: 3
  selector:
    matchLabels: {app: rabbitmq}
  template:
    metadata:
      labels: {app: rabbitmq}
    spec:
      containers:
        - name: rabbitmq
          image: public.ecr.aws/docker/library/rabbitmq:3-management
          ports: [{containerPort: 5672}]
        - name: exporter
          image: kbudde/rabbitmq-exporter:1.0
          readinessProbe:
            tcpSocket: {port: 9419}
        - name: log-shipper
          image: fluent/fluent-bit:3.0
`

const barePod = `apiVersion: v1
kind: Pod
metadata:
  name: debug
  namespace: shop
spec:
  containers:
    - name: shell
      image: public.ecr.aws/docker/library/busybox:1.36
      command: [sleep, infinity]
`

const daemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-exporter
  namespace: monitoring
spec:
  selector:
    matchLabels: {app: node-exporter}
  template:
    metadata:
      labels: {app: node-exporter}
    spec:
      containers:
        - name: node-exporter
          image: quay.io/prometheus/node-exporter:v1.8.2
`

func TestSingleReplica(t *testing.T) {
	runCases(t, "single-replica", []checkCase{
		{name: "one replica", manifests: deployment("shop", "web", 1, ""),
			want: []want{{Warning, "Deployment shop/web", "spec.replicas", []string{"runs 1 replica: it is unavailable from each eviction", "at least 2 replicas"}}}},
		{name: "replicas omitted is 1", manifests: `apiVersion: apps/v1
kind: Deployment
metadata: {name: ui, namespace: ui}
spec:
  selector: {matchLabels: {app: ui}}
  template:
    metadata: {labels: {app: ui}}
    spec:
      containers: [{name: ui, image: retail-store-sample-ui:0.4.0}]
`, want: []want{{Warning, "Deployment ui/ui", "spec.replicas", []string{"runs 1 replica"}}}},
		{name: "bare pod", manifests: barePod,
			want: []want{{Warning, "Pod shop/debug", "", []string{"has no controller", "nothing recreates it"}}}},
		{name: "HPA keeps 2", manifests: join(deployment("shop", "web", 1, ""), hpaWeb)},
		{name: "three replicas, DaemonSet, scaled to zero", manifests: join(deployment("shop", "web", 3, ""), daemonSet, deployment("shop", "batch", 0, ""))},
	})
}

func TestNoReadinessProbe(t *testing.T) {
	runCases(t, "no-readiness-probe", []checkCase{
		{name: "no container has a probe", manifests: strings.Replace(statefulSetNoProbe, "          readinessProbe:\n            tcpSocket: {port: 9419}\n", "", 1),
			want: []want{{Warning, "StatefulSet orders/rabbitmq", "spec.template.spec.containers[0]", []string{"none of its containers (rabbitmq, exporter, log-shipper) has a readinessProbe"}}}},
		{name: "one probed container gates the pod", manifests: statefulSetNoProbe},
		{name: "one container", manifests: `apiVersion: apps/v1
kind: Deployment
metadata: {name: ui, namespace: ui}
spec:
  replicas: 2
  selector: {matchLabels: {app: ui}}
  template:
    metadata: {labels: {app: ui}}
    spec:
      containers:
        - name: ui
          image: retail-store-sample-ui:0.4.0
          livenessProbe:
            httpGet: {path: /actuator/health/liveness, port: 8080}
`, want: []want{{Warning, "Deployment ui/ui", "spec.template.spec.containers[0]", []string{"Deployment ui/ui: its container ui has no readinessProbe, so a replacement pod is Ready"}}}},
		{name: "probed", manifests: deployment("shop", "web", 2, "")},
		{name: "DaemonSets and bare pods are not checked", manifests: join(daemonSet, barePod)},
	})
}

func TestNoSpread(t *testing.T) {
	runCases(t, "no-spread", []checkCase{
		{name: "replicas without spread", manifests: statefulSetNoProbe,
			want: []want{{Warning, "StatefulSet orders/rabbitmq", "spec.template.spec", []string{"runs 3 replicas with no topologySpreadConstraints or podAntiAffinity", "matchLabels {app: rabbitmq}"}}}},
		{name: "zone spread", manifests: deployment("shop", "web", 3, "")},
		{name: "preferred anti-affinity", manifests: `apiVersion: apps/v1
kind: Deployment
metadata: {name: carts, namespace: carts}
spec:
  replicas: 2
  selector: {matchLabels: {app: carts}}
  template:
    metadata: {labels: {app: carts}}
    spec:
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector: {matchLabels: {app: carts}}
      containers: [{name: carts, image: retail-store-sample-cart:0.4.0}]
`},
		{name: "one replica has nothing to spread", manifests: barePod},
	})
}

func TestVolumeBindingMode(t *testing.T) {
	sc := func(name, provisioner, mode string) string {
		s := "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: " + name + "\nprovisioner: " + provisioner + "\nparameters:\n  type: gp3\n"
		if mode != "" {
			s += "volumeBindingMode: " + mode + "\n"
		}
		return s
	}
	runCases(t, "volume-binding-mode", []checkCase{
		{name: "EBS CSI Immediate", manifests: sc("gp3", "ebs.csi.aws.com", "Immediate"),
			want: []want{{Warning, "StorageClass gp3", "volumeBindingMode", []string{"(ebs.csi.aws.com) binds volumes Immediate", "WaitForFirstConsumer"}}}},
		{name: "in-tree gp2 default mode", manifests: sc("gp2", "kubernetes.io/aws-ebs", ""),
			want: []want{{Warning, "StorageClass gp2", "provisioner", []string{"binds volumes Immediate (the default)"}}}},
		{name: "WaitForFirstConsumer", manifests: sc("gp3", "ebs.csi.aws.com", "WaitForFirstConsumer")},
		{name: "EFS is not zonal", manifests: sc("efs", "efs.csi.aws.com", "Immediate")},
	})
}
