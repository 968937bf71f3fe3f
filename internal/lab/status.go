package lab

import (
	"context"
	"fmt"
	"sync"
)

// ComponentStatus is one component as Status finds it.
type ComponentStatus struct {
	ProcessState
	Running bool
	Healthy bool
	// Problem says why it is not healthy.
	Problem string
}

// Status is a lab as GetStatus finds it: each recorded process checked to
// be still the one Up started, and asked for its health.
type Status struct {
	Lab        *Lab
	Components []ComponentStatus
}

// Healthy reports whether every component runs and answers.
func (s *Status) Healthy() bool {
	for _, c := range s.Components {
		if !c.Healthy {
			return false
		}
	}
	return len(s.Components) > 0
}

// Stale reports whether none of the lab's processes runs any more.
func (s *Status) Stale() bool {
	for _, c := range s.Components {
		if c.Running {
			return false
		}
	}
	return true
}

// NoLabError is a directory without a lab.
type NoLabError struct{ Dir string }

func (e *NoLabError) Error() string {
	return fmt.Sprintf("no lab in %s: start one with `ladder lab up --dir %s`", e.Dir, e.Dir)
}

// GetStatus checks the lab in dir (DefaultDir if empty), the components
// in parallel. A directory without lab.json is a NoLabError.
func GetStatus(dir string) (*Status, error) {
	l, st, err := readLab(dir)
	if err != nil {
		return nil, err
	}
	out := &Status{Lab: &Lab{State: *st, l: l}}
	results := make([]ComponentStatus, len(st.Components))
	client := newProber(l)
	var wg sync.WaitGroup
	for i, p := range st.Components {
		wg.Go(func() {
			cs := ComponentStatus{ProcessState: p}
			cs.Running, _ = ours(p)
			switch {
			case !cs.Running:
				cs.Problem = "not running"
			default:
				if err := client.check(context.Background(), p.Health); err != nil {
					cs.Problem = err.Error()
				} else {
					cs.Healthy = true
				}
			}
			results[i] = cs
		})
	}
	wg.Wait()
	out.Components = results
	return out, nil
}
