package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Bad flags stop `ladder view` with one line that says what to do, before
// anything is served or rehearsed.
func TestViewRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "workshop", "--addr", "0.0.0.0:0"}, `--addr "0.0.0.0:0" is not a loopback address`},
		{[]string{"--scenario", "workshop", "--addr", ":8080"}, "listens on every interface"},
		{[]string{"--scenario", "workshop", "--kubeconfig", "k"}, "--scenario replays a rehearsal and --kubeconfig watches a cluster"},
		{[]string{"--speed", "10"}, "--speed applies to a replay: add --scenario S"},
		{[]string{"--scenario", "workshop", "--speed", "0"}, "--speed 0: give virtual seconds per second"},
		{[]string{"--scenario", "no-such-scenario", "--addr", "127.0.0.1:0"}, "no-such-scenario"},
		{[]string{"--scenario", "workshop", "--allow-host", "http://bastion.example:8080"}, `--allow-host "http://bastion.example:8080": a lowercase RFC 1123 subdomain must consist of`},
		{[]string{"--scenario", "workshop", "--allow-host", "ok.example,bad_name"}, `--allow-host "bad_name": `},
	} {
		code, stdout, stderr := runLadder(append([]string{"view"}, c.args...)...)
		if code != 1 || !strings.Contains(stderr, c.want) || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("ladder view %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}
}

// `ladder view --scenario` serves the replay on the address it prints, and
// stops when its context ends.
func TestViewServesAReplay(t *testing.T) {
	cmd := newViewCommand()
	cmd.SetArgs([]string{"--scenario", "karpenter-drift", "--addr", "127.0.0.1:0", "--paused", "--allow-host", "Bastion.Example"})
	out, w := io.Pipe()
	cmd.SetOut(w)
	cmd.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no first line: %v", err)
	}
	go io.Copy(io.Discard, out)
	m := regexp.MustCompile(`^Serving the rehearsal of karpenter-drift \(succeeded, \S+ virtual, \d+ changes\) on (http://127\.0\.0\.1:\d+/) — Ctrl-C stops\.\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q", line)
	}
	resp, err := http.Get(m[1] + "api/state")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		State struct {
			Nodes map[string]json.RawMessage `json:"nodes"`
			Clock *struct {
				T      float64 `json:"t"`
				Paused bool    `json:"paused"`
			} `json:"clock"`
		} `json:"state"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.State.Nodes) == 0 || got.State.Clock == nil || got.State.Clock.T != 0 || !got.State.Clock.Paused {
		t.Fatalf("state: %d nodes, clock %+v; want the start of the replay, paused", len(got.State.Nodes), got.State.Clock)
	}
	// Only its own address, and the name given with --allow-host, are
	// answered: a DNS-rebinding page's name is not.
	for host, want := range map[string]int{"evil.example": http.StatusMisdirectedRequest, "bastion.example:9000": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodGet, m[1]+"api/state", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("view ended with %v", err)
	}
}
