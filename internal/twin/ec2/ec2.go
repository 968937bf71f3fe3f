// Package ec2 is the twin's EC2: it hands out instance ids, private IPs and
// the hostnames EKS nodes get, per zone, from the run's seeded randomness.
// Node-group twins (Karpenter, managed node groups, ASGs) launch through it.
package ec2

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/ladder-eks/ladder/internal/rules/subnet"
)

// Instance is a launched EC2 instance.
type Instance struct {
	ID         string // i-0123456789abcdef0
	Zone       string
	PrivateIP  string
	Hostname   string // ip-10-0-12-111.us-west-2.compute.internal
	ProviderID string // aws:///us-west-2a/i-0123...
}

// Cloud allocates instances. Zone i of the cluster's zone list owns the
// subnet 10.0.(16·i).0/20, so a node's name tells its zone as in the seed
// (us-west-2a → ip-10-0-12-…, us-west-2c → ip-10-0-38-…).
type Cloud struct {
	region string
	zones  []string
	rng    *rand.Rand
	used   map[string]bool
	live   map[string]Instance
}

// New returns a cloud for a region and its zones.
func New(region string, zones []string, rng *rand.Rand) *Cloud {
	return &Cloud{region: region, zones: zones, rng: rng, used: map[string]bool{}, live: map[string]Instance{}}
}

// Zones are the cluster's zones.
func (c *Cloud) Zones() []string { return c.zones }

// Region is the cluster's region.
func (c *Cloud) Region() string { return c.region }

func (c *Cloud) zoneIndex(zone string) (int, error) {
	for i, z := range c.zones {
		if z == zone {
			return i, nil
		}
	}
	return 0, fmt.Errorf("zone %q is not one of the cluster's zones %v", zone, c.zones)
}

// Launch allocates an instance in a zone.
func (c *Cloud) Launch(zone string) (Instance, error) {
	zi, err := c.zoneIndex(zone)
	if err != nil {
		return Instance{}, err
	}
	if zi > 15 {
		return Instance{}, fmt.Errorf("the twin's EC2 supports at most 16 zones")
	}
	for tries := 0; tries < 1<<16; tries++ {
		third := 16*zi + c.rng.IntN(16)
		fourth := 4 + c.rng.IntN(subnet.HostsPerOctet)
		ip := fmt.Sprintf("10.0.%d.%d", third, fourth)
		if c.used[ip] {
			continue
		}
		c.used[ip] = true
		id := fmt.Sprintf("i-%017x", c.rng.Uint64()&0xfffffffffffffff)
		inst := Instance{
			ID:         id,
			Zone:       zone,
			PrivateIP:  ip,
			Hostname:   fmt.Sprintf("ip-10-0-%d-%d.%s", third, fourth, c.dnsSuffix()),
			ProviderID: fmt.Sprintf("aws:///%s/%s", zone, id),
		}
		c.live[id] = inst
		return inst, nil
	}
	return Instance{}, fmt.Errorf("zone %s has no free addresses left in the twin's /20", zone)
}

// Terminate releases an instance; its address may be reused later.
func (c *Cloud) Terminate(id string) {
	if inst, ok := c.live[id]; ok {
		delete(c.live, id)
		delete(c.used, inst.PrivateIP)
	}
}

// Running lists live instance ids, sorted.
func (c *Cloud) Running() []string {
	out := make([]string, 0, len(c.live))
	for id := range c.live {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// dnsSuffix is the EC2 private DNS domain: ec2.internal in us-east-1,
// REGION.compute.internal elsewhere.
func (c *Cloud) dnsSuffix() string {
	if c.region == "us-east-1" {
		return "ec2.internal"
	}
	return c.region + ".compute.internal"
}
