package ec2

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLaunchNamesFollowZoneSubnets(t *testing.T) {
	c := New("us-west-2", []string{"us-west-2a", "us-west-2b", "us-west-2c"}, rand.New(rand.NewPCG(1, 2)))
	for i := 0; i < 200; i++ {
		inst, err := c.Launch("us-west-2c")
		if err != nil {
			t.Fatal(err)
		}
		var a, b, third, fourth int
		if _, err := fmt.Sscanf(inst.PrivateIP, "%d.%d.%d.%d", &a, &b, &third, &fourth); err != nil || third < 32 || third > 47 {
			t.Fatalf("us-west-2c address %s outside 10.0.32.0/20", inst.PrivateIP)
		}
		if !strings.HasSuffix(inst.Hostname, ".us-west-2.compute.internal") || !strings.HasPrefix(inst.ProviderID, "aws:///us-west-2c/i-") {
			t.Fatalf("instance %+v", inst)
		}
	}
	if len(c.Running()) != 200 {
		t.Fatalf("running = %d, want 200 distinct", len(c.Running()))
	}
	if _, err := c.Launch("eu-west-1a"); err == nil {
		t.Fatal("launch in a foreign zone succeeded")
	}
}

func TestUSEast1UsesEC2Internal(t *testing.T) {
	c := New("us-east-1", []string{"us-east-1a"}, rand.New(rand.NewPCG(1, 2)))
	inst, _ := c.Launch("us-east-1a")
	if !strings.HasSuffix(inst.Hostname, ".ec2.internal") {
		t.Fatalf("hostname %s", inst.Hostname)
	}
}
