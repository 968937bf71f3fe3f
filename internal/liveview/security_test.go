package liveview

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// bigState fills hub with nodes nodes of ten pods each and flushes it.
func bigState(hub *Hub, nodes int) {
	hub.Update(func(s *State) {
		for i := range nodes {
			name := fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i/250, i%250)
			s.Nodes[name] = Node{Name: name, Group: fmt.Sprint("group-", i%7), Kind: "managed", InstanceType: "m7i.large", Version: "v1.30.4-eks-a737599", Ready: true}
			for j := range 10 {
				key := fmt.Sprintf("shop/checkout-7d9c6b5f4-%d-%d", i, j)
				s.Pods[key] = Pod{Key: key, Node: name, Ready: true}
			}
		}
	})
	hub.Flush()
}

// serveView serves hub and player on 127.0.0.1 as ladder view does
// (Server's timeouts, Access from the listener); wrap, when given, wraps
// each accepted connection.
func serveView(t *testing.T, hub *Hub, player *Player, wrap func(net.Conn) net.Conn) (*server, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(hub, player, Access{Addr: l.Addr()})
	srv := Server(s)
	if wrap != nil {
		l = wrapListener{l, wrap}
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s, l.Addr().String()
}

type wrapListener struct {
	net.Listener
	wrap func(net.Conn) net.Conn
}

func (l wrapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.wrap(c), nil
}

// within polls cond until it holds or limit passes.
func within(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, limit, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: not within %v", what, limit)
	}
}

func paused(p *Player) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// The Host header decides who is answered: a page of another site whose
// name resolves to 127.0.0.1 (DNS rebinding) sends its own name, and is
// refused whatever it asks for.
func TestHostMustNameThisServer(t *testing.T) {
	tcp := func(s string) net.Addr {
		a, err := net.ResolveTCPAddr("tcp", s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, c := range []struct {
		acc  Access
		host string
		want bool
	}{
		{Access{Addr: tcp("127.0.0.1:8080")}, "127.0.0.1:8080", true},
		{Access{Addr: tcp("127.0.0.1:8080")}, "localhost:8080", true},
		{Access{Addr: tcp("127.0.0.1:8080")}, "LocalHost:8080", true},
		{Access{Addr: tcp("127.0.0.1:8080")}, "[::1]:8080", true},
		{Access{Addr: tcp("127.0.0.1:8080")}, "127.0.0.1", true},
		{Access{Addr: tcp("127.0.0.1:8080")}, "127.0.0.1:9000", true}, // ssh -L 9000:127.0.0.1:8080
		{Access{Addr: tcp("127.0.0.1:8080")}, "evil.example:8080", false},
		{Access{Addr: tcp("127.0.0.1:8080")}, "evil.example", false},
		{Access{Addr: tcp("127.0.0.1:8080")}, "localhost.evil.example:8080", false},
		{Access{Addr: tcp("127.0.0.1:8080")}, "127.0.0.1.nip.io:8080", false},
		{Access{Addr: tcp("127.0.0.1:8080")}, "localhost:http", false},
		{Access{Addr: tcp("127.0.0.1:8080")}, "::1", false},
		{Access{Addr: tcp("127.0.0.1:8080")}, "[fe80::1%eth0]:8080", false},
		{Access{Addr: tcp("127.0.0.1:8080")}, "10.0.0.5:8080", false},
		{Access{Addr: tcp("127.0.0.1:8080")}, "", false},
		{Access{Addr: tcp("[::1]:8080")}, "[::1]:8080", true},
		{Access{Addr: tcp("[::1]:8080")}, "evil.example:8080", false},
		// --allow-remote: the bound address; bound to all, any IP address.
		{Access{Addr: tcp("10.0.0.5:8080")}, "10.0.0.5:8080", true},
		{Access{Addr: tcp("10.0.0.5:8080")}, "10.0.0.6:8080", false},
		{Access{Addr: tcp("0.0.0.0:8080")}, "192.168.1.9:8080", true},
		{Access{Addr: tcp("0.0.0.0:8080")}, "[2001:db8::1]:8080", true},
		{Access{Addr: tcp("0.0.0.0:8080")}, "evil.example:8080", false},
		// --allow-host
		{Access{Addr: tcp("0.0.0.0:8080"), Hosts: []string{"bastion.example"}}, "Bastion.Example:9000", true},
		{Access{Addr: tcp("0.0.0.0:8080"), Hosts: []string{"bastion.example"}}, "evil.example:8080", false},
		{Access{Addr: tcp("127.0.0.1:8080"), Hosts: []string{"*"}}, "evil.example:8080", true},
	} {
		if got := c.acc.hostAllowed(c.host); got != c.want {
			t.Errorf("bound to %s, allowing %q: Host %q allowed %v, want %v", c.acc.Addr, c.acc.Hosts, c.host, got, c.want)
		}
	}

	hub := NewHub("x")
	p := NewPlayer(tinyReplay(), hub, 60, true)
	hub.Flush()
	_, addr := serveView(t, hub, p, nil)
	_, port, _ := net.SplitHostPort(addr)
	for _, path := range []string{"/", "/view.js", "/api/state", "/api/events", "/api/replay"} {
		method := http.MethodGet
		var body io.Reader
		if path == "/api/replay" {
			method, body = http.MethodPost, strings.NewReader(`{"action":"play"}`)
		}
		req, _ := http.NewRequest(method, "http://"+addr+path, body)
		req.Host = "evil.example:" + port
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var msg []byte
		if resp.StatusCode == http.StatusMisdirectedRequest { // else it may be the stream, endless
			msg, _ = io.ReadAll(resp.Body)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest || strings.Count(string(msg), "\n") != 1 ||
			!strings.Contains(string(msg), `Host "evil.example:`+port+`" is not this server's address: open http://`+addr+"/") {
			t.Errorf("%s %s with Host evil.example: %d %q, want 421 and one line naming the Host", method, path, resp.StatusCode, msg)
		}
		req, _ = http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		req.Host = "localhost:" + port
		if path == "/api/events" || path == "/api/replay" {
			continue
		}
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with Host localhost:%s: %d, want 200", path, port, resp.StatusCode)
		}
	}
	if !paused(p) {
		t.Error("a POST with a foreign Host played the replay")
	}
}

// tinyReplay is a replay of one node that appears at 1 s and a pod at 2 s,
// ending at 10 s.
func tinyReplay() *Replay {
	return &Replay{
		source:  "tiny",
		nodes:   []Node{{Name: "a", Group: "g", Version: "v1.30.1", Ready: true}},
		pods:    []Pod{{Key: "ns/p", Node: "a", Ready: true}},
		changes: []change{{t: 1, kind: kindNode, key: "a"}, {t: 2, kind: kindPod, key: "ns/p"}},
		end:     10,
	}
}

// A page of another origin — another site, or another port of this
// machine — cannot play, pause, seek or change the speed of the replay;
// the view's own page, and a client that is no browser (curl), can.
func TestReplayCommandsComeFromThePageOnly(t *testing.T) {
	hub := NewHub("x")
	p := NewPlayer(tinyReplay(), hub, 60, true)
	hub.Flush()
	_, addr := serveView(t, hub, p, nil)
	post := func(method string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+"/api/replay", strings.NewReader(`{"action":"play"}`))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(msg)
	}
	for _, hdr := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"},
		{"Origin": "http://127.0.0.1:1"},
		{"Origin": "null"},
	} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			code, msg := post(method, hdr)
			if code != http.StatusForbidden || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "from another origin") {
				t.Errorf("%s with %v: %d %q, want 403 and one line", method, hdr, code, msg)
			}
		}
		if !paused(p) {
			t.Fatalf("a POST with %v played the replay", hdr)
		}
	}
	if code, msg := post(http.MethodPost, map[string]string{"Origin": "http://" + addr, "Sec-Fetch-Site": "same-origin"}); code != http.StatusNoContent || paused(p) {
		t.Fatalf("the page's own POST: %d %q, paused %v; want 204 and playing", code, msg, paused(p))
	}
	p.Do(Control{Action: "pause"})
	if code, msg := post(http.MethodPost, nil); code != http.StatusNoContent || paused(p) {
		t.Fatalf("curl's POST (no Origin): %d %q; want 204", code, msg)
	}
}

// A replay command is a few dozen bytes: a body over 4 KiB is answered
// 413 "too large", whether its length is announced or streamed.
func TestReplayCommandBodyIsBounded(t *testing.T) {
	hub := NewHub("x")
	p := NewPlayer(tinyReplay(), hub, 60, true)
	hub.Flush()
	_, addr := serveView(t, hub, p, nil)
	// Valid JSON, 1 MiB of it blank: a decoder that read it all would play.
	huge := `{"action": "play"` + strings.Repeat(" ", 1<<20) + `}`
	for _, c := range []struct {
		what string
		body io.Reader
	}{
		{"1 MiB with its Content-Length", strings.NewReader(huge)},
		{"1 MiB chunked", io.MultiReader(strings.NewReader(huge))},
		{"4 KiB + 1 chunked", io.MultiReader(strings.NewReader(huge[:maxControl+1]))},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/replay", c.body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "replay command too large: at most 4096 bytes") {
			t.Errorf("%s: %d %q, want 413 too large", c.what, resp.StatusCode, msg)
		}
	}
	if !paused(p) {
		t.Fatal("an oversized command played the replay")
	}
}

// The snapshot a subscriber starts from is encoded once per state, by the
// first who asks, outside the hub's lock: the watches' updates and the
// flushes to the other browsers go on meanwhile, and a thousand
// subscribers share one copy of it.
func TestSnapshotIsEncodedOnceOutsideTheLock(t *testing.T) {
	hub := NewHub("x")
	bigState(hub, 100)
	var encodings atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	defer func(f func()) { beforeEncode = f }(beforeEncode)
	beforeEncode = func() {
		if encodings.Add(1) == 1 {
			close(entered)
			<-release
		}
	}
	released := sync.OnceFunc(func() { close(release) })
	defer released()
	first := make(chan []byte, 1)
	go func() {
		_, snap, _, cancel := hub.Subscribe()
		cancel()
		first <- snap
	}()
	<-entered
	flushed := make(chan *Delta, 1)
	go func() {
		hub.Update(func(s *State) { s.Nodes["new"] = Node{Name: "new", Version: "v1.31.0"} })
		flushed <- hub.Flush()
	}()
	select {
	case d := <-flushed:
		if d == nil || d.Seq != 2 {
			t.Fatalf("flush while a snapshot is encoded: %+v, want seq 2", d)
		}
	case <-time.After(10 * time.Second):
		released()
		t.Fatal("Update and Flush waited for a subscriber's snapshot to be encoded")
	}
	released()
	if snap := <-first; !strings.HasPrefix(string(snap), `{"seq":1,`) || strings.Contains(string(snap), `"new"`) {
		t.Fatalf("the first subscriber's snapshot: %.60s…, want the state at seq 1", snap)
	}

	n := encodings.Load()
	var wg sync.WaitGroup
	snaps := make([][]byte, 1000)
	for i := range snaps {
		wg.Go(func() {
			_, snap, _, cancel := hub.Subscribe()
			defer cancel()
			snaps[i] = snap
		})
	}
	wg.Wait()
	if got := encodings.Load() - n; got != 1 {
		t.Fatalf("1,000 subscribers at one seq: %d encodings, want 1", got)
	}
	for _, s := range snaps[1:] {
		if &s[0] != &snaps[0][0] {
			t.Fatal("subscribers at one seq got copies of the snapshot, not one shared")
		}
	}
	if data := hub.SnapshotJSON(); &data[0] != &snaps[0][0] {
		t.Fatal("/api/state's snapshot is another copy")
	}
}

// Thousands of clients that open the event stream and never read it: the
// first MaxSubscribers get it and the others 503 at once; the goroutines
// and the memory they hold are bounded; a browser that reads still gets
// each delta as soon as it is flushed.
func TestIdleEventStreamsAreCappedAndStallNoOne(t *testing.T) {
	hub := NewHub("x")
	bigState(hub, 100)
	s, addr := serveView(t, hub, nil, nil)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string, 16)
	go func() {
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(events)
				return
			}
			if strings.HasPrefix(line, "event: ") {
				events <- strings.TrimSpace(strings.TrimPrefix(line, "event: "))
			}
		}
	}()
	if ev := <-events; ev != "snapshot" {
		t.Fatalf("first event %q", ev)
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	baseGoroutines := runtime.NumGoroutine()

	const idle = 2000
	start := time.Now()
	conns := make([]net.Conn, 0, idle)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range idle {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("after %d connections: %v", len(conns), err)
		}
		conns = append(conns, c)
		if _, err := fmt.Fprintf(c, "GET /api/events HTTP/1.1\r\nHost: %s\r\n\r\n", addr); err != nil {
			t.Fatal(err)
		}
	}
	within(t, 60*time.Second, "every idle client served or refused", func() bool {
		return int64(hub.Subscribers())+s.refused.Load() == idle+1
	})
	answered := time.Since(start)
	if n := hub.Subscribers(); n != MaxSubscribers {
		t.Fatalf("%d event streams served, want %d", n, MaxSubscribers)
	}
	if n := s.refused.Load(); n != idle+1-MaxSubscribers {
		t.Fatalf("%d refused, want %d", n, idle+1-MaxSubscribers)
	}
	// The refused are closed by the server: their goroutines end.
	within(t, 60*time.Second, "the refused connections' goroutines gone", func() bool {
		return runtime.NumGoroutine()-baseGoroutines <= 3*MaxSubscribers
	})
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	snapSize := len(hub.SnapshotJSON())
	grew := int64(after.HeapInuse+after.StackInuse) - int64(before.HeapInuse+before.StackInuse)
	t.Logf("%d idle clients, snapshot %d KB: all answered after %v; %d goroutines more, heap and stacks %+.1f MB, %.1f MB allocated",
		idle, snapSize>>10, answered, runtime.NumGoroutine()-baseGoroutines, float64(grew)/(1<<20), float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
	if limit := int64(8 << 20); grew > limit {
		t.Errorf("%d idle clients grew the heap and stacks by %d MB, want at most %d MB", idle, grew>>20, limit>>20)
	}

	// A refused client is told why, in one line.
	last := conns[len(conns)-1]
	_ = last.SetReadDeadline(time.Now().Add(10 * time.Second))
	refusal, err := http.ReadResponse(bufio.NewReader(last), nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(refusal.Body)
	if refusal.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(msg), "this view serves 64 event streams at once, and all are taken") {
		t.Fatalf("the last client: %d %q, want 503 and why", refusal.StatusCode, msg)
	}

	// The reading browser gets a delta as soon as it is flushed.
	hub.Update(func(s *State) { s.Nodes["new"] = Node{Name: "new", Version: "v1.31.0"} })
	start = time.Now()
	if hub.Flush() == nil {
		t.Fatal("no delta")
	}
	flushed := time.Since(start)
	select {
	case ev := <-events:
		if ev != "delta" {
			t.Fatalf("event %q, want delta", ev)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("the reading browser got no delta within 2 s of the flush (the flush took %v)", flushed)
	}
	t.Logf("flush to %d streams %v; delta received %v after the flush began", MaxSubscribers, flushed, time.Since(start))
}

// A client that opens the event stream and stops reading is dropped when
// a write is not taken within writeTimeout, and its place is freed.
func TestAStreamThatIsNotReadIsDropped(t *testing.T) {
	defer func(d time.Duration) { writeTimeout = d }(writeTimeout)
	writeTimeout = 300 * time.Millisecond
	hub := NewHub("x")
	bigState(hub, 2000) // a snapshot of a few MB: more than the socket buffers take
	s, addr := serveView(t, hub, nil, func(c net.Conn) net.Conn {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(4 << 10)
		}
		return c
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "GET /api/events HTTP/1.1\r\nHost: %s\r\n\r\n", addr); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the stream served", func() bool { return len(s.streams) == 1 })
	eventually(t, "the stream that is not read dropped and its place freed", func() bool {
		return len(s.streams) == 0 && hub.Subscribers() == 0
	})
}

// A client that sends its request's headers a byte at a time (slowloris)
// is cut off once readHeaderTimeout has passed, not held open for as long
// as it keeps sending.
func TestSlowlorisIsCutOff(t *testing.T) {
	defer func(d time.Duration) { readHeaderTimeout = d }(readHeaderTimeout)
	readHeaderTimeout = 300 * time.Millisecond
	hub := NewHub("x")
	hub.Flush()
	_, addr := serveView(t, hub, nil, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "GET /api/state HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte("a")); err != nil {
					return
				}
			}
		}
	}()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(10 * time.Second))
	_, err = io.ReadAll(c)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("a client sending its headers byte by byte was still connected after %v", time.Since(start).Round(time.Millisecond))
	}
	t.Logf("cut off after %v (%v)", time.Since(start).Round(time.Millisecond), err)
}
