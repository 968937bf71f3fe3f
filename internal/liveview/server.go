package liveview

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"
)

//go:embed assets
var assets embed.FS

// KeepAlive is how often an idle event stream gets a comment line, so
// proxies and the browser keep it open.
const KeepAlive = 15 * time.Second

// maxControl bounds a replay command's body: a command is a few dozen
// bytes; a larger body is answered 413 before more of it is read.
const maxControl = 4 << 10

// MaxSubscribers is how many event streams the view serves at once; one
// more is answered 503. A browser tab holds one.
const MaxSubscribers = 64

// The server's timeouts: a request's headers must arrive within
// readHeaderTimeout (a client that sends them byte by byte — slowloris —
// is cut off), a replay command's body within readBodyTimeout, and each
// write to a client must be taken within writeTimeout — a client that stops
// reading is dropped and its event stream's place freed. A kept-alive
// connection idle for idleTimeout is closed. Variables for the tests.
var (
	readHeaderTimeout = 10 * time.Second
	readBodyTimeout   = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
)

// Access says which Host headers the view answers (see hostAllowed).
type Access struct {
	// Addr is the address the server listens on: its listener's.
	Addr net.Addr
	// Hosts are the further host names the page is opened by
	// (--allow-host): exact names, any case; "*" is any host.
	Hosts []string
}

// Handler serves the page, its state and its event stream from hub; with
// a player, also the replay's controls (POST /api/replay). It answers only
// requests whose Host acc allows (421 otherwise), takes a replay command
// only from the page's own origin (403 otherwise), and serves at most
// MaxSubscribers event streams (503 beyond).
//
//	GET  /             the page (HTML, JavaScript and CSS embedded: no CDN)
//	GET  /api/state    {"seq": N, "state": {...}}: what the page shows now
//	GET  /api/events   server-sent events: "snapshot" first, then "delta"s
//	POST /api/replay   {"action": "play"|"pause"|"seek"|"speed", "t": S, "speed": X}
func Handler(hub *Hub, player *Player, acc Access) http.Handler {
	return newServer(hub, player, acc)
}

// server is Handler's http.Handler; its counters are for the tests.
type server struct {
	acc     Access
	handler http.Handler
	// streams holds a token per event stream served.
	streams chan struct{}
	refused atomic.Int64 // event streams refused for the cap
}

func newServer(hub *Hub, player *Player, acc Access) *server {
	s := &server{acc: acc, streams: make(chan struct{}, MaxSubscribers)}
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		// A name the embedded files cannot hold (invalid UTF-8, found by
		// FuzzViewHandler) is not found, not the FS's error as a 500.
		if name := strings.Trim(r.URL.Path, "/"); name != "" && !fs.ValidPath(name) {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /api/state", func(w http.ResponseWriter, r *http.Request) {
		data := hub.SnapshotJSON()
		w.Header().Set("Content-Type", "application/json")
		if _, err := w.Write(data); err == nil {
			_, _ = io.WriteString(w, "\n")
		}
	})
	mux.HandleFunc("GET /api/events", s.serveEvents(hub))
	mux.HandleFunc("POST /api/replay", func(w http.ResponseWriter, r *http.Request) {
		if player == nil {
			http.Error(w, "this view watches a live cluster: there is no replay to control (ladder view --scenario S replays a rehearsal)", http.StatusNotFound)
			return
		}
		if r.ContentLength > maxControl {
			tooLarge(w)
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(readBodyTimeout))
		var c Control
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxControl))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				tooLarge(w)
				return
			}
			http.Error(w, fmt.Sprintf("replay command: %v (send {\"action\": \"play\"|\"pause\"|\"seek\"|\"speed\", \"t\": SECONDS, \"speed\": X})", err), http.StatusBadRequest)
			return
		}
		if err := player.Do(c); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		hub.Flush()
		w.WriteHeader(http.StatusNoContent)
	})
	// A replay command from another origin — a page elsewhere that posts
	// to 127.0.0.1 — is refused: net/http's CrossOriginProtection reads
	// Sec-Fetch-Site, else compares Origin with Host; GET, HEAD and OPTIONS
	// change nothing here and pass.
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("%s %s from another origin (%q): the view takes commands from its own page only", r.Method, r.URL.Path, r.Header.Get("Origin")), http.StatusForbidden)
	}))
	s.handler = csrf.Handler(mux)
	return s
}

func tooLarge(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	http.Error(w, fmt.Sprintf("replay command too large: at most %d bytes (send {\"action\": \"play\"|\"pause\"|\"seek\"|\"speed\", \"t\": SECONDS, \"speed\": X})", maxControl), http.StatusRequestEntityTooLarge)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.acc.hostAllowed(r.Host) {
		// A page of another site that resolves its name to 127.0.0.1 (DNS
		// rebinding) reaches this server with its own name as Host.
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("Host %q is not this server's address: open http://%s/, or start ladder view with --allow-host NAME for a name that reaches it", r.Host, s.acc.Addr), http.StatusMisdirectedRequest)
		return
	}
	// Every write must be taken in time; serveEvents moves the deadline
	// on before each of its writes.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTimeout))
	s.handler.ServeHTTP(w, r)
}

// hostAllowed reports whether a request's Host header names this server
// in a way a DNS-rebinding page cannot: as kubectl proxy's --accept-hosts
// default (k8s.io/kubectl/pkg/proxy: DefaultHostAcceptRE, "localhost",
// "127.0.0.1", "[::1]", matched on the host without its port, by
// FilterServer.ServeHTTP), any loopback address, the address the server is
// bound to (any IP address when it is bound to all of them), and the names
// in Hosts ("*": any). The port is not compared, so that a tunnel
// (ssh -L 9000:127.0.0.1:8080) still reaches the page.
func (a Access) hostAllowed(hostport string) bool {
	// As a browser writes it: a name or an IPv4 address, or an IPv6
	// address in brackets, then a numeric port, if any.
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if strings.Trim(port, "0123456789") != "" {
			return false
		}
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return false
	}
	host = strings.ToLower(host)
	if host == "" {
		return false
	}
	for _, h := range a.Hosts {
		if h == "*" || strings.EqualFold(h, host) {
			return true
		}
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return true
	}
	bound, ok := a.Addr.(*net.TCPAddr)
	if !ok {
		return false
	}
	b, ok := netip.AddrFromSlice(bound.IP)
	if !ok {
		return false
	}
	b = b.Unmap()
	// An IP address cannot be rebound: a page whose origin is an IP
	// address reaches only the machine at that address.
	return b.IsUnspecified() || b == ip
}

// serveEvents streams the snapshot, then every delta, until the browser
// goes, stops taking what it is sent for writeTimeout, or the hub drops it
// for falling behind.
func (s *server) serveEvents(hub *Hub) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.streams <- struct{}{}:
			defer func() { <-s.streams }()
		default:
			s.refused.Add(1)
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "5")
			http.Error(w, fmt.Sprintf("this view serves %d event streams at once, and all are taken: close a tab of it, or retry later", MaxSubscribers), http.StatusServiceUnavailable)
			return
		}
		rc := http.NewResponseController(w)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Accel-Buffering", "no")
		seq, snap, events, cancel := hub.Subscribe()
		defer cancel()
		// send writes parts and flushes them, each write within
		// writeTimeout of the last; false when the client is gone or
		// stopped reading.
		send := func(parts ...[]byte) bool {
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			for _, p := range parts {
				if _, err := w.Write(p); err != nil {
					return false
				}
			}
			return rc.Flush() == nil
		}
		if !send(fmt.Appendf(nil, "event: snapshot\nid: %d\ndata: ", seq), snap, []byte("\n\n")) {
			return
		}
		keep := time.NewTicker(KeepAlive)
		defer keep.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case ev, ok := <-events:
				if !ok || !send(ev) {
					return
				}
			case <-keep.C:
				if !send([]byte(": keep-alive\n\n")) {
					return
				}
			}
		}
	}
}

// Server is the view's HTTP server for h, with the timeouts above: the
// event streams are long, so there is no overall read or write timeout,
// but each read and write has its own.
func Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// Listen opens addr for the view. The page shows every node and pod of the
// cluster to whoever reaches it, so it listens on a loopback address only,
// unless allowRemote says otherwise.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %v (give HOST:PORT, e.g. 127.0.0.1:8080; port 0 picks a free one)", addr, err)
	}
	if !allowRemote {
		switch ip := net.ParseIP(strings.Trim(host, "[]")); {
		case host == "":
			return nil, fmt.Errorf("--addr %q listens on every interface, and the view shows the cluster's nodes and pods to whoever reaches it: give a loopback address (127.0.0.1:PORT), or pass --allow-remote to serve it beyond this machine", addr)
		case host == "localhost":
		case ip == nil:
			return nil, fmt.Errorf("--addr %q: give an IP address (127.0.0.1:PORT), not a host name, or pass --allow-remote", addr)
		case !ip.IsLoopback():
			return nil, fmt.Errorf("--addr %q is not a loopback address, and the view shows the cluster's nodes and pods to whoever reaches it: use 127.0.0.1:PORT, or pass --allow-remote to serve it on %s", addr, host)
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %v (pick another port; 0 picks a free one)", addr, err)
	}
	return l, nil
}
