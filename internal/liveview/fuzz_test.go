package liveview

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// hostPart splits a Host header as a browser writes it: a name or IPv4
// address, or a bracketed IPv6 address, then an optional numeric port.
var hostPart = regexp.MustCompile(`^(\[[^\[\]]*\]|[^:\[\]]*)(:[0-9]*)?$`)

// localHost is the rule FuzzViewHandler holds the view to, said without
// its code: the view bound to 127.0.0.1 answers localhost and loopback
// addresses only.
func localHost(host string) bool {
	m := hostPart.FindStringSubmatch(host)
	if m == nil {
		return false
	}
	name := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(m[1], "["), "]"))
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// The view's handler, as a client that is not the page would use it: any
// method, path, Host, Origin, Sec-Fetch-Site, one more header line, and a
// body. It never panics, answers only the statuses below, and a request
// whose Host is not local is never answered but with 421.
func FuzzViewHandler(f *testing.F) {
	hub := NewHub("fuzz")
	p := NewPlayer(tinyReplay(), hub, 60, true)
	hub.Flush()
	h := Handler(hub, p, Access{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}})
	for _, s := range [][7]string{
		{"GET", "/", "127.0.0.1:8080", "", "", "", ""},
		{"GET", "/api/state", "localhost:8080", "", "", "", ""},
		{"GET", "/api/events", "[::1]:8080", "", "", "", ""},
		{"GET", "/view.js", "127.0.0.1:8080", "", "", "Range: bytes=10-20", ""},
		{"GET", "/index.html", "127.0.0.1:8080", "", "", "If-None-Match: *", ""},
		{"POST", "/api/replay", "127.0.0.1:8080", "http://127.0.0.1:8080", "same-origin", "Content-Type: application/json", `{"action":"play"}`},
		{"POST", "/api/replay", "127.0.0.1:8080", "", "", "", `{"action":"seek","t":5}`},
		{"POST", "/api/replay", "127.0.0.1:8080", "", "", "", `{"action":"speed","speed":-1}`},
		{"POST", "/api/replay", "127.0.0.1:8080", "http://evil.example", "cross-site", "", `{"action":"pause"}`},
		{"POST", "/api/replay", "evil.example:8080", "http://evil.example:8080", "same-origin", "", `{"action":"pause"}`},
		{"GET", "/api/state", "evil.example:8080", "", "", "", ""},
		{"GET", "/api/events", "localhost.evil.example", "", "", "", ""},
		{"POST", "/api/replay", "127.0.0.1:8080", "", "", "Transfer-Encoding: chunked", "5000\r\n" + strings.Repeat(" ", 5000) + "\r\n0\r\n\r\n"},
		{"DELETE", "/api/replay", "127.0.0.1:8080", "null", "", "", ""},
		{"OPTIONS", "*", "127.0.0.1:8080", "", "", "", ""},
		{"GET", "/../../etc/passwd", "127.0.0.1:8080", "", "", "", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6])
	}
	allowed := map[int]bool{200: true, 204: true, 206: true, 301: true, 304: true, 307: true, 400: true, 403: true, 404: true,
		405: true, 412: true, 413: true, 416: true, 421: true, 503: true}
	f.Fuzz(func(t *testing.T, method, path, host, origin, fetchSite, header, body string) {
		var raw strings.Builder
		fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, host)
		if origin != "" {
			fmt.Fprintf(&raw, "Origin: %s\r\n", origin)
		}
		if fetchSite != "" {
			fmt.Fprintf(&raw, "Sec-Fetch-Site: %s\r\n", fetchSite)
		}
		if header != "" {
			fmt.Fprintf(&raw, "%s\r\n", header)
		}
		if !strings.Contains(strings.ToLower(header), "transfer-encoding") {
			fmt.Fprintf(&raw, "Content-Length: %d\r\n", len(body))
		}
		fmt.Fprintf(&raw, "\r\n%s", body)
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw.String())))
		if err != nil {
			return // the server would not have read it either
		}
		// An event stream ends when its request's context does: this one
		// has, so the handler returns after the snapshot.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req.WithContext(ctx))
		if !allowed[w.Code] {
			t.Fatalf("%s %s, Host %q: status %d (%.200q)", req.Method, req.URL, req.Host, w.Code, w.Body.String())
		}
		if !localHost(req.Host) && w.Code != http.StatusMisdirectedRequest {
			t.Fatalf("%s %s with the foreign Host %q: status %d, want 421", req.Method, req.URL, req.Host, w.Code)
		}
	})
}
