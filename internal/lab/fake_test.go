package lab

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The lab's process handling is tested with the test binary itself
// standing in for every component: started with LADDER_LAB_FAKE=1 it
// reads the component's real flags, listens where the component would and
// answers its health endpoint, or fails the way the test asks. A real
// build takes 15 minutes; these tests take seconds.

const (
	fakeEnv = "LADDER_LAB_FAKE"
	// fakeExitEnv names a component that exits at once with an error.
	fakeExitEnv = "LADDER_LAB_FAKE_EXIT"
	// fakeHangEnv names a component that listens but never gets healthy.
	fakeHangEnv = "LADDER_LAB_FAKE_HANG"
	// fakeIgnoreTermEnv names a component that ignores SIGTERM.
	fakeIgnoreTermEnv = "LADDER_LAB_FAKE_IGNORE_TERM"
	// fakeExitOnFileEnv is "component=path": the component exits once the
	// file exists.
	fakeExitOnFileEnv = "LADDER_LAB_FAKE_EXIT_ON_FILE"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeComponent(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeComponent plays the component whose flags it is given.
func fakeComponent(argv []string) int {
	flags := map[string]string{}
	for _, a := range argv {
		k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		flags[k] = v
	}
	role := "idle"
	switch {
	case flags["listen-client-urls"] != "":
		role = string(Etcd)
	case flags["etcd-servers"] != "":
		role = string(APIServer)
	case flags["controllers"] != "":
		role = string(ControllerManager)
	case flags["server-address"] != "":
		role = string(Kwok)
	case flags["addr"] != "":
		role = string(AWSEndpoints)
	case flags["secure-port"] != "":
		role = string(Scheduler)
	}
	fmt.Printf("fake %s pid %d\n", role, os.Getpid())
	if os.Getenv(fakeExitEnv) == role {
		fmt.Printf("E1202 fake %s: failing on purpose\n", role)
		return 1
	}
	if os.Getenv(fakeIgnoreTermEnv) == role {
		signal.Ignore(syscall.SIGTERM)
	}
	healthy := os.Getenv(fakeHangEnv) != role
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	})
	listen := func(addr string) net.Listener {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Println(err) // as the real ones print it: "... bind: address already in use"
			os.Exit(1)
		}
		return ln
	}
	hostPort := func(url string) string { return url[strings.Index(url, "//")+2:] }
	switch role {
	case string(Etcd):
		go http.Serve(listen(hostPort(flags["listen-client-urls"])), handler)
		go http.Serve(listen(hostPort(flags["listen-peer-urls"])), handler)
		go http.Serve(listen(hostPort(flags["listen-metrics-urls"])), handler)
	case string(APIServer):
		ln := listen("127.0.0.1:" + flags["secure-port"])
		go func() {
			err := http.ServeTLS(ln, handler, flags["tls-cert-file"], flags["tls-private-key-file"])
			fmt.Println(err)
			os.Exit(1)
		}()
	case string(ControllerManager), string(Scheduler):
		srv := httptest.NewUnstartedServer(handler)
		srv.Listener = listen("127.0.0.1:" + flags["secure-port"])
		srv.StartTLS()
	case string(Kwok):
		go http.Serve(listen(flags["server-address"]), handler)
	case string(AWSEndpoints):
		go http.Serve(listen(flags["addr"]), handler)
	}
	if who, path, ok := strings.Cut(os.Getenv(fakeExitOnFileEnv), "="); ok && who == role {
		for {
			if _, err := os.Stat(path); err == nil {
				fmt.Printf("E1202 fake %s: lost its data directory\n", role)
				return 1
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for {
		time.Sleep(time.Hour)
	}
}
