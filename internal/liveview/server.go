package liveview

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// KeepAlive is how often an idle event stream gets a comment line, so
// proxies and the browser keep it open.
const KeepAlive = 15 * time.Second

// maxControl bounds a replay command's body.
const maxControl = 4 << 10

// Handler serves the page, its state and its event stream from hub; with
// a player, also the replay's controls (POST /api/replay).
//
//	GET  /             the page (HTML, JavaScript and CSS embedded: no CDN)
//	GET  /api/state    {"seq": N, "state": {...}}: what the page shows now
//	GET  /api/events   server-sent events: "snapshot" first, then "delta"s
//	POST /api/replay   {"action": "play"|"pause"|"seek"|"speed", "t": S, "speed": X}
func Handler(hub *Hub, player *Player) http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /", http.FileServerFS(static))
	mux.HandleFunc("GET /api/state", func(w http.ResponseWriter, r *http.Request) {
		st, seq := hub.Snapshot()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(struct {
			Seq   uint64 `json:"seq"`
			State *State `json:"state"`
		}{seq, st})
	})
	mux.HandleFunc("GET /api/events", func(w http.ResponseWriter, r *http.Request) { serveEvents(w, r, hub) })
	mux.HandleFunc("POST /api/replay", func(w http.ResponseWriter, r *http.Request) {
		if player == nil {
			http.Error(w, "this view watches a live cluster: there is no replay to control (ladder view --scenario S replays a rehearsal)", http.StatusNotFound)
			return
		}
		var c Control
		dec := json.NewDecoder(io.LimitReader(r.Body, maxControl))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
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
	return mux
}

// serveEvents streams the snapshot, then every delta, until the browser
// goes or the hub drops it for falling behind.
func serveEvents(w http.ResponseWriter, r *http.Request, hub *Hub) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	snap, events, cancel := hub.Subscribe()
	defer cancel()
	if _, err := w.Write(snap); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	keep := time.NewTicker(KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if _, err := w.Write(ev); err != nil {
				return
			}
		case <-keep.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
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
