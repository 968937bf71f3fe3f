//go:build unix

package lab

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeLab returns binaries that are all this test binary, and makes the
// processes the lab starts play components (see fake_test.go).
func fakeLab(t *testing.T) *Binaries {
	t.Helper()
	t.Setenv(fakeEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range Components {
		if err := os.Symlink(exe, filepath.Join(dir, string(c))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, StagesFile), []byte("# stages\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &Binaries{Release: Releases[0], Dir: dir}
}

// fakePIDs are the pids the fake components printed to their logs: every
// process a lab in dir started, even one whose start failed.
func fakePIDs(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	re := regexp.MustCompile(`(?m)^fake (\S+) pid (\d+)$`)
	for _, log := range logs {
		data, _ := os.ReadFile(log)
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			pid, _ := strconv.Atoi(m[2])
			out[m[1]] = pid
		}
	}
	return out
}

// assertGone fails unless every pid is gone (or a zombie about to be
// reaped) within a few seconds.
func assertGone(t *testing.T, pids map[string]int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for name, pid := range pids {
		for {
			id, err := identify(pid)
			if err != nil || id.zombie {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s (pid %d) still runs", name, pid)
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func up(t *testing.T, opts Options) (*Lab, string, error) {
	t.Helper()
	var out bytes.Buffer
	opts.Out = &out
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 20 * time.Second
	}
	lb, err := Up(context.Background(), opts)
	if lb != nil {
		t.Cleanup(func() { Down(context.Background(), DownOptions{Dir: opts.Dir}) })
	}
	return lb, out.String(), err
}

func TestUpStatusDown(t *testing.T) {
	bins := fakeLab(t)
	dir := t.TempDir()
	lb, out, err := up(t, Options{Dir: dir, Binaries: bins})
	if err != nil {
		t.Fatalf("Up: %v\n%s", err, out)
	}
	for _, c := range Components {
		if !strings.Contains(out, string(c)) || !strings.Contains(out, "healthy") {
			t.Errorf("Up's progress does not show %s healthy:\n%s", c, out)
		}
	}

	// The state file records every component with its own ports, all distinct.
	st, err := readState(layout{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Components) != len(Components) {
		t.Fatalf("lab.json records %d components, want %d", len(st.Components), len(Components))
	}
	seen := map[int]string{}
	for _, p := range st.Components {
		if p.PID <= 0 || p.Binary == "" || p.StartTicks == 0 || p.Log != filepath.Join(dir, "logs", string(p.Name)+".log") {
			t.Errorf("incomplete record %+v", p)
		}
		for name, port := range p.Ports {
			if other, dup := seen[port]; dup {
				t.Errorf("port %d used by %s and %s %s", port, other, p.Name, name)
			}
			seen[port] = string(p.Name) + " " + name
		}
	}
	if len(seen) != 7 {
		t.Errorf("the lab uses %d ports, want 7: %v", len(seen), seen)
	}
	cfg, err := lb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != st.Server || cfg.BearerToken == "" || len(cfg.CAData) == 0 {
		t.Errorf("kubeconfig: host %q token %t CA %t; want %s, a token and the CA", cfg.Host, cfg.BearerToken != "", len(cfg.CAData) > 0, st.Server)
	}

	status, err := GetStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !status.Healthy() || status.Stale() {
		t.Errorf("status: healthy %t stale %t: %+v", status.Healthy(), status.Stale(), status.Components)
	}

	// A second up in the same directory refuses and says how to stop it.
	_, _, err = up(t, Options{Dir: dir, Binaries: bins})
	var running *AlreadyRunningError
	if !errors.As(err, &running) || !strings.Contains(err.Error(), "ladder lab down --dir "+dir) {
		t.Errorf("second Up: %v; want AlreadyRunningError naming `ladder lab down --dir %s`", err, dir)
	}

	pids := fakePIDs(t, dir)
	var downOut bytes.Buffer
	if err := Down(context.Background(), DownOptions{Dir: dir, Out: &downOut}); err != nil {
		t.Fatalf("Down: %v", err)
	}
	assertGone(t, pids)
	if _, err := os.Stat(filepath.Join(dir, "lab.json")); !os.IsNotExist(err) {
		t.Errorf("lab.json still there after Down: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "kube-apiserver.log")); err != nil {
		t.Errorf("Down removed the logs: %v", err)
	}
	for _, c := range Components {
		if !strings.Contains(downOut.String(), "stopped "+string(c)) {
			t.Errorf("Down does not say it stopped %s:\n%s", c, downOut.String())
		}
	}
	// Down again: nothing to do, and no error.
	downOut.Reset()
	if err := Down(context.Background(), DownOptions{Dir: dir, Out: &downOut}); err != nil || !strings.Contains(downOut.String(), "no lab in") {
		t.Errorf("second Down: %v, %q; want success and \"no lab in\"", err, downOut.String())
	}
	var nolab *NoLabError
	if _, err := GetStatus(dir); !errors.As(err, &nolab) {
		t.Errorf("status after down: %v, want NoLabError", err)
	}
}

// Every way a start can fail names the component, shows its log and
// leaves nothing running and no state file.
func TestUpFailures(t *testing.T) {
	cases := []struct {
		name      string
		env       map[string]string
		ports     func(held int) func(int) ([]int, error)
		timeout   time.Duration
		component Component
		want      []string // in the error
	}{
		{
			name:      "component exits during startup",
			env:       map[string]string{fakeExitEnv: string(APIServer)},
			component: APIServer,
			want:      []string{"kube-apiserver exited during startup (exit status 1)", "E1202 fake kube-apiserver: failing on purpose", "logs/kube-apiserver.log"},
		},
		{
			name:      "a controller exits after the apiserver is up",
			env:       map[string]string{fakeExitEnv: string(ControllerManager)},
			component: ControllerManager,
			want:      []string{"kube-controller-manager exited during startup", "failing on purpose"},
		},
		{
			// Another program binds the scheduler's port between the lab
			// picking it and the scheduler binding it.
			name: "bind race",
			ports: func(held int) func(int) ([]int, error) {
				return func(n int) ([]int, error) {
					ps, err := freeLoopbackPorts(n)
					if err == nil {
						ps[4] = held // Ports.Scheduler
					}
					return ps, err
				}
			},
			component: Scheduler,
			want:      []string{"kube-scheduler exited during startup", "address already in use"},
		},
		{
			name:      "never healthy",
			env:       map[string]string{fakeHangEnv: string(Kwok)},
			timeout:   time.Second,
			component: Kwok,
			want:      []string{"kwok was not healthy within 1s", "503 Service Unavailable"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bins := fakeLab(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			held, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			opts := Options{Dir: t.TempDir(), Binaries: bins, ReadyTimeout: tc.timeout}
			if tc.ports != nil {
				opts.freePorts = tc.ports(held.Addr().(*net.TCPAddr).Port)
			}
			lb, _, err := up(t, opts)
			if lb != nil || err == nil {
				t.Fatalf("Up succeeded; want %s to fail", tc.component)
			}
			var se *StartupError
			if !errors.As(err, &se) || se.Component != tc.component {
				t.Fatalf("Up: %v; want a StartupError of %s", err, tc.component)
			}
			first, _, _ := strings.Cut(err.Error(), "\n")
			if !strings.Contains(first, string(tc.component)) || !strings.Contains(first, "other processes were stopped") {
				t.Errorf("first line %q does not name %s and say the rest was stopped", first, tc.component)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			pids := fakePIDs(t, opts.Dir)
			if len(pids) == 0 {
				t.Fatal("no component started")
			}
			assertGone(t, pids)
			if _, err := os.Stat(filepath.Join(opts.Dir, "lab.json")); !os.IsNotExist(err) {
				t.Errorf("lab.json left after a failed start: %v", err)
			}
		})
	}
}

func TestUpPortInUse(t *testing.T) {
	bins := fakeLab(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	_, _, err = up(t, Options{Dir: dir, Binaries: bins, APIServerPort: port})
	var inUse *PortInUseError
	if !errors.As(err, &inUse) || inUse.Port != port {
		t.Fatalf("Up: %v; want PortInUseError for %d", err, port)
	}
	want := "kube-apiserver port " + strconv.Itoa(port) + " on 127.0.0.1 is in use"
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--port") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q: want one line starting %q and naming --port", err, want)
	}
	if pids := fakePIDs(t, dir); len(pids) != 0 {
		t.Errorf("processes started although the port was taken: %v", pids)
		assertGone(t, pids)
	}

	// The same port, free, is used.
	held.Close()
	lb, out, err := up(t, Options{Dir: dir, Binaries: bins, APIServerPort: port})
	if err != nil {
		t.Fatalf("Up on a free --port: %v\n%s", err, out)
	}
	if lb.Ports.APIServer != port || lb.Server != "https://127.0.0.1:"+strconv.Itoa(port) {
		t.Errorf("apiserver at %s (port %d), want port %d", lb.Server, lb.Ports.APIServer, port)
	}
}

// A lab whose processes died without `down` (killed, machine restarted):
// status says stale, up cleans it and starts anew, down cleans it.
func TestStaleLab(t *testing.T) {
	bins := fakeLab(t)
	for _, next := range []string{"up", "down"} {
		t.Run(next, func(t *testing.T) {
			dir := t.TempDir()
			if _, out, err := up(t, Options{Dir: dir, Binaries: bins}); err != nil {
				t.Fatalf("Up: %v\n%s", err, out)
			}
			pids := fakePIDs(t, dir)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			assertGone(t, pids)

			st, err := GetStatus(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Stale() || st.Healthy() {
				t.Fatalf("status after the processes died: stale %t healthy %t", st.Stale(), st.Healthy())
			}
			for _, c := range st.Components {
				if c.Running || c.Problem != "not running" {
					t.Errorf("%s: running %t problem %q; want not running", c.Name, c.Running, c.Problem)
				}
			}

			switch next {
			case "up":
				_, out, err := up(t, Options{Dir: dir, Binaries: bins})
				if err != nil {
					t.Fatalf("Up over a stale lab: %v\n%s", err, out)
				}
				if !strings.Contains(out, "cleaned a stale lab in "+dir) {
					t.Errorf("Up does not say it cleaned the stale lab:\n%s", out)
				}
				st, err := GetStatus(dir)
				if err != nil || !st.Healthy() {
					t.Errorf("the new lab: %v %+v", err, st)
				}
			case "down":
				var out bytes.Buffer
				if err := Down(context.Background(), DownOptions{Dir: dir, Out: &out}); err != nil {
					t.Fatalf("Down of a stale lab: %v", err)
				}
				if !strings.Contains(out.String(), "was stale") {
					t.Errorf("Down does not say the lab was stale:\n%s", out.String())
				}
				if _, err := os.Stat(filepath.Join(dir, "lab.json")); !os.IsNotExist(err) {
					t.Errorf("lab.json left: %v", err)
				}
			}
		})
	}
}

// Down never signals a pid that now belongs to another program, or to
// another run of the same binary.
func TestDownSparesReusedPIDs(t *testing.T) {
	t.Setenv(fakeEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	other := exec.Command(exe) // an idle fake: some unrelated process
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- other.Wait() }()
	defer other.Process.Kill()
	id, err := identify(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}

	for name, rec := range map[string]ProcessState{
		"another binary":     {Name: Etcd, PID: other.Process.Pid, Binary: "/usr/local/bin/etcd"},
		"another start time": {Name: Etcd, PID: other.Process.Pid, Binary: exe, StartTicks: id.startTicks + 1},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeState(layout{dir}, &State{Dir: dir, Components: []ProcessState{rec}}); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Down(context.Background(), DownOptions{Dir: dir, Out: &out}); err != nil {
				t.Fatalf("Down: %v", err)
			}
			if !strings.Contains(out.String(), "was not running") {
				t.Errorf("Down output:\n%s\nwant \"was not running\"", out.String())
			}
			select {
			case err := <-exited:
				t.Fatalf("Down signalled a process that is not the lab's: %v", err)
			default:
			}
		})
	}
	// The positive control: with its real identity the process is the
	// lab's, and Down stops it.
	dir := t.TempDir()
	rec := ProcessState{Name: Etcd, PID: other.Process.Pid, Binary: exe, StartTicks: id.startTicks}
	if err := writeState(layout{dir}, &State{Dir: dir, Components: []ProcessState{rec}}); err != nil {
		t.Fatal(err)
	}
	if err := Down(context.Background(), DownOptions{Dir: dir}); err != nil {
		t.Fatalf("Down: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("Down did not stop the recorded process")
	}
}

// A process that ignores SIGTERM is killed after the grace period.
func TestDownKillsAfterGrace(t *testing.T) {
	bins := fakeLab(t)
	t.Setenv(fakeIgnoreTermEnv, string(Etcd))
	dir := t.TempDir()
	if _, out, err := up(t, Options{Dir: dir, Binaries: bins}); err != nil {
		t.Fatalf("Up: %v\n%s", err, out)
	}
	pids := fakePIDs(t, dir)
	began := time.Now()
	if err := Down(context.Background(), DownOptions{Dir: dir, StopTimeout: 300 * time.Millisecond}); err != nil {
		t.Fatalf("Down: %v", err)
	}
	assertGone(t, pids)
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Errorf("Down took %s: etcd ignores SIGTERM, so it should have waited the 300ms grace", took)
	}
}

func TestUpRefusesCorruptState(t *testing.T) {
	bins := fakeLab(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lab.json"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := up(t, Options{Dir: dir, Binaries: bins})
	if err == nil || !strings.Contains(err.Error(), "is not a lab state file") {
		t.Errorf("Up: %v; want it to refuse the corrupt lab.json", err)
	}
	if pids := fakePIDs(t, dir); len(pids) != 0 {
		t.Errorf("processes started: %v", pids)
		assertGone(t, pids)
	}
}

func TestLookupRelease(t *testing.T) {
	for in, want := range map[string]string{"": "v1.37.2", "1.37": "v1.37.2", "v1.36": "v1.36.3", "1.36.3": "v1.36.3"} {
		r, err := LookupRelease(in)
		if err != nil || r.Kubernetes != want {
			t.Errorf("LookupRelease(%q) = %s, %v; want %s", in, r.Kubernetes, err, want)
		}
	}
	if _, err := LookupRelease("1.29"); err == nil || !strings.Contains(err.Error(), "use one of 1.37, 1.36") {
		t.Errorf("LookupRelease(1.29): %v; want the known minors", err)
	}
	if got := Releases[0].Key(); got != "k8s-v1.37.2_etcd-v3.6.16_kwok-v0.8.0" {
		t.Errorf("Key = %s", got)
	}
}

// Up deletes DIR/etcd, DIR/pki and DIR/kubeconfig of a previous lab: it
// must refuse a directory of the user's that is not a lab's.
func TestUpRefusesForeignDirectory(t *testing.T) {
	bins := fakeLab(t)
	dir := t.TempDir()
	precious := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(precious, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := up(t, Options{Dir: dir, Binaries: bins})
	if err == nil || !strings.Contains(err.Error(), "is not empty and holds no lab") {
		t.Errorf("Up: %v; want it to refuse a foreign directory", err)
	}
	if data, _ := os.ReadFile(precious); string(data) != "mine" {
		t.Errorf("Up touched %s: %q", precious, data)
	}
	if pids := fakePIDs(t, dir); len(pids) != 0 {
		t.Errorf("processes started: %v", pids)
		assertGone(t, pids)
	}
}

// triggerWriter creates a file when the output shows a line.
type triggerWriter struct {
	bytes.Buffer
	line, file string
}

func (w *triggerWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.line)) {
		os.WriteFile(w.file, nil, 0o644)
	}
	return w.Buffer.Write(p)
}

// etcd dying while the controllers start is noticed at once, not after
// the controllers' timeout, and blamed on etcd.
func TestUpNoticesAnEarlierComponentExiting(t *testing.T) {
	bins := fakeLab(t)
	trigger := filepath.Join(t.TempDir(), "trigger")
	t.Setenv(fakeExitOnFileEnv, string(Etcd)+"="+trigger)
	t.Setenv(fakeHangEnv, string(Kwok)) // keeps the last wave waiting
	dir := t.TempDir()
	out := &triggerWriter{line: "kube-apiserver           healthy", file: trigger}
	_, err := Up(context.Background(), Options{Dir: dir, Binaries: bins, Out: out, ReadyTimeout: 30 * time.Second})
	var se *StartupError
	if !errors.As(err, &se) || se.Component != Etcd || !strings.Contains(err.Error(), "lost its data directory") {
		t.Fatalf("Up: %v; want etcd's exit with its log\n%s", err, out.String())
	}
	assertGone(t, fakePIDs(t, dir))
}

// A lab started with AWS endpoints runs `ladder lab aws-serve` as its last
// component: started with the lab's directory, the scenario and a port of
// its own, recorded and checked like the others, stopped first by down. A
// failing aws-serve fails the start like any component.
func TestUpWithAWSEndpoints(t *testing.T) {
	bins := fakeLab(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	aws := &AWSOptions{Scenario: "workshop", Region: "us-west-2", Cluster: "eksworkshop-eksctl", TimeScale: 600, Ladder: exe}
	dir := t.TempDir()
	port := freePort(t)
	lb, out, err := up(t, Options{Dir: dir, Binaries: bins, AWS: aws, APIServerPort: port})
	if err != nil {
		t.Fatalf("Up: %v\n%s", err, out)
	}
	if !strings.Contains(out, string(AWSEndpoints)) {
		t.Errorf("Up's progress does not show %s:\n%s", AWSEndpoints, out)
	}
	st, err := readState(layout{dir})
	if err != nil {
		t.Fatal(err)
	}
	last := st.Components[len(st.Components)-1]
	if len(st.Components) != len(Components)+1 || last.Name != AWSEndpoints {
		t.Fatalf("lab.json records %d components ending with %s; want %d ending with %s", len(st.Components), last.Name, len(Components)+1, AWSEndpoints)
	}
	endpoint := "http://127.0.0.1:" + strconv.Itoa(last.Ports["http"])
	want := AWSState{Endpoint: endpoint, Scenario: "workshop", Region: "us-west-2", Cluster: "eksworkshop-eksctl", TimeScale: 600}
	if st.AWS == nil || *st.AWS != want || lb.AWS == nil || *lb.AWS != want {
		t.Errorf("lab.json's aws %+v, Up's %+v; want %+v", st.AWS, lb.AWS, want)
	}
	if last.Ports["http"] == 0 || last.Ports["http"] == port || last.Health.URL != endpoint+"/healthz" || last.Log != filepath.Join(dir, "logs", "aws-serve.log") {
		t.Errorf("record %+v: want its own port, health %s/healthz and log logs/aws-serve.log", last, endpoint)
	}
	log, _ := os.ReadFile(last.Log)
	for _, arg := range []string{"lab aws-serve", "--lab-dir=" + dir, "--scenario=workshop", "--addr=127.0.0.1:" + strconv.Itoa(last.Ports["http"]), "--time-scale=600"} {
		if !strings.Contains(string(log), arg) {
			t.Errorf("aws-serve's command line lacks %q:\n%s", arg, log)
		}
	}
	status, err := GetStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !status.Healthy() || len(status.Components) != len(Components)+1 {
		t.Errorf("status: healthy %t, %d components; want all %d healthy", status.Healthy(), len(status.Components), len(Components)+1)
	}
	pids := fakePIDs(t, dir)
	var downOut bytes.Buffer
	if err := Down(context.Background(), DownOptions{Dir: dir, Out: &downOut}); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if first, _, _ := strings.Cut(downOut.String(), "\n"); !strings.Contains(first, "stopped "+string(AWSEndpoints)) {
		t.Errorf("Down's first line %q, want it to stop %s first", first, AWSEndpoints)
	}
	assertGone(t, pids)

	t.Setenv(fakeExitEnv, string(AWSEndpoints))
	_, _, err = up(t, Options{Dir: dir, Binaries: bins, AWS: aws})
	var se *StartupError
	if !errors.As(err, &se) || se.Component != AWSEndpoints {
		t.Fatalf("Up with a failing aws-serve: %v; want a StartupError of %s", err, AWSEndpoints)
	}
	assertGone(t, fakePIDs(t, dir))
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
