package labserve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/ladder-eks/ladder/internal/awsserve"
	"github.com/ladder-eks/ladder/internal/awsserve/twinserve"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/twin/kube"
	"github.com/ladder-eks/ladder/internal/twinbuild"
)

// Options adjust a lab's endpoints.
type Options struct {
	// UpgradeControlPlane, if set, replaces the lab's control plane with
	// version's ("1.31") when an UpdateClusterVersion completes; the update
	// reports Successful once it returns.
	UpgradeControlPlane func(ctx context.Context, version string) error
	// Log receives what the endpoints have to say outside a response (a
	// failed control-plane upgrade); io.Discard if nil.
	Log io.Writer
	// AdoptPoll is how often adoption looks again for a node the lab does
	// not have yet; 500ms if zero.
	AdoptPoll time.Duration
	// Policy, if set, is the caller's IAM policy, evaluated on every
	// request (awsserve.Policy).
	Policy *awsserve.Policy
}

// Lab is a scenario's EKS endpoints acting on a lab's API server.
type Lab struct {
	// Region is the scenario's region, the one clients sign for.
	Region string
	// Cluster is the scenario's cluster name.
	Cluster string

	sc        *scenario.Scenario
	cs        kubernetes.Interface
	timeScale float64
	opts      Options

	// ready closes once the scenario's nodes are adopted (or adoption
	// failed, err says why); until then requests wait.
	ready   chan struct{}
	err     error
	twin    *twinserve.Twin
	kube    *Kube
	fargate *fargateCluster
}

// New returns the endpoints of sc (validated) for the lab cfg reaches.
// Nothing is asked of the lab until Run: it may still be materializing sc.
func New(sc *scenario.Scenario, cfg *rest.Config, timeScale float64, opts Options) (*Lab, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("lab client: %w", err)
	}
	return newLab(sc, cs, timeScale, opts), nil
}

func newLab(sc *scenario.Scenario, cs kubernetes.Interface, timeScale float64, opts Options) *Lab {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.AdoptPoll <= 0 {
		opts.AdoptPoll = 500 * time.Millisecond
	}
	c := sc.Spec.Cluster
	return &Lab{Region: c.Region, Cluster: c.Name, sc: sc, cs: cs, timeScale: timeScale, opts: opts, ready: make(chan struct{})}
}

// adopter is the body while Build creates the managed groups' starting
// nodes: they are the lab's already (materialize created them with the
// same seed, so the same names), and adopting one waits until it exists.
type adopter struct {
	*Kube
	adopting bool
	poll     time.Duration
}

func (a *adopter) AddNode(node *corev1.Node, ready bool) error {
	if !a.adopting {
		return a.Kube.AddNode(node, ready)
	}
	for {
		_, err := a.cs.CoreV1().Nodes().Get(a.ctx, node.Name, metav1.GetOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-a.ctx.Done():
			return fmt.Errorf("adopting node %s: the lab has no such node (was the scenario materialized with its own seed?): %w", node.Name, a.ctx.Err())
		case <-time.After(a.poll):
		}
	}
}

// adopt builds the twin's EKS services over the lab and adopts its nodes.
func (l *Lab) adopt(ctx context.Context) error {
	c := l.sc.Spec.Cluster
	k := NewKube(ctx, l.cs, kube.Options{Region: c.Region, Zones: c.Zones})
	body := &adopter{Kube: k, adopting: true, poll: l.opts.AdoptPoll}
	tw, err := twinbuild.Build(l.sc, twinbuild.Options{Body: body})
	if err != nil {
		return err
	}
	body.adopting = false
	// The precondition reads the lab's kubelets, not the twin's.
	tw.ControlPlane.Kubelets = k.Kubelets
	tw.ControlPlane.Upgrade = func(target kubeversion.Minor) {
		if l.opts.UpgradeControlPlane == nil {
			return
		}
		if err := l.opts.UpgradeControlPlane(ctx, target.String()); err != nil {
			fmt.Fprintf(l.opts.Log, "upgrading the lab's control plane to %s: %v\n", target, err)
		}
	}
	if l.fargate, err = newFargate(k, tw); err != nil {
		return err
	}
	l.kube, l.twin = k, twinserve.FromTwin(tw, l.timeScale, k)
	k.lock, k.timeScale = l.twin.Locked, l.twin.TimeScale()
	if l.opts.Policy != nil {
		l.twin.SetPolicy(l.opts.Policy)
	}
	return nil
}

// watchPods tells the node groups' drains of every pod that leaves a node,
// as the twin's cluster does, so a drain sees its node empty at once, and
// the Fargate scheduler of every pod it is to run and every one gone.
func (l *Lab) watchPods(ctx context.Context) error {
	f := informers.NewSharedInformerFactory(l.cs, 0)
	inf := f.Core().V1().Pods().Informer()
	changed := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			l.twin.Locked(func() { l.kube.PodChanged(p.Spec.NodeName) })
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				l.twin.Locked(func() { l.fargate.podCreated(p) })
			}
		},
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: func(obj any) {
			changed(obj)
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				l.twin.Locked(func() { l.fargate.podDeleted(ctx, p) })
			}
		},
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watching the lab's pods: %w", ctx.Err())
	}
	return nil
}

// ServeHTTP answers an AWS request once the lab's nodes are adopted; the
// health check at once.
func (l *Lab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == awsserve.HealthPath {
		_, _ = io.WriteString(w, "ok")
		return
	}
	select {
	case <-l.ready:
	case <-r.Context().Done():
		return
	}
	if l.err != nil {
		http.Error(w, l.err.Error(), http.StatusServiceUnavailable)
		return
	}
	l.twin.ServeHTTP(w, r)
}

// Run adopts the lab's nodes, then advances the services' engine with the
// wall clock until ctx ends.
func (l *Lab) Run(ctx context.Context, tick time.Duration) {
	l.err = l.adopt(ctx)
	if l.err == nil {
		l.err = l.watchPods(ctx)
	}
	close(l.ready)
	if l.err != nil {
		fmt.Fprintf(l.opts.Log, "lab endpoints: %v\n", l.err)
		<-ctx.Done()
		return
	}
	l.twin.Run(ctx, tick)
}

// Serve answers on ln until ctx ends, after printing to out the exports
// that point the AWS CLI and SDKs at it.
func (l *Lab) Serve(ctx context.Context, ln net.Listener, out io.Writer) error {
	return twinserve.Serve(ctx, ln, out, l.Region, l.Cluster, l, l.Run)
}

// Ready closes once the lab's nodes are adopted; Err then says whether
// adoption failed.
func (l *Lab) Ready() <-chan struct{} { return l.ready }

// Err is why adoption failed, once Ready is closed.
func (l *Lab) Err() error {
	<-l.ready
	return l.err
}
