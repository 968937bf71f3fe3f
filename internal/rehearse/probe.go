package rehearse

import (
	"fmt"
	"strings"
	"time"

	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// probe is the seed's health-check loop (workshop §1.3: `while true; do curl
// -s $UI_WEB; echo; date; sleep 1; done`): every virtual second a request
// walks the path of spec.probe and succeeds when every workload on it has a
// Ready pod.
type probe struct {
	spec    *scenario.Probe
	seconds int
	failed  int
	outages []report.Outage
	down    bool
}

// startProbe samples the probe every virtual second from now on.
func (r *run) startProbe(spec *scenario.Probe) *probe {
	p := &probe{spec: spec}
	r.eng.Every(time.Second, func() { r.sampleProbe(p) })
	return p
}

func (r *run) sampleProbe(p *probe) {
	p.seconds++
	ready := map[string]int{}
	for _, w := range r.kube.Workloads() {
		ready[w.Kind+" "+w.Namespace+"/"+w.Name] = w.Ready
	}
	var missing []string
	for _, w := range p.spec.Requires {
		ns := w.Namespace
		if ns == "" {
			ns = "default"
		}
		name := w.Kind + " " + ns + "/" + w.Name
		if ready[name] == 0 {
			missing = append(missing, name)
		}
	}
	// A request at second t stands for the second [t, t+1).
	now := seconds(r.eng.Elapsed())
	if len(missing) == 0 {
		p.down = false
		return
	}
	p.failed++
	if r.currentPhase >= 0 {
		r.phases[r.currentPhase].ProbeFailedSeconds++
	}
	if !p.down {
		p.down = true
		p.outages = append(p.outages, report.Outage{Start: now, End: now + 1, Missing: missing})
		r.event("Warning", "ProbeFailed", fmt.Sprintf("probe %s fails: no Ready pod in %s", p.spec.Name, strings.Join(missing, ", ")))
	} else {
		p.outages[len(p.outages)-1].End = now + 1
	}
}

// result is the probe's part of the report.
func (p *probe) result() *report.Probe {
	out := &report.Probe{Name: p.spec.Name, Seconds: float64(p.seconds), FailedSeconds: float64(p.failed), Outages: p.outages}
	if out.Outages == nil {
		out.Outages = []report.Outage{}
	}
	return out
}
