package labkarpenter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/awslabs/operatorpkg/serrors"
	"github.com/go-logr/zapr"
	"github.com/samber/lo"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	"sigs.k8s.io/karpenter/pkg/operator/options"
)

// newOperator is Karpenter's operator.NewOperator
// (sigs.k8s.io/karpenter@v1.14.1/pkg/operator/operator.go) with one change:
// the metrics and health-probe servers listen on 127.0.0.1, not on every
// interface — upstream formats ":<port>" and has no option for the host, and
// the lab serves on loopback only. Everything else is upstream's, line for
// line: the options from the environment, the logger, the client's QPS,
// burst and user agent, the manager's leader-election, cache and controller
// options, its readiness and health checks and field indexers (setupIndexers
// is unexported upstream, so it is copied too). Leader election and
// profiling are off in the lab; their branches are kept where they shape
// the options. Revisit on a Karpenter upgrade (docs/lab.md).
func newOperator() (context.Context, *operator.Operator) {
	ctx := injection.WithOptionsOrDie(context.Background(), options.Injectables...)
	opts := options.FromContext(ctx)
	if opts.MemoryLimit > 0 {
		debug.SetMemoryLimit(int64(float64(opts.MemoryLimit) * 0.9))
	}
	logger := serrors.NewLogger(zapr.NewLogger(logging.NewLogger(ctx, "controller")))
	log.SetLogger(logger)
	klog.SetLogger(logger)

	config := ctrl.GetConfigOrDie()
	leaderConfig := rest.CopyConfig(config)
	config.QPS = float32(opts.KubeClientQPS)
	config.Burst = opts.KubeClientBurst
	config.UserAgent = fmt.Sprintf("%s/%s", operator.AppName, operator.Version)
	kubernetesInterface := kubernetes.NewForConfigOrDie(config)

	mgrOpts := ctrl.Options{
		Logger:                        logging.IgnoreDebugEvents(logger),
		LeaderElection:                !opts.DisableLeaderElection,
		LeaderElectionID:              opts.LeaderElectionName,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionResourceLock:    resourcelock.LeasesResourceLock,
		LeaderElectionReleaseOnCancel: true,
		LeaderElectionConfig:          leaderConfig,
		Metrics:                       server.Options{BindAddress: fmt.Sprintf("127.0.0.1:%d", opts.MetricsPort)},
		HealthProbeBindAddress:        fmt.Sprintf("127.0.0.1:%d", opts.HealthProbePort),
		BaseContext: func() context.Context {
			ctx := log.IntoContext(context.Background(), logger)
			return injection.WithOptionsOrDie(ctx, options.Injectables...)
		},
		Cache: cache.Options{
			ByObject: map[client.Object]cache.ByObject{
				&coordinationv1.Lease{}: {
					Field: fields.SelectorFromSet(fields.Set{"metadata.namespace": "kube-node-lease"}),
				},
			},
		},
		Controller: ctrlconfig.Controller{
			EnableWarmup: new(!opts.DisableLeaderElection && !opts.DisableControllerWarmup),
		},
	}
	mgr, err := ctrl.NewManager(config, mgrOpts)
	mgr = lo.Must(mgr, err, "failed to setup manager")
	setupIndexers(ctx, mgr)
	lo.Must0(mgr.AddReadyzCheck("manager", func(req *http.Request) error {
		return lo.Ternary(mgr.GetCache().WaitForCacheSync(req.Context()), nil, fmt.Errorf("failed to sync caches"))
	}))
	lo.Must0(mgr.AddReadyzCheck("crd", func(_ *http.Request) error {
		for _, obj := range []client.Object{&karpv1.NodePool{}, &karpv1.NodeClaim{}} {
			gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
			if err != nil {
				return err
			}
			if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				return err
			}
		}
		return nil
	}))
	lo.Must0(mgr.AddHealthzCheck("healthz", healthz.Ping))
	lo.Must0(mgr.AddReadyzCheck("readyz", healthz.Ping))
	return ctx, &operator.Operator{
		Manager:             mgr,
		KubernetesInterface: kubernetesInterface,
		EventRecorder:       events.NewRecorder(mgr.GetEventRecorderFor(operator.AppName)), //nolint:staticcheck // as upstream
		Clock:               clock.RealClock{},
		InstanceTypeStore:   nodeoverlay.NewInstanceTypeStore(),
	}
}

// setupIndexers is upstream's (operator.go, unexported): the field indexes
// Karpenter's controllers list by.
func setupIndexers(ctx context.Context, mgr manager.Manager) {
	must := func(err error, msg string) {
		if err == nil {
			return
		}
		// Without the CRD, fail open: the controllers that do not need it
		// still run (upstream's handleCRDIndexerError).
		if noKind := (&meta.NoKindMatchError{}); errors.As(err, &noKind) {
			log.FromContext(ctx).Error(err, msg)
			return
		}
		panic(fmt.Sprintf("%s, %s", err, msg))
	}
	idx := mgr.GetFieldIndexer()
	lo.Must0(idx.IndexField(ctx, &corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}), "failed to setup pod indexer")
	lo.Must0(idx.IndexField(ctx, &corev1.Node{}, "spec.providerID", func(o client.Object) []string {
		return []string{o.(*corev1.Node).Spec.ProviderID}
	}), "failed to setup node provider id indexer")
	lo.Must0(idx.IndexField(ctx, &storagev1.VolumeAttachment{}, "spec.nodeName", func(o client.Object) []string {
		return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName}
	}), "failed to setup volumeattachment indexer")
	claim := func(f func(*karpv1.NodeClaim) string) client.IndexerFunc {
		return func(o client.Object) []string { return []string{f(o.(*karpv1.NodeClaim))} }
	}
	pool := func(f func(*karpv1.NodePool) string) client.IndexerFunc {
		return func(o client.Object) []string { return []string{f(o.(*karpv1.NodePool))} }
	}
	must(idx.IndexField(ctx, &karpv1.NodeClaim{}, "status.providerID", claim(func(c *karpv1.NodeClaim) string { return c.Status.ProviderID })),
		"failed to setup nodeclaim provider id indexer")
	must(idx.IndexField(ctx, &karpv1.NodeClaim{}, "spec.nodeClassRef.group", claim(func(c *karpv1.NodeClaim) string { return c.Spec.NodeClassRef.Group })),
		"failed to setup nodeclaim nodeclassref apiversion indexer")
	must(idx.IndexField(ctx, &karpv1.NodeClaim{}, "spec.nodeClassRef.kind", claim(func(c *karpv1.NodeClaim) string { return c.Spec.NodeClassRef.Kind })),
		"failed to setup nodeclaim nodeclassref kind indexer")
	must(idx.IndexField(ctx, &karpv1.NodeClaim{}, "spec.nodeClassRef.name", claim(func(c *karpv1.NodeClaim) string { return c.Spec.NodeClassRef.Name })),
		"failed to setup nodeclaim nodeclassref name indexer")
	must(idx.IndexField(ctx, &karpv1.NodePool{}, "spec.template.spec.nodeClassRef.group", pool(func(p *karpv1.NodePool) string { return p.Spec.Template.Spec.NodeClassRef.Group })),
		"failed to setup nodepool nodeclassref apiversion indexer")
	must(idx.IndexField(ctx, &karpv1.NodePool{}, "spec.template.spec.nodeClassRef.kind", pool(func(p *karpv1.NodePool) string { return p.Spec.Template.Spec.NodeClassRef.Kind })),
		"failed to setup nodepool nodeclassref kind indexer")
	must(idx.IndexField(ctx, &karpv1.NodePool{}, "spec.template.spec.nodeClassRef.name", pool(func(p *karpv1.NodePool) string { return p.Spec.Template.Spec.NodeClassRef.Name })),
		"failed to setup nodepool nodeclassref name indexer")
}
