package labkarpenter

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
)

// Config is how the lab runs Karpenter.
type Config struct {
	// Kubeconfig is the lab's admin kubeconfig.
	Kubeconfig string
	// Region and Zones are the cluster's: the offerings and the labels of
	// launched nodes.
	Region string
	Zones  []string
	// Version is the control plane's minor; nil reads the API server's.
	Version VersionFunc
	// MetricsPort and HealthPort are Karpenter's metrics and probe ports;
	// 0 picks free ones.
	MetricsPort, HealthPort int
	// LogLevel is Karpenter's: debug, info or error.
	LogLevel string
	// Seed seeds instance ids and addresses.
	Seed uint64
}

// runOnce guards the process-wide state the operator takes: the flag and
// environment parse, the global logger and Prometheus registry.
var runOnce sync.Once

// Run runs Karpenter's operator with its core controllers — provisioning,
// disruption and its queue, NodeClaim lifecycle, registration,
// initialization, drift, garbage collection, node termination — over this
// package's provider and EC2NodeClass controller, until ctx ends. Leader
// election is off. It can run once per process.
func Run(ctx context.Context, cfg Config) error {
	started := false
	var err error
	runOnce.Do(func() {
		started = true
		err = run(ctx, cfg)
	})
	if !started {
		return fmt.Errorf("Karpenter's operator runs once per process")
	}
	return err
}

func run(ctx context.Context, cfg Config) error {
	if err := configure(&cfg); err != nil {
		return err
	}
	if cfg.Version == nil {
		restConfig, err := loadConfig(cfg.Kubeconfig)
		if err != nil {
			return err
		}
		cfg.Version = ServerVersion(discovery.NewDiscoveryClientForConfigOrDie(restConfig))
	}
	// Karpenter parses os.Args with a flag set of its own options
	// (injection.WithOptionsOrDie) and panics on any other flag: it gets
	// the program name only, and its options from the environment.
	args := os.Args
	os.Args = os.Args[:1]
	opCtx, op := newOperator()
	os.Args = args

	runCtx, cancel := context.WithCancel(opCtx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()

	raw := New(op.GetClient(), cfg.Region, cfg.Zones, cfg.Seed)
	cp := overlay.Decorate(raw, op.GetClient(), op.InstanceTypeStore)
	cluster := state.NewCluster(op.Clock, op.GetClient(), cp)
	ctrls := controllers.NewControllers(runCtx, op.Manager, op.Clock, op.GetClient(), op.EventRecorder, cp, raw, cluster, op.InstanceTypeStore)
	ctrls = append(ctrls, NewNodeClassController(op.GetClient(), cfg.Zones, cfg.Version, op.Clock.Now))
	op.WithControllers(runCtx, ctrls...).Start(runCtx)
	return nil
}

// configure sets the environment Karpenter's options read (aws-apis.md
// §6.3): the kubeconfig, leader election off, the two ports, the log level.
// The ports are bound on 127.0.0.1 (newOperator); a free one is picked
// there when none is given.
func configure(cfg *Config) error {
	if cfg.Kubeconfig == "" {
		return fmt.Errorf("no kubeconfig: pass --kubeconfig (the lab's is in its directory)")
	}
	if len(cfg.Zones) == 0 {
		return fmt.Errorf("no zones: pass --zones")
	}
	for _, p := range []*int{&cfg.MetricsPort, &cfg.HealthPort} {
		if *p == 0 {
			port, err := freePort()
			if err != nil {
				return err
			}
			*p = port
		}
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "info"
	}
	env := map[string]string{
		"KUBECONFIG":              cfg.Kubeconfig,
		"DISABLE_LEADER_ELECTION": "true",
		"METRICS_PORT":            strconv.Itoa(cfg.MetricsPort),
		"HEALTH_PROBE_PORT":       strconv.Itoa(cfg.HealthPort),
		"LOG_LEVEL":               cfg.LogLevel,
	}
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("picking a port for Karpenter: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func loadConfig(kubeconfig string) (*rest.Config, error) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	restConfig.Timeout = 30 * time.Second
	return restConfig, nil
}

// ServerVersion is the version Karpenter's AWS provider discovers without
// an EKS endpoint: the API server's major.minor.
func ServerVersion(d discovery.ServerVersionInterface) VersionFunc {
	return func(context.Context) (string, error) {
		info, err := d.ServerVersion()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s.%s", info.Major, trimPlus(info.Minor)), nil
	}
}

// trimPlus drops the "+" some API servers append to the minor ("31+").
func trimPlus(minor string) string {
	for i, r := range minor {
		if r < '0' || r > '9' {
			return minor[:i]
		}
	}
	return minor
}
