package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// Where the in-cluster journal lives: a ConfigMap and a Lease of one name
// in kube-system (docs/upgrade.md lists the RBAC they need).
const (
	Namespace = "kube-system"
	Name      = "ladder-upgrade"
	// DataKey is the ConfigMap's key holding the record as JSON.
	DataKey = "journal.json"
	// LeaseDuration is how long a Lease holds without renewal: a killed
	// upgrade's Lease frees itself after it.
	LeaseDuration = 60 * time.Second
)

// Cluster is the journal in the cluster: the ConfigMap kube-system/
// ladder-upgrade, and the Lease of that name held while the upgrade runs.
type Cluster struct {
	*journal
	*Lease
}

// Lease is the coordination.k8s.io/v1 Lease kube-system/ladder-upgrade,
// held and renewed while an upgrade runs, wherever its journal is: two
// upgrades of one cluster never run at once.
type Lease struct {
	cs       kubernetes.Interface
	identity string
	now      func() time.Time
	gone     func(holder string) bool
	stop     chan struct{}
	done     chan struct{}
}

// ClusterOptions tune OpenCluster and HoldLease; the zero value is
// production's.
type ClusterOptions struct {
	// Identity is the Lease holder (default: host name and process id).
	Identity string
	// Now is the clock the Lease is judged by (default time.Now).
	Now func() time.Time
	// Renew is how often the Lease is renewed (default LeaseDuration/3;
	// negative: never, for tests).
	Renew time.Duration
	// Gone reports whether a holder identity names a process that no longer
	// runs (default: one of this host whose pid is gone).
	Gone func(holder string) bool
}

// OpenCluster acquires the Lease — refused, naming the holder, while
// another upgrade holds it — and opens (or starts) the journal for
// cluster's upgrade to `to`. Close releases the Lease.
func OpenCluster(ctx context.Context, cs kubernetes.Interface, cluster, to string, opts ClusterOptions) (*Cluster, error) {
	l, err := HoldLease(ctx, cs, opts)
	if err != nil {
		return nil, err
	}
	j, err := open(configMapStore{cs: cs}, cluster, to)
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	return &Cluster{journal: j, Lease: l}, nil
}

// HoldLease acquires the Lease — refused, naming the holder, while another
// upgrade holds it — and renews it until Close.
func HoldLease(ctx context.Context, cs kubernetes.Interface, opts ClusterOptions) (*Lease, error) {
	if opts.Identity == "" {
		host, _ := os.Hostname()
		opts.Identity = host + "/" + strconv.Itoa(os.Getpid())
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Gone == nil {
		opts.Gone = deadOnThisHost
	}
	c := &Lease{cs: cs, identity: opts.Identity, now: opts.Now, gone: opts.Gone}
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	renew := opts.Renew
	if renew == 0 {
		renew = LeaseDuration / 3
	}
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go c.renewLoop(renew)
	return c, nil
}

// Close stops renewing and releases the Lease.
func (c *Lease) Close() error {
	close(c.stop)
	<-c.done
	return c.release(context.Background())
}

func (c *Lease) renewLoop(every time.Duration) {
	defer close(c.done)
	if every < 0 {
		<-c.stop
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			_ = c.acquire(context.Background()) // a failed renewal is retried; the Lease outlives two misses
		}
	}
}

// acquire takes or renews the Lease: created if absent, taken over if its
// holder let it expire or is a process of this host that no longer runs
// (an upgrade killed with kill -9, rerun on the same machine, need not
// wait out the Lease), renewed if ours.
func (c *Lease) acquire(ctx context.Context) error {
	leases := c.cs.CoordinationV1().Leases(Namespace)
	now := metav1.NewMicroTime(c.now())
	spec := coordinationv1.LeaseSpec{HolderIdentity: ptr.To(c.identity), LeaseDurationSeconds: ptr.To(int32(LeaseDuration / time.Second)),
		AcquireTime: &now, RenewTime: &now}
	l, err := leases.Get(ctx, Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Name}, Spec: spec}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("lease %s/%s: another ladder upgrade took it just now: wait for it, or stop it", Namespace, Name)
		}
		return leaseError(err)
	}
	if err != nil {
		return leaseError(err)
	}
	holder := ptr.Deref(l.Spec.HolderIdentity, "")
	if holder != "" && holder != c.identity && !expired(l, c.now()) && !c.gone(holder) {
		return fmt.Errorf("another ladder upgrade holds lease %s/%s (holder %s, renewed %s): wait for it to finish, or stop it; a stopped upgrade's lease frees itself %s after its last renewal",
			Namespace, Name, holder, l.Spec.RenewTime.UTC().Format(time.RFC3339), LeaseDuration)
	}
	if holder == c.identity && l.Spec.AcquireTime != nil {
		spec.AcquireTime = l.Spec.AcquireTime
	}
	l.Spec = spec
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("lease %s/%s: another ladder upgrade took it just now: wait for it, or stop it", Namespace, Name)
	}
	return leaseError(err)
}

// deadOnThisHost reports whether holder, an identity OpenCluster makes
// ("host/pid"), names this host and a pid no process has.
func deadOnThisHost(holder string) bool {
	host, pid, ok := strings.Cut(holder, "/")
	if me, _ := os.Hostname(); !ok || host != me {
		return false
	}
	n, err := strconv.Atoi(pid)
	return err == nil && n > 0 && processGone(n)
}

func expired(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return now.After(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// release gives the Lease up: it stays, without a holder.
func (c *Lease) release(ctx context.Context) error {
	leases := c.cs.CoordinationV1().Leases(Namespace)
	l, err := leases.Get(ctx, Name, metav1.GetOptions{})
	if err != nil || ptr.Deref(l.Spec.HolderIdentity, "") != c.identity {
		return nil
	}
	l.Spec.HolderIdentity = nil
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return leaseError(err)
}

func leaseError(err error) error {
	if err == nil {
		return nil
	}
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("lease %s/%s: %v (the upgrade's role needs get, create and update on leases named %s in %s: docs/upgrade.md)", Namespace, Name, err, Name, Namespace)
	}
	return fmt.Errorf("lease %s/%s: %v", Namespace, Name, err)
}

// configMapStore reads and writes the ConfigMap, each call bounded by
// requestTimeout: a journal write outlives the run's own context, so that a
// run being stopped still records where it stopped.
type configMapStore struct{ cs kubernetes.Interface }

const requestTimeout = 30 * time.Second

func (s configMapStore) load() (*Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	cm, err := s.cs.CoreV1().ConfigMaps(Namespace).Get(ctx, Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal configmap %s/%s: %v", Namespace, Name, err)
	}
	data, ok := cm.Data[DataKey]
	if !ok {
		return nil, nil
	}
	return decode([]byte(data), "configmap "+Namespace+"/"+Name)
}

// save writes the record into the ConfigMap, creating it the first time;
// the update carries the resourceVersion read, so a write by anyone else in
// between is a conflict, not lost.
func (s configMapStore) save(r *Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cms := s.cs.CoreV1().ConfigMaps(Namespace)
	// The Lease makes this run the journal's only writer, so a write
	// refused for a stale resourceVersion, or whose answer was lost, is
	// made again over what the server holds now: the record is written
	// whole, and writing it twice leaves it once.
	return journalError(retry.OnError(saveBackoff, transient, func() error {
		cm, err := cms.Get(ctx, Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Name,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "ladder"}}, Data: map[string]string{DataKey: string(data)}}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				// Created by the attempt whose answer was lost.
				return apierrors.NewConflict(corev1.Resource("configmaps"), Name, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[DataKey] = string(data)
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}))
}

// saveBackoff spaces a journal write's attempts: about a minute in all,
// more than an API server's usual Retry-After and a leader election.
var saveBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 8}

// transient reports whether a request may succeed when made again: a
// conflict, the API server throttling or unavailable, or the connection
// lost before the answer.
func transient(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsInternalError(err) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || errors.Is(err, io.ErrUnexpectedEOF)
}

func journalError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("journal configmap %s/%s: %v", Namespace, Name, err)
}
