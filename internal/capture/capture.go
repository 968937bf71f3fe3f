// Package capture writes a scenario of a live cluster, so that `ladder
// rehearse` rehearses the user's own cluster: the EKS control plane, its
// add-ons, managed node groups, self-managed Auto Scaling groups and
// Fargate profiles as EKS and Auto Scaling describe them, the Karpenter
// NodePools with the nodes their NodeClaims launched, and the workloads,
// PodDisruptionBudgets, volumes and classes as real manifests — what the
// API server stores, without status, managed fields or server-set
// metadata. Secrets and ConfigMaps are never read.
//
// Every list is sorted, so the same cluster captured twice at the same
// instant gives the same files.
package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"gopkg.in/yaml.v3"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ladder-eks/ladder/internal/awsport"
	"github.com/ladder-eks/ladder/internal/outfile"
	"github.com/ladder-eks/ladder/internal/scenario"
)

// Source is where a capture reads from.
type Source struct {
	// Kube and Dynamic read the cluster's objects (Dynamic only Karpenter's
	// kinds; nil: no Karpenter is read).
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// AWS are the account's ports in the cluster's region: EKS is required;
	// AutoScaling (self-managed groups), LaunchTemplates (the image a
	// template launches) and Images (the names of AMIs the catalog does not
	// know) are read when set.
	AWS awsport.Ports
	// Cluster is the EKS cluster's name.
	Cluster string
	// Now is the capture's instant: the scenario's start, from which node
	// ages are counted.
	Now time.Time
}

// Capture is a captured cluster: the scenario and its manifest files.
type Capture struct {
	Scenario *scenario.Scenario
	// Files are the manifest files by path relative to the scenario, in
	// the order the scenario lists them.
	Files []File
	// Notes say what was left out and why, one line each.
	Notes []string
	// Counts are the objects written per kind.
	Counts map[string]int
}

// File is one manifest file of a capture.
type File struct {
	Path string
	Data []byte
}

// Read captures the cluster.
func Read(ctx context.Context, src Source) (*Capture, error) {
	if src.AWS.EKS == nil {
		return nil, errors.New("capture: no EKS client")
	}
	if src.Now.IsZero() {
		src.Now = time.Now()
	}
	out, err := src.AWS.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: &src.Cluster})
	if err != nil {
		return nil, fmt.Errorf("eks DescribeCluster %s: %w", src.Cluster, err)
	}
	cl := out.Cluster
	region, err := regionOf(aws.ToString(cl.Arn))
	if err != nil {
		return nil, err
	}
	c := &Capture{Counts: map[string]int{}}
	k, err := readKube(ctx, src)
	if err != nil {
		return nil, err
	}
	sc := &scenario.Scenario{
		APIVersion: scenario.APIVersion,
		Kind:       scenario.Kind,
		Metadata: scenario.Metadata{
			Name:        src.Cluster,
			Description: fmt.Sprintf("captured from EKS cluster %s (%s) at %s", src.Cluster, region, src.Now.UTC().Format(time.RFC3339)),
		},
	}
	sc.Spec.Start.Time = src.Now.UTC().Truncate(time.Second)
	one := uint64(1)
	sc.Spec.Seed = &one
	// The playbook, so that rehearse --to V upgrades the whole cluster.
	sc.Spec.Upgrade = &scenario.Upgrade{}
	sc.Spec.Cluster = scenario.Cluster{Name: src.Cluster, Version: aws.ToString(cl.Version), Region: region, Zones: k.zones()}
	if sc.Spec.Addons, err = readAddons(ctx, src); err != nil {
		return nil, err
	}
	g := &groups{src: src, kube: k, capture: c}
	if sc.Spec.NodeGroups, err = g.read(ctx); err != nil {
		return nil, err
	}
	if sc.Spec.AMIs, err = g.amis(ctx); err != nil {
		return nil, err
	}
	c.Files = k.files(c)
	for _, f := range c.Files {
		sc.Spec.Manifests = append(sc.Spec.Manifests, scenario.Source{File: f.Path})
	}
	c.Notes = append(c.Notes, k.notes...)
	c.Scenario = sc
	return c, nil
}

// regionOf reads the region from a cluster ARN,
// arn:aws:eks:REGION:ACCOUNT:cluster/NAME.
func regionOf(arn string) (string, error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[3] == "" {
		return "", fmt.Errorf("eks DescribeCluster: cluster ARN %q does not name a region", arn)
	}
	return parts[3], nil
}

// ScenarioFile is the scenario's name inside a capture's directory.
const ScenarioFile = "scenario.yaml"

// Check refuses, before a capture reads anything, a directory Write would
// refuse: a path that is not a directory, or one that holds a
// scenario.yaml already.
func Check(dir string) error {
	if err := outfile.CheckDir("--to", dir); err != nil {
		return err
	}
	path := filepath.Join(dir, ScenarioFile)
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists: capture into a new directory, or remove it first", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Write writes the capture into dir: scenario.yaml and the manifest files
// beside it. An existing scenario.yaml is an error: a capture never
// overwrites a scenario someone may have edited. Every file stays inside
// dir and none is written through a link found there (internal/outfile):
// the manifests' names come from the cluster.
func (c *Capture) Write(dir string) error {
	if err := Check(dir); err != nil {
		return err
	}
	data, err := c.ScenarioYAML()
	if err != nil {
		return err
	}
	d, err := outfile.OpenDir("--to", dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for _, f := range c.Files {
		if err := d.Replace(f.Path, f.Data); err != nil {
			return err
		}
	}
	if err := d.Create(ScenarioFile, data); err != nil {
		return err
	}
	return nil
}

// ScenarioYAML is scenario.yaml's text: a header saying where it came
// from, then the scenario.
func (c *Capture) ScenarioYAML() ([]byte, error) {
	body, err := orderedYAML(c.Scenario)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s.\n", c.Scenario.Metadata.Description)
	b.WriteString("# Written by `ladder capture`; rehearse it with `ladder rehearse --scenario` on this file.\n")
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	b.Write(body)
	return []byte(b.String()), nil
}

// orderedYAML writes v as block YAML with its fields in the order the Go
// type declares them (name, type, then the details; cluster before node
// groups), as a person writes a scenario: JSON keeps that order, and a
// yaml.Node decoded from it keeps it too.
func orderedYAML(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, err
	}
	var block func(*yaml.Node)
	block = func(n *yaml.Node) {
		n.Style = 0 // JSON's flow style and quotes; the encoder quotes what needs it
		for _, c := range n.Content {
			block(c)
		}
	}
	block(&n)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Kinds lists the captured kinds, sorted, for a summary.
func (c *Capture) Kinds() []string {
	return slices.Sorted(maps.Keys(c.Counts))
}
