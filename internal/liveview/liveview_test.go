package liveview

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/ladder-eks/ladder/internal/journal"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// randomState is a state of up to n nodes, pods and PDBs with random
// fields, from r.
func randomState(r *rand.Rand, n int) *State {
	s := NewState("test")
	for i := range r.IntN(n) {
		name := fmt.Sprintf("node-%d", i)
		s.Nodes[name] = Node{Name: name, Group: fmt.Sprint("g", r.IntN(3)), Version: fmt.Sprint("v1.", 30+r.IntN(2)), Ready: r.IntN(4) > 0, Cordoned: r.IntN(3) == 0}
	}
	for i := range r.IntN(n * 3) {
		key := fmt.Sprintf("ns/pod-%d", i)
		s.Pods[key] = Pod{Key: key, Node: fmt.Sprintf("node-%d", r.IntN(n)), Ready: r.IntN(2) == 0, Terminating: r.IntN(5) == 0}
	}
	for i := range r.IntN(n) {
		key := fmt.Sprintf("ns/pdb-%d", i)
		s.PDBs[key] = PDB{Key: key, Healthy: r.Int32N(3), Floor: r.Int32N(3), Allowed: r.Int32N(2), Expected: r.Int32N(3)}
	}
	if r.IntN(2) == 0 {
		s.Steps = []Step{{Hop: "1.31", Name: "control-plane", State: "started"}}
	}
	// A replay's clock is there from the first state on.
	s.Clock = &Clock{T: float64(r.IntN(100)), End: 100, Speed: 60, Paused: r.IntN(2) == 0}
	if r.IntN(3) == 0 {
		s.Error = "watch: boom"
	}
	return s
}

// A page that applies Diff(from, to) to from has to: the deltas carry
// every change, additions, updates and removals alike.
func TestDiffThenApplyGivesTheNewState(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		from, to := randomState(r, 12), randomState(r, 12)
		got := from.Clone()
		got.Apply(Diff(from, to))
		if !reflect.DeepEqual(got, to) {
			t.Fatalf("case %d: applying the diff gave\n%+v\nwant\n%+v", i, got, to)
		}
		if d := Diff(to, to); !d.Empty() {
			t.Fatalf("case %d: a state differs from itself: %+v", i, d)
		}
	}
}

func TestHubSendsSnapshotThenOnlyWhatChanged(t *testing.T) {
	hub := NewHub("test")
	hub.Update(func(s *State) {
		s.Nodes["a"] = Node{Name: "a", Version: "v1.30.1", Ready: true}
		s.Nodes["b"] = Node{Name: "b", Version: "v1.30.1", Ready: true}
	})
	if d := hub.Flush(); d == nil || len(d.Nodes) != 2 || d.Seq != 1 {
		t.Fatalf("first flush: %+v, want both nodes at seq 1", d)
	}
	seq, snap, events, cancel := hub.Subscribe()
	defer cancel()
	if seq != 1 || !strings.HasPrefix(string(snap), `{"seq":1,"state":{`) {
		t.Fatalf("snapshot %d: %q", seq, snap)
	}
	hub.Update(func(s *State) {
		n := s.Nodes["a"]
		n.Cordoned = true
		s.Nodes["a"] = n
		delete(s.Nodes, "b")
	})
	if hub.Flush() == nil {
		t.Fatal("no delta after a change")
	}
	if hub.Flush() != nil {
		t.Fatal("a second flush with nothing changed sent a delta")
	}
	ev := <-events
	typ, data := parseEvent(t, string(ev))
	if typ != "delta" {
		t.Fatalf("event type %q, want delta", typ)
	}
	var d Delta
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		t.Fatal(err)
	}
	if d.Seq != 2 || len(d.Nodes) != 1 || !d.Nodes["a"].Cordoned || !reflect.DeepEqual(d.GoneNodes, []string{"b"}) {
		t.Fatalf("delta %+v: want seq 2, node a cordoned, b gone, nothing else", d)
	}
}

// A browser that stops reading is dropped, not waited for: the others
// keep getting their events, and the dropped one reconnects to a snapshot.
func TestHubDropsASubscriberThatFallsBehind(t *testing.T) {
	hub := NewHub("test")
	_, _, slow, cancelSlow := hub.Subscribe()
	defer cancelSlow()
	_, _, fast, cancelFast := hub.Subscribe()
	defer cancelFast()
	for i := range subscriberBuffer + 1 {
		hub.Update(func(s *State) { s.Nodes["n"] = Node{Name: "n", Version: fmt.Sprint(i)} })
		hub.Flush()
		<-fast
	}
	n := 0
	for range slow {
		n++
	}
	if n != subscriberBuffer {
		t.Fatalf("the slow subscriber got %d events before it was dropped, want %d", n, subscriberBuffer)
	}
}

func parseEvent(t *testing.T, ev string) (typ, data string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(ev, "\n\n"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "event":
			typ = v
		case "data":
			data = v
		}
	}
	return typ, data
}

func TestListenServesOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.7:0", "example.com:0", "nocolon"} {
		if l, err := Listen(addr, false); err == nil {
			l.Close()
			t.Errorf("Listen(%q) served without --allow-remote", addr)
		} else if !strings.Contains(err.Error(), "--addr") {
			t.Errorf("Listen(%q): %v: the message should name --addr", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		l, err := Listen(addr, false)
		if err != nil {
			t.Fatalf("Listen(%q): %v", addr, err)
		}
		l.Close()
	}
	l, err := Listen("0.0.0.0:0", true)
	if err != nil {
		t.Fatalf("Listen with --allow-remote: %v", err)
	}
	l.Close()
}

func node(name, group, version string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"eks.amazonaws.com/nodegroup": group, corev1.LabelInstanceTypeStable: "m5.large"}},
		Status: corev1.NodeStatus{
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: version},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// eventually polls cond until it holds or five seconds pass: what a watch
// delivers arrives on its own goroutine.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: never happened", what)
	}
}

// The live view lists nodes, pods and PDBs, then follows their watches:
// a node cordoned in the cluster reaches the page as a delta naming it.
func TestWatchFollowsTheCluster(t *testing.T) {
	truth := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", Controller: &truth}}},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Status:     policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 2, DesiredHealthy: 2, DisruptionsAllowed: 0, ExpectedPods: 2},
	}
	cs := fake.NewClientset(node("n1", "initial", "v1.30.14-eks-1"), node("n2", "initial", "v1.31.2-eks-1"), pod, pdb)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := NewHub("test")
	dir := t.TempDir()
	if err := Watch(ctx, cs, hub, FileJournal(dir+"/none.json")); err != nil {
		t.Fatal(err)
	}
	hub.Flush()
	st, _ := hub.Snapshot()
	if len(st.Nodes) != 2 || st.Nodes["n1"].Group != "initial" || st.Nodes["n1"].Kind != report.GroupManaged || st.Nodes["n1"].InstanceType != "m5.large" || !st.Nodes["n1"].Ready {
		t.Fatalf("nodes after the lists: %+v", st.Nodes)
	}
	if p := st.Pods["shop/web-1"]; p.Node != "n1" || !p.Ready || p.DaemonSet {
		t.Fatalf("pod after the lists: %+v", p)
	}
	if p := st.PDBs["shop/web"]; !p.AtFloor() || p.Floor != 2 {
		t.Fatalf("PDB after the lists: %+v, want at its floor", p)
	}
	if len(st.Steps) != 0 || st.Error != "" {
		t.Fatalf("no journal: steps %+v, error %q", st.Steps, st.Error)
	}

	n1, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n1.Spec.Unschedulable = true
	if _, err := cs.CoreV1().Nodes().Update(ctx, n1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var d *Delta
	eventually(t, "the cordon reaching the hub", func() bool {
		d = hub.Flush()
		return d != nil && d.Nodes["n1"].Cordoned
	})
	if len(d.Nodes) != 1 || len(d.Pods) != 0 {
		t.Fatalf("the cordon's delta carries more than the node: %+v", d)
	}
	if err := cs.CoreV1().Pods("shop").Delete(ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pod's deletion reaching the hub", func() bool {
		d = hub.Flush()
		return d != nil && len(d.GonePods) == 1 && d.GonePods[0] == "shop/web-1"
	})
}

func TestJournalStepsNameTheBlockingPod(t *testing.T) {
	if JournalSteps(nil, time.Now()) != nil {
		t.Fatal("steps without a journal")
	}
	f := t.TempDir() + "/j.json"
	j, err := journal.OpenFile(f, "lab", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.SetRehearsal([]journal.RehearsedStep{{Key: "1.31/control-plane", Seconds: 600}, {Key: "1.31/nodegroup/initial", Seconds: 900}}, nil); err != nil {
		t.Fatal(err)
	}
	rec, err := FileJournal(f)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	steps := JournalSteps(rec, time.Now())
	want := []Step{{Hop: "1.31", Name: "control-plane", State: "pending"}, {Hop: "1.31", Name: "nodegroup/initial", State: "pending"}}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("steps %+v, want %+v", steps, want)
	}
}

func record(t *testing.T, name string) (*Replay, *report.Report) {
	t.Helper()
	sc, err := scenario.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	r, rep, err := Record(sc, rehearse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, rep
}

// The replay starts from the scenario's cluster and ends where the
// rehearsal's report ends: the same nodes, at the same versions.
func TestReplayEndsWhereTheRehearsalEnds(t *testing.T) {
	r, rep := record(t, "workshop")
	start := r.StateAt(0)
	for _, n := range start.Nodes {
		if !strings.HasPrefix(n.Version, "v1.30.") {
			t.Fatalf("at 0 node %s is at %s, want 1.30", n.Name, n.Version)
		}
	}
	end := r.StateAt(r.End())
	if len(end.Nodes) != len(rep.Nodes) {
		t.Fatalf("at the end %d nodes, the report %d", len(end.Nodes), len(rep.Nodes))
	}
	for _, n := range rep.Nodes {
		got, ok := end.Nodes[n.Name]
		if !ok || got.Version != n.Version || got.Group != n.Group || got.Kind != n.GroupType || got.Ready != n.Ready {
			t.Fatalf("node %s at the end: %+v, the report has %+v", n.Name, got, n)
		}
	}
	for _, s := range end.Steps {
		if s.State != "done" {
			t.Fatalf("at the end step %s is %s", s.Name, s.State)
		}
	}
	if mid := r.StateAt(r.End() / 2); countState(mid.Steps, "started")+countState(mid.Steps, "done") == 0 {
		t.Fatalf("half way no step started: %+v", mid.Steps)
	}
	if end.Clock == nil || end.Clock.T != r.End() || !end.Clock.Paused {
		t.Fatalf("clock at the end: %+v", end.Clock)
	}
}

func countState(steps []Step, state string) int {
	n := 0
	for _, s := range steps {
		if s.State == state {
			n++
		}
	}
	return n
}

// Seeking back goes through the checkpoints; wherever the player came
// from, an instant shows the same state.
func TestReplaySeekIsDeterministic(t *testing.T) {
	defer func(n int) { checkpointEvery = n }(checkpointEvery)
	checkpointEvery = 50
	r, _ := record(t, "workshop")
	if len(r.checkpoints) < 5 {
		t.Fatalf("%d checkpoints for %d changes", len(r.checkpoints), r.Changes())
	}
	hub := NewHub("x")
	p := NewPlayer(r, hub, 60, true)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 40 {
		at := rng.Float64() * r.End()
		p.Seek(at)
		var got *State
		hub.Update(func(s *State) { got = s.Clone() })
		want := r.StateAt(at)
		want.Clock.Speed = got.Clock.Speed // StateAt's own player plays at 1×
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after seeking to %.1f the state differs from a fresh replay to it", at)
		}
	}
}

func TestPlayerPlaysPausesAndStopsAtTheEnd(t *testing.T) {
	r, _ := record(t, "karpenter-drift")
	hub := NewHub("x")
	p := NewPlayer(r, hub, 100, true)
	p.Advance(time.Second)
	if p.t != 0 {
		t.Fatalf("a paused player moved to %v", p.t)
	}
	if err := p.Do(Control{Action: "play"}); err != nil {
		t.Fatal(err)
	}
	p.Advance(2 * time.Second)
	if p.t != 200 {
		t.Fatalf("at 100× for 2 s the clock is at %v, want 200", p.t)
	}
	if err := p.Do(Control{Action: "speed", Speed: 0}); err == nil {
		t.Fatal("speed 0 accepted")
	}
	p.Advance(time.Duration(r.End()) * time.Second)
	if p.t != r.End() || !p.paused {
		t.Fatalf("past the end: t %v paused %v, want %v paused", p.t, p.paused, r.End())
	}
	if err := p.Do(Control{Action: "rewind"}); err == nil {
		t.Fatal("an unknown action accepted")
	}
}

func TestHandlerStreamsAndTakesReplayCommands(t *testing.T) {
	r, _ := record(t, "karpenter-drift")
	hub := NewHub("x")
	p := NewPlayer(r, hub, 60, true)
	hub.Flush()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = Handler(hub, p, Access{Addr: srv.Listener.Addr()})
	srv.Start()
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `<script src="view.js">`) {
		t.Fatalf("the page: %.200s", page)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := bufio.NewReader(resp.Body)
	next := func() (string, string) {
		var lines []string
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line == "\n" {
				return parseEvent(t, strings.Join(lines, ""))
			}
			lines = append(lines, line)
		}
	}
	if typ, _ := next(); typ != "snapshot" {
		t.Fatalf("first event %q, want snapshot", typ)
	}
	post := func(body string) int {
		resp, err := http.Post(srv.URL+"/api/replay", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(`{"action":"seek","t":` + fmt.Sprint(r.End()) + `}`); code != http.StatusNoContent {
		t.Fatalf("seek: %d", code)
	}
	typ, data := next()
	var d Delta
	if err := json.Unmarshal([]byte(data), &d); typ != "delta" || err != nil || d.Clock == nil || d.Clock.T != r.End() {
		t.Fatalf("after a seek: %s %.300s (%v)", typ, data, err)
	}
	for _, bad := range []string{`{"action":"seek","extra":1}`, `not json`, `{"action":"jump"}`} {
		if code := post(bad); code != http.StatusBadRequest {
			t.Errorf("POST %s: %d, want 400", bad, code)
		}
	}

	live := httptest.NewUnstartedServer(nil)
	live.Config.Handler = Handler(NewHub("live"), nil, Access{Addr: live.Listener.Addr()})
	live.Start()
	defer live.Close()
	resp, err = http.Post(live.URL+"/api/replay", "application/json", strings.NewReader(`{"action":"play"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("replay command to a live view: %d, want 404", resp.StatusCode)
	}
}

// An API server whose lists keep failing: Watch gives up after
// syncTimeout, saying so and what the last list said.
func TestWatchGivesUpOnListsThatNeverFinish(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}`)
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { syncTimeout = d }(syncTimeout)
	syncTimeout = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = Watch(ctx, cs, NewHub("test"), nil)
	if err == nil || !strings.Contains(err.Error(), "the lists did not finish within 300ms; the last error: ") ||
		!strings.Contains(err.Error(), "etcdserver: request timed out") {
		t.Fatalf("Watch: %v, want the sync timeout with the server's last error", err)
	}
}

// A replay shows each PDB with the status the rehearsal judged it by (the
// report's pdbs[].series): the workshop's orders-pdb spans the orders and
// orders-mysql Deployments, and at every change its floor and healthy count
// are the series', not one workload's.
func TestReplayPDBsAreTheReportsSeries(t *testing.T) {
	r, rep := record(t, "workshop")
	var orders *report.PDB
	for i := range rep.PDBs {
		if rep.PDBs[i].Namespace == "orders" && rep.PDBs[i].Name == "orders-pdb" {
			orders = &rep.PDBs[i]
		}
	}
	if orders == nil || len(orders.Workloads) < 2 || len(orders.Series.T) < 3 {
		t.Fatalf("orders-pdb in the report: %+v, want a series over two workloads", orders)
	}
	s := orders.Series
	for i := range s.T {
		if i+1 < len(s.T) && s.T[i+1] == s.T[i] {
			continue // several changes at one instant: the replay shows the last
		}
		got := r.StateAt(s.T[i]).PDBs["orders/orders-pdb"]
		if got.Healthy != s.Healthy[i] || got.Floor != s.Desired[i] || got.Allowed != s.Allowed[i] || got.Expected != s.Expected[i] {
			t.Fatalf("at %.0fs the replay shows %+v, the report's series healthy %d desired %d allowed %d expected %d",
				s.T[i], got, s.Healthy[i], s.Desired[i], s.Allowed[i], s.Expected[i])
		}
	}
}
