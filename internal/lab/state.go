package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// State is a running lab as DIR/lab.json records it: what `ladder lab
// status` and `down` need to find and check every process without asking
// the one that started them.
type State struct {
	Kubernetes string    `json:"kubernetes"`
	Dir        string    `json:"dir"`
	Kubeconfig string    `json:"kubeconfig"`
	Server     string    `json:"server"`
	Started    time.Time `json:"started"`
	Binaries   string    `json:"binaries"`
	Ports      Ports     `json:"ports"`
	// AWS is the AWS endpoints, in a lab started with a scenario.
	AWS        *AWSState      `json:"aws,omitempty"`
	Components []ProcessState `json:"components"`
}

// AWSState is what a client of the lab's AWS endpoints needs to know.
type AWSState struct {
	// Endpoint is the one URL of EKS, Auto Scaling, EC2 and SSM.
	Endpoint string `json:"endpoint"`
	// Scenario is the scenario served: a built-in name or an absolute path.
	Scenario  string  `json:"scenario"`
	Region    string  `json:"region"`
	Cluster   string  `json:"cluster"`
	TimeScale float64 `json:"timeScale"`
}

// ProcessState is one started component. PID, Binary and StartTicks
// identify the process: `down` signals a pid only while it still runs
// Binary and started at StartTicks, so a pid the system has since given to
// another program is never signalled.
type ProcessState struct {
	Name       Component      `json:"name"`
	PID        int            `json:"pid"`
	Binary     string         `json:"binary"`
	StartTicks uint64         `json:"startTicks,omitempty"`
	Started    time.Time      `json:"started"`
	Ports      map[string]int `json:"ports"`
	Health     probe          `json:"health"`
	Log        string         `json:"log"`
}

// errNoState is a directory without lab.json.
var errNoState = errors.New("no lab state")

// readState reads DIR/lab.json.
func readState(l layout) (*State, error) {
	data, err := os.ReadFile(l.state())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoState
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", l.state(), err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s is not a lab state file (%v): remove it if no lab runs there, or use another --dir", l.state(), err)
	}
	return &st, nil
}

// writeState replaces DIR/lab.json in one rename, so a reader never sees
// half a file.
func writeState(l layout, st *State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := l.state() + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the lab state: %w", err)
	}
	if err := os.Rename(tmp, l.state()); err != nil {
		return fmt.Errorf("writing the lab state: %w", err)
	}
	return nil
}

// running lists the recorded processes that still run.
func running(st *State) []ProcessState {
	var out []ProcessState
	for _, p := range st.Components {
		if ok, _ := ours(p); ok {
			out = append(out, p)
		}
	}
	return out
}

// clean removes what a lab run leaves in its directory, except the logs,
// which explain how it ended.
func clean(l layout) error {
	var errs []error
	for _, p := range []string{l.state(), l.kubeconfig(), l.pki(), l.etcdData()} {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
