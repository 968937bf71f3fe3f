package addon

// Workload names a Deployment or DaemonSet an add-on runs as.
type Workload struct {
	Kind, Namespace, Name string
}

// addonWorkloads are the add-ons the twin models, with the workloads in
// kube-system that run them.
var addonWorkloads = map[string][]Workload{
	"vpc-cni":            {{Kind: "DaemonSet", Namespace: "kube-system", Name: "aws-node"}},
	"coredns":            {{Kind: "Deployment", Namespace: "kube-system", Name: "coredns"}},
	"kube-proxy":         {{Kind: "DaemonSet", Namespace: "kube-system", Name: "kube-proxy"}},
	"aws-ebs-csi-driver": {{Kind: "Deployment", Namespace: "kube-system", Name: "ebs-csi-controller"}, {Kind: "DaemonSet", Namespace: "kube-system", Name: "ebs-csi-node"}},
}

// Workloads are the workloads an add-on runs as: what UpdateAddon rewrites
// (the twin's ApplyAddon, the executor) and what a scenario listing the
// add-on must carry in its manifests. nil for an add-on the twin does not
// model.
func Workloads(name string) []Workload { return addonWorkloads[name] }
