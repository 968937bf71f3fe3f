package lab

import (
	"fmt"
	"strconv"

	"github.com/ladder-eks/ladder/internal/awsserve"
)

// Component is one process of the lab, named as its binary.
type Component string

// The lab's processes, in start order.
const (
	Etcd              Component = "etcd"
	APIServer         Component = "kube-apiserver"
	ControllerManager Component = "kube-controller-manager"
	Scheduler         Component = "kube-scheduler"
	Kwok              Component = "kwok"
)

// Components are the lab's processes in start order; they stop in the
// reverse order.
var Components = []Component{Etcd, APIServer, ControllerManager, Scheduler, Kwok}

// AWSEndpoints is the lab's AWS side: `ladder lab aws-serve`, a child
// ladder serving EKS, Auto Scaling, EC2 and SSM on one port. It is not
// built with the others (the binary is ladder itself) and runs only in a
// lab started with a scenario (Options.AWS), after the rest is up.
const AWSEndpoints Component = "aws-serve"

// waves group the components that start together: each wave waits until
// the one before it is healthy. kube-controller-manager, kube-scheduler and
// kwok only need the apiserver, so they start at once.
var waves = [][]Component{{Etcd}, {APIServer}, {ControllerManager, Scheduler, Kwok}}

// KwokNodeAnnotation is the annotation (with value "fake") that makes the
// lab's kwok manage a node: it sets the node Ready, renews its lease and
// runs its pods. Nodes without it are left alone.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// Ports are every port the lab listens on, all on 127.0.0.1.
type Ports struct {
	EtcdClient        int `json:"etcdClient"`
	EtcdPeer          int `json:"etcdPeer"`
	EtcdMetrics       int `json:"etcdMetrics"`
	APIServer         int `json:"apiServer"`
	ControllerManager int `json:"controllerManager"`
	Scheduler         int `json:"scheduler"`
	Kwok              int `json:"kwok"`
	// AWS is the AWS endpoints' port; 0 in a lab without them.
	AWS int `json:"aws,omitempty"`
	// KarpenterMetrics and KarpenterHealth are Karpenter's ports; 0 in a
	// lab without it.
	KarpenterMetrics int `json:"karpenterMetrics,omitempty"`
	KarpenterHealth  int `json:"karpenterHealth,omitempty"`
}

// of lists the ports a component listens on, by name.
func (p Ports) of(c Component) map[string]int {
	switch c {
	case Etcd:
		return map[string]int{"client": p.EtcdClient, "peer": p.EtcdPeer, "metrics": p.EtcdMetrics}
	case APIServer:
		return map[string]int{"https": p.APIServer}
	case ControllerManager:
		return map[string]int{"https": p.ControllerManager}
	case Scheduler:
		return map[string]int{"https": p.Scheduler}
	case Kwok:
		return map[string]int{"http": p.Kwok}
	case AWSEndpoints:
		return map[string]int{"http": p.AWS}
	case Karpenter:
		return map[string]int{"metrics": p.KarpenterMetrics, "health": p.KarpenterHealth}
	}
	return nil
}

func loopback(scheme string, port int) string {
	return scheme + "://127.0.0.1:" + strconv.Itoa(port)
}

// server is the apiserver's URL.
func (p Ports) server() string { return loopback("https", p.APIServer) }

// awsEndpoint is the URL of every AWS service the lab serves.
func (p Ports) awsEndpoint() string { return loopback("http", p.AWS) }

// args are a component's command line. Every listener binds 127.0.0.1;
// the flags follow the measured recipe in shared/reference/lab.md.
func args(c Component, l layout, p Ports, b *Binaries) []string {
	switch c {
	case Etcd:
		peer := loopback("http", p.EtcdPeer)
		client := loopback("http", p.EtcdClient)
		return []string{
			"--name=lab",
			"--data-dir=" + l.etcdData(),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=lab=" + peer,
			"--listen-metrics-urls=" + loopback("http", p.EtcdMetrics),
			// A lab's data lives as long as the lab: trade durability for
			// speed, as envtest does.
			"--unsafe-no-fsync",
		}
	case APIServer:
		return []string{
			"--etcd-servers=" + loopback("http", p.EtcdClient),
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			// With a loopback advertise address the default endpoint
			// reconciler makes the apiserver exit ("cannot use public IP
			// 127.0.0.1 with endpoint reconciler").
			"--endpoint-reconciler-type=none",
			"--secure-port=" + strconv.Itoa(p.APIServer),
			"--cert-dir=" + l.pki(),
			"--tls-cert-file=" + l.serveCert(),
			"--tls-private-key-file=" + l.serveKey(),
			"--client-ca-file=" + l.caCert(),
			// The aggregation-layer headers, trusted only from a client
			// certificate of the lab's CA named front-proxy-client: without
			// them kube-controller-manager and kube-scheduler log an error
			// about a missing requestheader CA every few seconds.
			"--requestheader-client-ca-file=" + l.caCert(),
			"--requestheader-allowed-names=front-proxy-client",
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--token-auth-file=" + l.tokens(),
			"--authorization-mode=Node,RBAC",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + l.saPub(),
			"--service-account-signing-key-file=" + l.saKey(),
			"--service-cluster-ip-range=" + serviceCIDR,
			"--allow-privileged=true",
		}
	case ControllerManager:
		return append(l.controlPlaneFlags(c, p.ControllerManager),
			"--controllers=*",
			// Each controller acts as its own service account, so RBAC
			// applies to the controllers as it does on a real cluster.
			"--use-service-account-credentials=true",
			// Starting its controllers, kube-controller-manager requests a
			// token per controller; at the default 20 QPS that alone takes
			// seconds of every lab start.
			"--kube-api-qps=100",
			"--kube-api-burst=200",
			"--service-account-private-key-file="+l.saKey(),
			"--root-ca-file="+l.caCert(),
			"--cluster-signing-cert-file="+l.caCert(),
			"--cluster-signing-key-file="+l.caKey(),
		)
	case Scheduler:
		return l.controlPlaneFlags(c, p.Scheduler)
	case Kwok:
		return []string{
			"--kubeconfig=" + l.componentKubeconfig(c),
			"--config=" + b.Stages(),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
			"--manage-nodes-with-label-selector=",
			"--cidr=10.0.0.1/16",
			"--node-ip=10.0.0.1",
			"--node-lease-duration-seconds=40",
			"--server-address=127.0.0.1:" + strconv.Itoa(p.Kwok),
		}
	}
	panic(fmt.Sprintf("lab: unknown component %q", c))
}

// awsServeArgs are the AWS endpoints' command line: ladder's own
// `lab aws-serve`, told the lab it serves.
func awsServeArgs(l layout, p Ports, o AWSOptions) []string {
	return []string{"lab", string(AWSEndpoints),
		"--lab-dir=" + l.dir,
		"--scenario=" + o.Scenario,
		"--addr=127.0.0.1:" + strconv.Itoa(p.AWS),
		"--time-scale=" + strconv.FormatFloat(o.TimeScale, 'g', -1, 64),
	}
}

// probe is how the lab asks a component whether it is healthy.
type probe struct {
	URL string `json:"url"`
	// TLS: the apiserver is verified against the lab's CA with the admin
	// token; kube-controller-manager and kube-scheduler serve a self-signed
	// certificate of their own, and their /healthz needs no credentials.
	TLS    bool `json:"tls,omitempty"`
	Verify bool `json:"verify,omitempty"`
	Bearer bool `json:"bearer,omitempty"`
}

// controlPlaneFlags are the flags kube-controller-manager and kube-scheduler
// share (the generic component config and delegated authn/authz options):
// one kubeconfig for the API server and for checking requests to their
// secure port on loopback, and no leader election for a single replica.
func (l layout) controlPlaneFlags(c Component, port int) []string {
	kc := l.componentKubeconfig(c)
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--leader-elect=false",
	}
}

// health is a component's health endpoint.
func health(c Component, p Ports) probe {
	switch c {
	case Etcd:
		return probe{URL: loopback("http", p.EtcdClient) + "/health"}
	case APIServer:
		return probe{URL: p.server() + "/readyz", TLS: true, Verify: true, Bearer: true}
	case ControllerManager:
		return probe{URL: loopback("https", p.ControllerManager) + "/healthz", TLS: true}
	case Scheduler:
		return probe{URL: loopback("https", p.Scheduler) + "/healthz", TLS: true}
	case Kwok:
		return probe{URL: loopback("http", p.Kwok) + "/healthz"}
	case AWSEndpoints:
		// The one path served without a signature.
		return probe{URL: p.awsEndpoint() + awsserve.HealthPath}
	case Karpenter:
		// controller-runtime's health probe server, as Karpenter's
		// operator configures it.
		return probe{URL: loopback("http", p.KarpenterHealth) + "/healthz"}
	}
	panic(fmt.Sprintf("lab: unknown component %q", c))
}
