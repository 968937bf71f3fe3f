package nodegroup

// Which instance an update takes down, adds or scales in next (semantics.md
// §B upgrade phase step 2, scale-up phase step 1, scale-down phase). Random
// choices draw from intn (rand.Rand.IntN's shape) over candidates in the
// order given, so a seeded source fixes the order.

// Instance is one instance of a node group's Auto Scaling group, as the
// selection sees it.
type Instance struct {
	// Name is the instance's node name.
	Name string
	Zone string
	// LaunchTemplateVersion is the version of the group's launch template
	// the instance was launched from. EKS makes a new one for every update
	// (§B setup phase step 1); an instance on an earlier one is "old".
	LaunchTemplateVersion int
	// Leaving is true once its termination has been asked for.
	Leaving bool
	// Selected is true from the update's choice of it until its instance is
	// terminated.
	Selected bool
}

// NextToUpgrade picks the old instance the upgrade phase takes down next:
// "randomly ..., up to the maximum unavailable" (§B upgrade phase step 2),
// among those launched before launch template version current, not leaving
// and not already selected. inFlight counts the selected instances not yet
// terminated, which is what maxUnavailable bounds. It reports false when
// none may go now. instances are in name order.
func NextToUpgrade(instances []Instance, current, inFlight, maxUnavailable int, intn func(n int) int) (int, bool) {
	if inFlight >= maxUnavailable {
		return -1, false
	}
	var candidates []int
	for i, in := range instances {
		if in.LaunchTemplateVersion != current && !in.Leaving && !in.Selected {
			candidates = append(candidates, i)
		}
	}
	if len(candidates) == 0 {
		return -1, false
	}
	return candidates[intn(len(candidates))], true
}

// SurgeZones are the zones of the instances the scale-up phase adds, in
// launch order: "in the same Availability Zone as those that are being
// upgraded" — round-robin over the zones holding old instances (not on
// launch template version current), in the group's zone order, or over all
// the group's zones when none does (§B scale-up phase). With three zones
// and a surge of 6 that is two per zone ("up to two instances per
// Availability Zone").
func SurgeZones(instances []Instance, current int, groupZones []string, surge int) []string {
	var zones []string
	for _, z := range groupZones {
		for _, in := range instances {
			if in.Zone == z && in.LaunchTemplateVersion != current {
				zones = append(zones, z)
				break
			}
		}
	}
	if len(zones) == 0 {
		zones = groupZones
	}
	out := make([]string, surge)
	for i := range out {
		out[i] = zones[i%len(zones)]
	}
	return out
}

// ScaleInVictim is the instance the Auto Scaling group's default
// termination policy removes when the scale-down phase lowers the desired
// size (§B scale-down phase): from the zone with the most instances not
// leaving (ties: the group's zone order), then one launched from the
// oldest launch template version, then — the policy's "closest to the next
// billing hour" not being modelled — one chosen by intn. instances are in
// name order; it reports false when every instance is leaving.
func ScaleInVictim(instances []Instance, groupZones []string, intn func(n int) int) (int, bool) {
	perZone := map[string][]int{}
	for i, in := range instances {
		if !in.Leaving {
			perZone[in.Zone] = append(perZone[in.Zone], i)
		}
	}
	var pool []int
	for _, z := range groupZones {
		if len(perZone[z]) > len(pool) {
			pool = perZone[z]
		}
	}
	if len(pool) == 0 {
		return -1, false
	}
	oldest := instances[pool[0]].LaunchTemplateVersion
	for _, i := range pool {
		oldest = min(oldest, instances[i].LaunchTemplateVersion)
	}
	var candidates []int
	for _, i := range pool {
		if instances[i].LaunchTemplateVersion == oldest {
			candidates = append(candidates, i)
		}
	}
	return candidates[intn(len(candidates))], true
}
