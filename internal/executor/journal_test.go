package executor

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/ladder-eks/ladder/internal/kubeversion"
	"github.com/ladder-eks/ladder/internal/plan"
	"github.com/ladder-eks/ladder/internal/twin/mng"
)

// memJournal is a journal in memory; kill, when set, is called after each
// Put with the key and entry (the test's kill -9).
type memJournal struct {
	mu      sync.Mutex
	entries map[string]Entry
	kill    func(key string, e Entry)
}

func (j *memJournal) Get(key string) (Entry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.entries[key]
	return e, ok
}

func (j *memJournal) Put(key string, e Entry) error {
	j.mu.Lock()
	if j.entries == nil {
		j.entries = map[string]Entry{}
	}
	j.entries[key] = e
	j.mu.Unlock()
	if j.kill != nil {
		j.kill(key, e)
	}
	return nil
}

// countingEKS counts the calls that change node groups, and keeps the
// update ids UpdateNodegroupVersion returned.
type countingEKS struct {
	EKS
	LaunchTemplateAPI
	calls   map[string]int
	updates []string
}

func (c *countingEKS) UpdateNodegroupVersion(ctx context.Context, in *eks.UpdateNodegroupVersionInput, o ...func(*eks.Options)) (*eks.UpdateNodegroupVersionOutput, error) {
	c.calls["UpdateNodegroupVersion"]++
	out, err := c.EKS.UpdateNodegroupVersion(ctx, in, o...)
	if err == nil {
		c.updates = append(c.updates, aws.ToString(out.Update.Id))
	}
	return out, err
}

func (c *countingEKS) CreateNodegroup(ctx context.Context, in *eks.CreateNodegroupInput, o ...func(*eks.Options)) (*eks.CreateNodegroupOutput, error) {
	c.calls["CreateNodegroup"]++
	return c.EKS.CreateNodegroup(ctx, in, o...)
}

func (c *countingEKS) DeleteNodegroup(ctx context.Context, in *eks.DeleteNodegroupInput, o ...func(*eks.Options)) (*eks.DeleteNodegroupOutput, error) {
	c.calls["DeleteNodegroup"]++
	return c.EKS.DeleteNodegroup(ctx, in, o...)
}

func (c *countingEKS) CreateLaunchTemplateVersion(ctx context.Context, in *ec2.CreateLaunchTemplateVersionInput, o ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	c.calls["CreateLaunchTemplateVersion"]++
	return c.LaunchTemplateAPI.CreateLaunchTemplateVersion(ctx, in, o...)
}

// TestJournalResume: a run killed at each operation of a hop — after EKS
// accepted the custom-AMI group's update, after the green group was
// created, after blue's deletion began — and started again with the same
// journal finishes the hop with every operation made exactly once: the
// update is waited on by its id, the launch template version is not made
// again, green is not created twice nor blue deleted twice; a third run
// finds every step done and changes nothing.
func TestJournalResume(t *testing.T) {
	for _, killAt := range []string{"custom/UpdateNodegroupVersion", "blue/CreateNodegroup", "blue/DeleteNodegroup"} {
		t.Run(strings.ReplaceAll(killAt, "/", "-"), func(t *testing.T) {
			tw := newManagedTwin(t)
			api := &countingEKS{EKS: tw.ex.Ports.EKS, LaunchTemplateAPI: tw.ex.Ports.LaunchTemplates, calls: map[string]int{}}
			tw.ex.Ports.EKS, tw.ex.Ports.LaunchTemplates = api, api
			tw.ex.Groups = map[string]Group{"blue": {Green: &Green{Name: "green"}}}
			v130 := kubeversion.MustParse("1.30")
			p := plan.Plan{Hops: []plan.Hop{{From: v130, To: v131, Steps: []plan.Step{
				{Kind: plan.NodeGroup, Name: "custom", From: "1.30", To: "1.31", Strategy: "in-place"},
				{Kind: plan.NodeGroup, Name: "blue", From: "1.30", To: "1.31", Strategy: "blue-green"},
			}}}}
			j := &memJournal{}
			tw.ex.Journal = j
			ctx, kill := context.WithCancel(context.Background())
			j.kill = func(key string, e Entry) {
				if strings.HasSuffix(key, killAt) && e.State == Called {
					kill()
				}
			}
			if err := tw.ex.Run(ctx, p); err == nil {
				t.Fatal("the killed run finished")
			}
			j.kill = nil
			if err := tw.ex.Run(context.Background(), p); err != nil {
				t.Fatalf("the resumed run: %v", err)
			}
			want := map[string]int{"UpdateNodegroupVersion": 1, "CreateLaunchTemplateVersion": 1, "CreateNodegroup": 1, "DeleteNodegroup": 1}
			if !maps.Equal(api.calls, want) {
				t.Errorf("calls %v, want %v", api.calls, want)
			}
			for _, g := range []string{"custom", "green"} {
				if st, _ := tw.groups.Status(g); st.Status != mng.StatusActive || len(tw.nodes(g)) == 0 {
					t.Errorf("group %s: %s with %d nodes", g, st.Status, len(tw.nodes(g)))
				}
				for _, n := range tw.nodes(g) {
					if !strings.HasPrefix(n.Status.NodeInfo.KubeletVersion, "v1.31.") {
						t.Errorf("node %s of %s at %s", n.Name, g, n.Status.NodeInfo.KubeletVersion)
					}
				}
			}
			if st, _ := tw.groups.Status("blue"); st.Status != mng.StatusDeleted {
				t.Errorf("blue is %s", st.Status)
			}
			// Each group's two nodes were outdated when the hop first
			// started and gone when its step ended, whichever run ended it.
			for _, g := range []string{"custom", "blue"} {
				before, _ := j.Get("1.31/node-group/" + g + "/" + OutdatedOp)
				if e, _ := j.Get("1.31/node-group/" + g); len(before.Outdated) != 2 || e.Replaced != 2 {
					t.Errorf("step %s: outdated %q, replaced %d; want 2 and 2", g, before.Outdated, e.Replaced)
				}
			}
			before := len(tw.rec.lines)
			if err := tw.ex.Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(api.calls, want) {
				t.Errorf("a run after the hop was done called %v", api.calls)
			}
			var skipped []string
			for _, l := range tw.rec.lines[before:] {
				if strings.Contains(l, "StepSkipped") {
					skipped = append(skipped, l[strings.Index(l, ": ")+2:])
				}
			}
			if !slices.Equal(skipped, []string{"1.31/node-group/custom: done in an earlier run (journal)", "1.31/node-group/blue: done in an earlier run (journal)"}) {
				t.Errorf("the third run: %q", tw.rec.lines[before:])
			}
		})
	}
}

// TestJournalKeepsTheFirstRunsOutdatedNodes: a hop resumed after its
// first run replaced a node counts that node as replaced — the outdated
// nodes are the first run's, not what the resumed run finds.
func TestJournalKeepsTheFirstRunsOutdatedNodes(t *testing.T) {
	tw := newManagedTwin(t)
	p := plan.Plan{Hops: []plan.Hop{{From: kubeversion.MustParse("1.30"), To: v131, Steps: []plan.Step{
		{Kind: plan.NodeGroup, Name: "custom", From: "1.30", To: "1.31", Strategy: "in-place"},
	}}}}
	var names []string
	for _, n := range tw.nodes("custom") {
		names = append(names, n.Name)
	}
	first := append(slices.Sorted(slices.Values(names)), "ip-10-0-0-1.replaced-by-the-first-run")
	j := &memJournal{entries: map[string]Entry{
		"1.31/node-group/custom":               {State: StepFailed},
		"1.31/node-group/custom/" + OutdatedOp: {State: Called, Outdated: first},
	}}
	tw.ex.Journal = j
	if err := tw.ex.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	before, _ := j.Get("1.31/node-group/custom/" + OutdatedOp)
	if e, _ := j.Get("1.31/node-group/custom"); !slices.Equal(before.Outdated, first) || e.Replaced != 3 {
		t.Errorf("the resumed hop kept outdated %q, replaced %d; want the first run's %q and 3", before.Outdated, e.Replaced, first)
	}
}

// TestJournalResumeAfterALostRecord: a run killed after EKS accepted the
// custom-AMI group's update but before the journal recorded it (the entry
// stays calling) makes the call again on resume, with the client request
// token recorded before the first: EKS answers with the update it made
// then, EC2 with the launch template version it made then, and the hop
// ends with one update and one new version.
func TestJournalResumeAfterALostRecord(t *testing.T) {
	tw := newManagedTwin(t)
	api := &countingEKS{EKS: tw.ex.Ports.EKS, LaunchTemplateAPI: tw.ex.Ports.LaunchTemplates, calls: map[string]int{}}
	tw.ex.Ports.EKS, tw.ex.Ports.LaunchTemplates = api, api
	p := plan.Plan{Hops: []plan.Hop{{From: kubeversion.MustParse("1.30"), To: v131, Steps: []plan.Step{
		{Kind: plan.NodeGroup, Name: "custom", From: "1.30", To: "1.31", Strategy: "in-place"},
	}}}}
	j := &lossyJournal{lose: "1.31/node-group/custom/UpdateNodegroupVersion"}
	tw.ex.Journal = j
	ctx, kill := context.WithCancel(context.Background())
	j.kill = kill
	if err := tw.ex.Run(ctx, p); err == nil {
		t.Fatal("the killed run finished")
	}
	calling, _ := j.Get(j.lose)
	if calling.State != Calling || !strings.HasPrefix(calling.Token, "ladder-") {
		t.Fatalf("the killed run left %+v, want calling with a token", calling)
	}
	j.lose = ""
	if err := tw.ex.Run(context.Background(), p); err != nil {
		t.Fatalf("the resumed run: %v", err)
	}
	if len(api.updates) != 2 || api.updates[0] != api.updates[1] {
		t.Errorf("UpdateNodegroupVersion returned %v, want the same update twice", api.updates)
	}
	versions, err := api.LaunchTemplateAPI.(interface {
		DescribeLaunchTemplateVersions(context.Context, *ec2.DescribeLaunchTemplateVersionsInput, ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error)
	}).DescribeLaunchTemplateVersions(context.Background(), &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("custom")})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(versions.LaunchTemplateVersions); n != 2 {
		t.Errorf("launch template custom has %d versions, want 2 (the first and the hop's)", n)
	}
	if done, _ := j.Get("1.31/node-group/custom"); done.State != StepDone {
		t.Errorf("the step is %s after the resumed run", done.State)
	}
}

// lossyJournal is a memJournal that loses the record of the operation
// lose as called — the run is killed between the call and its record.
type lossyJournal struct {
	memJournal
	lose string
	kill func()
}

func (j *lossyJournal) Put(key string, e Entry) error {
	if key == j.lose && e.State == Called {
		j.kill()
		return context.Canceled
	}
	return j.memJournal.Put(key, e)
}
