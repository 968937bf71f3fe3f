package journal

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ladder-eks/ladder/internal/executor"
	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/termtext"
)

// Prediction is what the rehearsal of the cluster, captured when the first
// run started, said the upgrade would do beyond its steps' times
// (Record.Rehearsal): how each step ends, the nodes each group replaces,
// the drains that stop it, and the cluster at the end. The rehearsal's
// executor keeps a journal of its own, so both sides are counted by the
// same code: a group's nodes below the hop's minor when the hop started
// and gone when its step ended.
type Prediction struct {
	// States are the steps the rehearsal reached, by journal key: done or
	// failed. A step it never reached is pending.
	States  map[string]string `json:"states"`
	Groups  []GroupCount      `json:"groups"`
	Blocked []Drain           `json:"blocked"`
	Final   State             `json:"final"`
}

// GroupCount is a node group's nodes replaced.
type GroupCount struct {
	Name     string `json:"name"`
	Replaced int    `json:"replaced"`
}

// Drain is a drain that stopped the upgrade: a pod whose
// PodDisruptionBudget allowed no disruption, on a node still to replace.
type Drain struct {
	Pod string `json:"pod"`
	PDB string `json:"pdb"`
}

// State is a cluster's versions: the control plane's minor, each add-on's
// version, and how many nodes run a kubelet of each minor; and its nodes
// by the kind of node group that made them (NodeType), which says where a
// difference in the count comes from. A journal written before Nodes
// existed has none.
type State struct {
	ControlPlane string            `json:"controlPlane"`
	Addons       map[string]string `json:"addons"`
	Kubelets     map[string]int    `json:"kubelets"`
	Nodes        map[string]int    `json:"nodes,omitempty"`
}

// Node types, as State.Nodes counts them: report's group types, and
// NodeOther for a node no node group of the cluster claims.
const NodeOther = "other"

// NodeType is the kind of node group a live node belongs to, by the labels
// each puts on its nodes: Karpenter's karpenter.sh/nodepool
// (sigs.k8s.io/karpenter/pkg/apis/v1 NodePoolLabelKey), Fargate's
// eks.amazonaws.com/compute-type=fargate, a managed node group's
// eks.amazonaws.com/nodegroup, and a self-managed group's
// alpha.eksctl.io/nodegroup-name (eksctl's, which the executor groups
// self-managed nodes by).
func NodeType(labels map[string]string) string {
	switch {
	case labels["karpenter.sh/nodepool"] != "":
		return report.GroupKarpenter
	case labels["eks.amazonaws.com/compute-type"] == "fargate" || labels["eks.amazonaws.com/fargate-profile"] != "":
		return report.GroupFargate
	case labels["eks.amazonaws.com/nodegroup"] != "":
		return report.GroupManaged
	case labels["alpha.eksctl.io/nodegroup-name"] != "":
		return report.GroupSelfManaged
	}
	return NodeOther
}

// Memory is a journal in memory: the one a rehearsal keeps for its
// prediction.
type Memory struct{ *journal }

// NewMemory starts an empty journal in memory.
func NewMemory(cluster, to string) *Memory {
	return &Memory{&journal{rec: &Record{Cluster: cluster, To: to, Entries: map[string]executor.Entry{}}, st: memStore{}}}
}

type memStore struct{}

func (memStore) load() (*Record, error) { return nil, nil }
func (memStore) save(*Record) error     { return nil }

// Predict is a rehearsal's prediction as the journal keeps it: rep is its
// report, rec the journal its executor kept.
func Predict(rep *report.Report, rec *Record) *Prediction {
	p := &Prediction{States: map[string]string{}, Groups: []GroupCount{}, Blocked: []Drain{}, Final: StateOf(rep)}
	replaced := map[string]int{}
	var groups []string
	for _, k := range rec.Keys() {
		e := rec.Entries[k]
		if !isStep(e) {
			continue
		}
		p.States[k] = e.State
		if name, ok := groupOf(k); ok {
			if _, seen := replaced[name]; !seen {
				groups = append(groups, name)
			}
			replaced[name] += e.Replaced
		}
		if e.BlockedPod != "" {
			p.Blocked = append(p.Blocked, Drain{Pod: e.BlockedPod, PDB: e.BlockedPDB})
		}
	}
	for _, name := range groups {
		p.Groups = append(p.Groups, GroupCount{Name: name, Replaced: replaced[name]})
	}
	return p
}

// StateOf is the cluster at the end of a rehearsal.
func StateOf(rep *report.Report) State {
	st := State{ControlPlane: rep.ControlPlane.Version, Addons: map[string]string{}, Kubelets: map[string]int{}, Nodes: map[string]int{}}
	for _, a := range rep.Addons {
		st.Addons[a.Name] = a.To
	}
	for _, n := range rep.Nodes {
		st.Kubelets[KubeletMinor(n.Version)]++
		typ := n.GroupType
		if typ == "" {
			typ = NodeOther
		}
		st.Nodes[typ]++
	}
	return st
}

// groupOf is the node group of a node-group step's key.
func groupOf(key string) (string, bool) {
	_, name, ok := strings.Cut(key, "/node-group/")
	return name, ok && !strings.Contains(name, "/")
}

// KubeletMinor is a kubelet version's minor as State.Kubelets counts it
// ("v1.31.14-eks-ecaa3a6" → "1.31"), or the version itself when it is not
// one.
func KubeletMinor(version string) string {
	m, err := kubeversion.Parse(version)
	if err != nil {
		return version
	}
	return m.String()
}

// Comparison is an upgrade as the journal recorded it against the
// rehearsal it made when it began: steps, nodes replaced per group, the
// drains that stopped it, the cluster at the end, and each step's time.
// Its JSON is documented in docs/upgrade.md.
type Comparison struct {
	Cluster string           `json:"cluster"`
	To      string           `json:"to"`
	Steps   []StepComparison `json:"steps"`
	Groups  []GroupDiff      `json:"groups"`
	Blocked struct {
		Predicted []Drain `json:"predicted"`
		Actual    []Drain `json:"actual"`
	} `json:"blocked"`
	Final struct {
		Predicted State  `json:"predicted"`
		Actual    *State `json:"actual"`
	} `json:"final"`
	// DurationRatio is the upgrade's time over the rehearsal's, for the
	// steps both have; nil when either is zero.
	DurationRatio *float64 `json:"durationRatio"`
	// Agree is true when the two agree on everything but timing — on
	// all it prints, the node count at the end included; Agreed and
	// Differed name what was compared (Dimensions), each in one of them,
	// and Differences says how and, for the node count, why.
	Agree       bool     `json:"agree"`
	Agreed      []string `json:"agreed"`
	Differed    []string `json:"differed"`
	Differences []string `json:"differences"`
}

// Dimensions are what a comparison compares, in the order it says them.
var Dimensions = []string{DimSteps, DimReplaced, DimDrains, DimVersions, DimNodes}

// The dimensions a comparison compares.
const (
	// DimSteps: each step's state, and the steps themselves.
	DimSteps = "every step"
	// DimReplaced: each node group's nodes replaced.
	DimReplaced = "the nodes replaced"
	// DimDrains: the drains that stopped the upgrade.
	DimDrains = "the drains"
	// DimVersions: the control plane's, the add-ons' and the kubelets'
	// minors at the end.
	DimVersions = "the versions at the end"
	// DimNodes: how many nodes there are at the end, by kind of node
	// group.
	DimNodes = "the node count at the end"
)

// StepComparison is one step in the rehearsal, the journal or both.
type StepComparison struct {
	Key              string  `json:"key"`
	Predicted        bool    `json:"predicted"`
	State            string  `json:"state"`
	PredictedSeconds float64 `json:"predictedSeconds"`
	ActualSeconds    float64 `json:"actualSeconds"`
	// EarlierSeconds is the part of ActualSeconds spent in runs stopped
	// before the step ended (StepStatus.EarlierSeconds).
	EarlierSeconds float64  `json:"earlierSeconds,omitempty"`
	Ratio          *float64 `json:"ratio"`
}

// GroupDiff is a node group's nodes replaced, predicted and actual.
type GroupDiff struct {
	Name      string `json:"name"`
	Predicted int    `json:"predicted"`
	Actual    int    `json:"actual"`
}

// Compare sets the record against its rehearsal. It fails when the
// journal holds no prediction (written by a Ladder before the comparison
// existed) or the upgrade has not recorded its outcome (still running or
// paused: compare after it finishes).
func (r *Record) Compare() (*Comparison, error) {
	if r.Prediction == nil || len(r.Rehearsal) == 0 {
		return nil, fmt.Errorf("the journal holds no rehearsal to compare with (it was begun by an older ladder upgrade)")
	}
	c := &Comparison{Cluster: r.Cluster, To: r.To, Steps: []StepComparison{}, Groups: []GroupDiff{}, Agreed: []string{}, Differed: []string{}, Differences: []string{}}
	c.Blocked.Predicted = r.Prediction.Blocked
	c.Blocked.Actual = []Drain{}
	c.Final.Predicted = r.Prediction.Final
	c.Final.Actual = r.Outcome
	differs := map[string]bool{}
	dim := DimSteps
	differ := func(format string, args ...any) {
		c.Differences = append(c.Differences, fmt.Sprintf(format, args...))
		differs[dim] = true
	}

	st := r.Status("", r.lastRecord())
	var predicted, actual float64
	for _, h := range st.Hops {
		for _, s := range h.Steps {
			sc := StepComparison{Key: s.Key, Predicted: s.RehearsedSeconds != nil, State: s.State, ActualSeconds: s.ElapsedSeconds, EarlierSeconds: s.EarlierSeconds}
			if sc.Predicted {
				sc.PredictedSeconds = *s.RehearsedSeconds
			}
			want := r.Prediction.States[s.Key]
			if want == "" {
				want = Pending
			}
			switch {
			case !sc.Predicted:
				differ("step %s was not in the rehearsal", s.Key)
			case s.State != want:
				differ("step %s is %s, the rehearsal's %s", s.Key, s.State, want)
			}
			if sc.Predicted && s.State == executor.StepDone {
				predicted += sc.PredictedSeconds
				actual += sc.ActualSeconds
				if sc.PredictedSeconds > 0 {
					ratio := sc.ActualSeconds / sc.PredictedSeconds
					sc.Ratio = &ratio
				}
			}
			if b := s.BlockedBy; b != nil {
				c.Blocked.Actual = append(c.Blocked.Actual, Drain{Pod: b.Pod, PDB: b.PDB})
			}
			c.Steps = append(c.Steps, sc)
		}
	}
	if predicted > 0 && actual > 0 {
		ratio := actual / predicted
		c.DurationRatio = &ratio
	}

	dim = DimReplaced
	replaced := map[string]int{}
	for k, e := range r.Entries {
		if name, ok := groupOf(k); ok {
			replaced[name] += e.Replaced
		}
	}
	for _, g := range r.Prediction.Groups {
		d := GroupDiff{Name: g.Name, Predicted: g.Replaced, Actual: replaced[g.Name]}
		if d.Predicted != d.Actual {
			differ("node group %s: %d nodes replaced, the rehearsal replaced %d", g.Name, d.Actual, d.Predicted)
		}
		c.Groups = append(c.Groups, d)
	}

	dim = DimDrains
	if !slices.Equal(sortedDrains(c.Blocked.Predicted), sortedDrains(c.Blocked.Actual)) {
		differ("drains that stopped the upgrade: %s, the rehearsal's: %s", drainList(c.Blocked.Actual), drainList(c.Blocked.Predicted))
	}

	dim = DimVersions
	if a := r.Outcome; a == nil {
		differ("the upgrade has not finished: no final state recorded")
		differs[DimNodes] = true
	} else {
		p := r.Prediction.Final
		if a.ControlPlane != p.ControlPlane {
			differ("control plane at %s, the rehearsal's at %s", a.ControlPlane, p.ControlPlane)
		}
		for _, name := range slices.Sorted(maps.Keys(p.Addons)) {
			if got, ok := a.Addons[name]; ok && got != p.Addons[name] {
				differ("add-on %s at %s, the rehearsal's at %s", name, got, p.Addons[name])
			}
		}
		// The minors the nodes run: the upgrade's outcome.
		if !slices.Equal(slices.Sorted(maps.Keys(a.Kubelets)), slices.Sorted(maps.Keys(p.Kubelets))) {
			differ("kubelets %s, the rehearsal's %s", KubeletList(a.Kubelets), KubeletList(p.Kubelets))
		}
		// How many nodes: a live cluster's count moves on its own
		// (Karpenter packing, a Fargate pod's node, a surge node on its
		// way out) where the rehearsal's is the settled one. Said, with
		// where the difference is, never passed over.
		dim = DimNodes
		if d := nodeCountDifference(*a, p); d != "" {
			differ("%s", d)
		}
	}
	for _, d := range Dimensions {
		if differs[d] {
			c.Differed = append(c.Differed, d)
		} else {
			c.Agreed = append(c.Agreed, d)
		}
	}
	c.Agree = len(c.Differences) == 0
	return c, nil
}

// nodeCountDifference says how the node count at the end differs, by kind
// of node group, and why each kind's count moves; "" when it does not.
func nodeCountDifference(a, p State) string {
	total := func(k map[string]int) (n int) {
		for _, c := range k {
			n += c
		}
		return n
	}
	at, pt := total(a.Kubelets), total(p.Kubelets)
	byType := a.Nodes != nil && p.Nodes != nil
	if at == pt && (!byType || maps.Equal(a.Nodes, p.Nodes)) {
		return ""
	}
	s := fmt.Sprintf("%d nodes (kubelets %s), the rehearsal's %d (%s)", at, KubeletList(a.Kubelets), pt, KubeletList(p.Kubelets))
	if !byType {
		return s + "; the journal does not say of which node groups (its end state was recorded by an older ladder)"
	}
	var parts []string
	for _, typ := range []string{report.GroupKarpenter, report.GroupFargate, report.GroupManaged, report.GroupSelfManaged, NodeOther} {
		if a.Nodes[typ] != p.Nodes[typ] {
			parts = append(parts, fmt.Sprintf("%s %d, the rehearsal's %d (%s)", nodeTypeName[typ], a.Nodes[typ], p.Nodes[typ], nodeTypeWhy[typ]))
		}
	}
	return s + ": " + strings.Join(parts, "; ")
}

// nodeTypeName and nodeTypeWhy name each kind of node group and why its
// node count moves on its own.
var (
	nodeTypeName = map[string]string{
		report.GroupKarpenter:   "Karpenter nodes",
		report.GroupFargate:     "Fargate nodes",
		report.GroupManaged:     "managed node group nodes",
		report.GroupSelfManaged: "self-managed nodes",
		NodeOther:               "nodes of no node group",
	}
	nodeTypeWhy = map[string]string{
		report.GroupKarpenter:   "Karpenter packs the pods onto as many nodes as its bin-packing picks, then consolidates them",
		report.GroupFargate:     "each Fargate pod runs on a node of its own: a pod added, restarted or still terminating is a node more or less",
		report.GroupManaged:     "a group's desired size, or a surge node not yet scaled in",
		report.GroupSelfManaged: "an Auto Scaling group's desired capacity, or an instance not yet terminated",
		NodeOther:               "nodes no node group of the capture claims",
	}
)

// lastRecord is when the journal was last written: the comparison of a
// finished upgrade does not depend on when it is asked for.
func (r *Record) lastRecord() (last time.Time) {
	for _, e := range r.Entries {
		if e.At.After(last) {
			last = e.At
		}
	}
	return last
}

func sortedDrains(ds []Drain) []Drain {
	out := slices.Clone(ds)
	slices.SortFunc(out, func(a, b Drain) int { return strings.Compare(a.Pod+"\x00"+a.PDB, b.Pod+"\x00"+b.PDB) })
	return slices.Compact(out)
}

func drainList(ds []Drain) string {
	if len(ds) == 0 {
		return "none"
	}
	var parts []string
	for _, d := range sortedDrains(ds) {
		parts = append(parts, fmt.Sprintf("pod %s (PDB %s)", d.Pod, d.PDB))
	}
	return strings.Join(parts, ", ")
}

// KubeletList is a State's kubelets as text: "11 at 1.31", minors in order.
func KubeletList(k map[string]int) string {
	if len(k) == 0 {
		return "none"
	}
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(k)) {
		parts = append(parts, fmt.Sprintf("%d at %s", k[m], m))
	}
	return strings.Join(parts, ", ")
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// WriteText writes the comparison as kubectl prints tables: the steps with
// their times, the groups with their nodes replaced, then the drains, the
// final state and the verdict.
func (c *Comparison) WriteText(w io.Writer) error {
	termtext.Fprintf(w, "Prediction vs reality: upgrade of %s to %s\n", c.Cluster, c.To)
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATE\tREHEARSED\tACTUAL\tRATIO")
	for _, s := range c.Steps {
		rehearsed, ratio := "-", "-"
		if s.Predicted {
			rehearsed = human(s.PredictedSeconds)
		}
		if s.Ratio != nil {
			ratio = fmt.Sprintf("%.2f", *s.Ratio)
		}
		termtext.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Key, s.State, rehearsed, human(s.ActualSeconds), ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range c.Steps {
		if s.EarlierSeconds > 0 {
			termtext.Fprintf(w, "%s resumed: ACTUAL is %s in earlier runs (to each one's last record) + %s in the last\n",
				s.Key, human(s.EarlierSeconds), human(s.ActualSeconds-s.EarlierSeconds))
		}
	}
	if len(c.Groups) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, "NODE GROUP\tREPLACED (REHEARSED)\tREPLACED (ACTUAL)")
		for _, g := range c.Groups {
			termtext.Fprintf(tw, "%s\t%d\t%d\n", g.Name, g.Predicted, g.Actual)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	termtext.Fprintf(w, "Drains that stopped it: rehearsed %s; actual %s.\n", drainList(c.Blocked.Predicted), drainList(c.Blocked.Actual))
	p := c.Final.Predicted
	termtext.Fprintf(w, "Rehearsed end: control plane %s, kubelets %s.\n", p.ControlPlane, KubeletList(p.Kubelets))
	if a := c.Final.Actual; a != nil {
		termtext.Fprintf(w, "Actual end:    control plane %s, kubelets %s.\n", a.ControlPlane, KubeletList(a.Kubelets))
	}
	ratio := "-"
	if c.DurationRatio != nil {
		ratio = fmt.Sprintf("%.2f", *c.DurationRatio)
	}
	if c.Agree {
		_, err := termtext.Fprintf(w, "Agreed on every step, the nodes replaced, the drains and the end state; time taken/rehearsed %s.\n", ratio)
		return err
	}
	termtext.Fprintf(w, "%s (time taken/rehearsed %s):\n", c.dimensions(true), ratio)
	for _, d := range c.Differences {
		termtext.Fprintf(w, "  - %s\n", d)
	}
	return nil
}

// dimensions says what agreed and what differed: "Agreed on every step
// and the drains; differs on the node count at the end".
func (c *Comparison) dimensions(capital bool) string {
	agreed, differs := "agreed on ", "differs on "
	if capital {
		agreed, differs = "Agreed on ", "Differs on "
	}
	if len(c.Agreed) == 0 {
		return differs + listOf(c.Differed)
	}
	return agreed + listOf(c.Agreed) + "; differs on " + listOf(c.Differed)
}

// listOf is "a", "a and b", "a, b and c".
func listOf(items []string) string {
	switch n := len(items); n {
	case 0:
		return "nothing"
	case 1:
		return items[0]
	default:
		return strings.Join(items[:n-1], ", ") + " and " + items[n-1]
	}
}

// Verdict is the comparison in one line.
func (c *Comparison) Verdict() string {
	if c.Agree {
		return "prediction vs reality: agreed on every step, the nodes replaced, the drains and the end state"
	}
	return fmt.Sprintf("prediction vs reality: %s: %d difference(s), first: %s", c.dimensions(false), len(c.Differences), c.Differences[0])
}
