package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The seed write-up's NodePool: drifted nodes one at a time, Empty and
// Underutilized unrestricted (100%).
const seedNodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
  disruption:
    consolidateAfter: 0s
    budgets:
      - nodes: "1"
        reasons:
          - Drifted
      - nodes: "100%"
        reasons:
          - Empty
          - Underutilized
`

// The seed's business-hours NodePool: nothing on weekdays 09:00-17:00 UTC,
// at most 10 nodes otherwise.
const businessHoursNodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: business-hours
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
  disruption:
    consolidateAfter: 0s
    budgets:
      - schedule: "0 9 * * mon-fri"
        duration: 8h
        nodes: "0"
      - nodes: "10"
`

func writeManifest(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nodepool.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runLadder(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Main(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBudgetsOutput(t *testing.T) {
	seed := writeManifest(t, seedNodePool)
	hours := writeManifest(t, businessHoursNodePool)
	driftOnly := writeManifest(t, strings.Replace(seedNodePool, `      - nodes: "100%"
        reasons:
          - Empty
          - Underutilized
`, "", 1))
	omitted := writeManifest(t, `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: defaults}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
`)
	const at = "--at=2024-01-01T00:00:00Z" // a Monday

	cases := []struct {
		name string
		args []string
		want string
	}{
		{name: "seed NodePool, text",
			args: []string{"budgets", "-f", seed, "--nodes", "10", at},
			want: `NODEPOOL  NODES  DISRUPTING  REASON         ALLOWED
default   10     0           Drifted        1
default   10     0           Empty          10
default   10     0           Underutilized  10
`},
		{name: "seed NodePool, JSON",
			args: []string{"budgets", "-f", seed, "--nodes", "10", at, "-o", "json"},
			want: `{
  "nodepool": "default",
  "at": "2024-01-01T00:00:00Z",
  "allowed": {
    "Drifted": 1,
    "Empty": 10,
    "Underutilized": 10
  }
}
`},
		{name: "disrupting nodes are subtracted from every reason",
			args: []string{"budgets", "-f", seed, "--nodes", "10", "--disrupting", "3", at},
			want: `NODEPOOL  NODES  DISRUPTING  REASON         ALLOWED
default   10     3           Drifted        0
default   10     3           Empty          7
default   10     3           Underutilized  7
`},
		{name: "a reason no budget lists is unbounded, text",
			args: []string{"budgets", "-f", driftOnly, "--nodes", "10", "--disrupting", "2", at},
			want: `NODEPOOL  NODES  DISRUPTING  REASON         ALLOWED
default   10     2           Drifted        0
default   10     2           Empty          unbounded
default   10     2           Underutilized  unbounded
`},
		{name: "a reason no budget lists is unbounded, JSON null",
			args: []string{"budgets", "-f", driftOnly, "--nodes", "10", at, "-o", "json"},
			want: `{
  "nodepool": "default",
  "at": "2024-01-01T00:00:00Z",
  "allowed": {
    "Drifted": 1,
    "Empty": null,
    "Underutilized": null
  }
}
`},
		{name: "omitted budgets default to 10%: 10% of 25 rounds up to 3",
			args: []string{"budgets", "-f", omitted, "--nodes", "25", at},
			want: `NODEPOOL  NODES  DISRUPTING  REASON         ALLOWED
defaults  25     0           Drifted        3
defaults  25     0           Empty          3
defaults  25     0           Underutilized  3
`},
		{name: "business hours: closed at Monday 09:00",
			args: []string{"budgets", "-f", hours, "--nodes", "40", "--at", "2024-01-01T09:00:00Z"},
			want: `NODEPOOL        NODES  DISRUPTING  REASON         ALLOWED
business-hours  40     0           Drifted        0
business-hours  40     0           Empty          0
business-hours  40     0           Underutilized  0
`},
		{name: "business hours: --at in another zone is read in UTC",
			args: []string{"budgets", "-f", hours, "--nodes", "40", "--at", "2024-01-01T17:00:00+09:00", "-o", "json"},
			want: `{
  "nodepool": "business-hours",
  "at": "2024-01-01T08:00:00Z",
  "allowed": {
    "Drifted": 10,
    "Empty": 10,
    "Underutilized": 10
  }
}
`},
		{name: "business hours over 7d, text: 5 closings and 5 openings",
			args: []string{"budgets", "-f", hours, "--nodes", "40", "--disrupting", "1", at, "--window", "7d"},
			want: `NODEPOOL        NODES  DISRUPTING  REASON         ALLOWED
business-hours  40     1           Drifted        9
business-hours  40     1           Empty          9
business-hours  40     1           Underutilized  9

Changes in the 168h0m0s after 2024-01-01T00:00:00Z:
TIME                  DRIFTED  EMPTY  UNDERUTILIZED
2024-01-01T09:00:00Z  0        0      0
2024-01-01T17:00:00Z  9        9      9
2024-01-02T09:00:00Z  0        0      0
2024-01-02T17:00:00Z  9        9      9
2024-01-03T09:00:00Z  0        0      0
2024-01-03T17:00:00Z  9        9      9
2024-01-04T09:00:00Z  0        0      0
2024-01-04T17:00:00Z  9        9      9
2024-01-05T09:00:00Z  0        0      0
2024-01-05T17:00:00Z  9        9      9
`},
		{name: "business hours over 1d12h, JSON",
			args: []string{"budgets", "-f", hours, "--nodes", "40", at, "--window", "1d12h", "-o", "json"},
			want: `{
  "nodepool": "business-hours",
  "at": "2024-01-01T00:00:00Z",
  "allowed": {
    "Drifted": 10,
    "Empty": 10,
    "Underutilized": 10
  },
  "window": "36h0m0s",
  "changes": [
    {
      "at": "2024-01-01T09:00:00Z",
      "allowed": {
        "Drifted": 0,
        "Empty": 0,
        "Underutilized": 0
      }
    },
    {
      "at": "2024-01-01T17:00:00Z",
      "allowed": {
        "Drifted": 10,
        "Empty": 10,
        "Underutilized": 10
      }
    },
    {
      "at": "2024-01-02T09:00:00Z",
      "allowed": {
        "Drifted": 0,
        "Empty": 0,
        "Underutilized": 0
      }
    }
  ]
}
`},
		{name: "no changes in the window, text",
			args: []string{"budgets", "-f", seed, "--nodes", "10", at, "--window", "24h"},
			want: `NODEPOOL  NODES  DISRUPTING  REASON         ALLOWED
default   10     0           Drifted        1
default   10     0           Empty          10
default   10     0           Underutilized  10

No changes in the 24h0m0s after 2024-01-01T00:00:00Z.
`},
		{name: "no changes in the window, JSON has an empty list",
			args: []string{"budgets", "-f", seed, "--nodes", "2", at, "--window", "90m", "-o", "json"},
			want: `{
  "nodepool": "default",
  "at": "2024-01-01T00:00:00Z",
  "allowed": {
    "Drifted": 1,
    "Empty": 2,
    "Underutilized": 2
  },
  "window": "1h30m0s",
  "changes": []
}
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runLadder(tc.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr: %s", code, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr: %s", stderr)
			}
			if stdout != tc.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.want)
			}
		})
	}
}

func TestBudgetsErrors(t *testing.T) {
	invalid := writeManifest(t, `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidateAfter: 0s
    budgets:
      - nodes: "10"
      - schedule: "0 9 * *"
        duration: 8h
        nodes: "0"
`)
	twoErrors := writeManifest(t, `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidateAfter: 0s
    budgets:
      - nodes: "1000%"
        reasons: [Drifted, Expired]
`)
	days := writeManifest(t, `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    budgets:
      - nodes: "0"
        schedule: "@daily"
        duration: 1d
`)
	noNodePool := writeManifest(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n")
	two := writeManifest(t, seedNodePool+"---\n"+businessHoursNodePool)

	cases := []struct {
		name string
		args []string
		want string // the whole of stderr
	}{
		{name: "an invalid schedule names file:line, budget index and field, on one line",
			args: []string{"budgets", "-f", invalid, "--nodes", "3"},
			want: "error: " + invalid + `:10: NodePool default: spec.disruption.budgets[1].schedule: "0 9 * *" is not a valid cron schedule: expected exactly 5 fields, found 4 (Karpenter evaluates it in UTC; use 5 fields, e.g. "0 9 * * mon-fri")` + "\n"},
		{name: "every invalid field is reported, one line each",
			args: []string{"budgets", "-f", twoErrors, "--nodes", "3"},
			want: "error: " + twoErrors + `:9: NodePool default: spec.disruption.budgets[0].nodes: "1000%" is not a valid budget (use a node count such as "5" or a percentage from "0%" to "100%"; quote it, it is a string)` + "\n" +
				twoErrors + `:10: NodePool default: spec.disruption.budgets[0].reasons[1]: "Expired" is not a disruption reason (use Drifted, Empty or Underutilized; expiration ignores budgets)` + "\n"},
		{name: "a duration in days names the field and the units",
			args: []string{"budgets", "-f", days, "--nodes", "3"},
			want: "error: " + days + `:10: NodePool default: spec.disruption.budgets[0].duration: "1d" is not a duration (use a number with a unit of h or m (the NodePool CRD's pattern), e.g. 24h for a day or 1h30m; Go durations have no d)` + "\n"},
		{name: "no NodePool in the file",
			args: []string{"budgets", "-f", noNodePool, "--nodes", "3"},
			want: "error: " + noNodePool + " has no NodePool (apiVersion: karpenter.sh/v1, kind: NodePool)\n"},
		{name: "several NodePools need --nodepool",
			args: []string{"budgets", "-f", two, "--nodes", "3"},
			want: "error: " + two + " has 2 NodePools (default, business-hours); choose one with --nodepool\n"},
		{name: "--nodepool names one that is not there",
			args: []string{"budgets", "-f", two, "--nodes", "3", "--nodepool", "gpu"},
			want: "error: " + two + ` has no NodePool "gpu"; it has default, business-hours` + "\n"},
		{name: "--disrupting more than --nodes",
			args: []string{"budgets", "-f", invalid, "--nodes", "3", "--disrupting", "4"},
			want: "error: --disrupting 4: must be between 0 and --nodes (3): disrupting nodes are counted in --nodes\n"},
		{name: "--nodes is required",
			args: []string{"budgets", "-f", invalid},
			want: "error: required flag(s) \"nodes\" not set\n"},
		{name: "negative --nodes",
			args: []string{"budgets", "-f", invalid, "--nodes", "-1"},
			want: "error: --nodes -1: must be 0 or more\n"},
		{name: "a bad --at",
			args: []string{"budgets", "-f", invalid, "--nodes", "3", "--at", "monday"},
			want: "error: --at \"monday\": not an RFC 3339 time, e.g. 2024-01-01T09:00:00Z\n"},
		{name: "a window over 366 days",
			args: []string{"budgets", "-f", invalid, "--nodes", "3", "--window", "367d"},
			want: "error: --window \"367d\": at most 366d\n"},
		{name: "a window that is no duration",
			args: []string{"budgets", "-f", invalid, "--nodes", "3", "--window", "a week"},
			want: "error: --window \"a week\": use a duration such as 90m, 24h, 7d or 1d12h\n"},
		{name: "an unknown output format",
			args: []string{"budgets", "-f", invalid, "--nodes", "3", "-o", "yaml"},
			want: "error: -o \"yaml\": use text or json\n"},
		{name: "a missing file",
			args: []string{"budgets", "-f", "/nonexistent/nodepool.yaml", "--nodes", "3"},
			want: "error: open /nonexistent/nodepool.yaml: no such file or directory\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runLadder(tc.args...)
			if code == 0 {
				t.Errorf("exit 0, want non-zero")
			}
			if stdout != "" {
				t.Errorf("stdout: %s", stdout)
			}
			if stderr != tc.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tc.want)
			}
		})
	}
}

// nodes is a string in the CRD: an unquoted number is rejected by the API
// server, and by the manifest decoder (whose message is its own).
func TestBudgetsUnquotedNodes(t *testing.T) {
	path := writeManifest(t, strings.Replace(seedNodePool, `nodes: "1"`, `nodes: 1`, 1))
	code, stdout, stderr := runLadder("budgets", "-f", path, "--nodes", "3")
	if code == 0 || stdout != "" {
		t.Errorf("exit %d, stdout %q; want an error", code, stdout)
	}
	if !strings.HasPrefix(stderr, "error: "+path+":") || !strings.Contains(stderr, "nodes: expected a string, got number") ||
		strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr = %q, want one line with file:line and the nodes field", stderr)
	}
}

func TestBudgetsPicksNodePoolByName(t *testing.T) {
	two := writeManifest(t, seedNodePool+"---\n"+businessHoursNodePool)
	code, stdout, stderr := runLadder("budgets", "-f", two, "--nodes", "40", "--nodepool", "business-hours", "--at", "2024-01-01T12:00:00Z", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `{
  "nodepool": "business-hours",
  "at": "2024-01-01T12:00:00Z",
  "allowed": {
    "Drifted": 0,
    "Empty": 0,
    "Underutilized": 0
  }
}
`
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
}

// A disruption block without consolidateAfter is rejected by the API server
// (v1.14.1 CRD), but the budgets still compute: a warning, not an error.
func TestBudgetsWarnsAndStillAnswers(t *testing.T) {
	path := writeManifest(t, strings.Replace(seedNodePool, "    consolidateAfter: 0s\n", "", 1))
	code, stdout, stderr := runLadder("budgets", "-f", path, "--nodes", "2", "--at", "2024-01-01T00:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantOut := `NODEPOOL  NODES  DISRUPTING  REASON         ALLOWED
default   2      0           Drifted        1
default   2      0           Empty          2
default   2      0           Underutilized  2
`
	if stdout != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, wantOut)
	}
	wantErr := "warning: " + path + `:16: NodePool default: spec.disruption.consolidateAfter: required when spec.disruption is set: the API server rejects this NodePool with "Required value" (add consolidateAfter: 0s, the default when the whole disruption block is omitted, or Never)` + "\n"
	if stderr != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, wantErr)
	}
}

func TestBudgetsReadsStdin(t *testing.T) {
	var out, errOut bytes.Buffer
	root, _ := newRootCommand(&out, &errOut)
	root.SetIn(strings.NewReader(seedNodePool))
	root.SetArgs([]string{"budgets", "-f", "-", "--nodes", "10", "--at", "2024-01-01T00:00:00Z"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	want := `NODEPOOL  NODES  DISRUPTING  REASON         ALLOWED
default   10     0           Drifted        1
default   10     0           Empty          10
default   10     0           Underutilized  10
`
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}

	// Errors from stdin name it.
	out.Reset()
	root, _ = newRootCommand(&out, &errOut)
	root.SetIn(strings.NewReader(strings.Replace(seedNodePool, `nodes: "100%"`, `nodes: "150%"`, 1)))
	root.SetArgs([]string{"budgets", "-f", "-", "--nodes", "10"})
	err := root.Execute()
	if err == nil || !strings.HasPrefix(err.Error(), "<stdin>:22: NodePool default: spec.disruption.budgets[1].nodes:") {
		t.Errorf("error = %v, want it to start with <stdin>:22: ... budgets[1].nodes", err)
	}
}

func TestBudgetsHelpTeaches(t *testing.T) {
	code, stdout, stderr := runLadder("budgets", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"rounds up", "UTC", "[hit, hit+duration)", "fails", "closed", "--disrupting", "Expiration", "ignores budgets",
		"ladder budgets -f nodepool.yaml --nodes 20 --at 2024-01-01T10:00:00Z", "--window 7d -o json", "-f -",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help does not mention %q", want)
		}
	}
}
