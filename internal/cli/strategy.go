package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/termtext"
)

// selfManagedStrategies are the --strategy values: who replaces a
// self-managed group's instances.
var selfManagedStrategies = []string{scenario.InstanceRefresh, scenario.Ladder}

func addStrategyFlag(fl *pflag.FlagSet, strategy *string) {
	fl.StringVar(strategy, "strategy", "", `how self-managed node groups are replaced: "instance-refresh" (Auto Scaling's instance refresh; the default, or the scenario's own) or "ladder" (Ladder surges new instances within the group's MaxSize, drains the old nodes in waves as large as the PodDisruptionBudgets allow, and terminates them)`)
}

// applyStrategy gives every self-managed group of sc the --strategy's
// strategy ("": each keeps its own). A group moved to ladder drops its
// instance refresh preferences, which no longer apply.
func applyStrategy(sc *scenario.Scenario, strategy string) error {
	if strategy == "" {
		return nil
	}
	ok := false
	for _, s := range selfManagedStrategies {
		ok = ok || s == strategy
	}
	if !ok {
		return fmt.Errorf("--strategy %q: use instance-refresh or ladder", strategy)
	}
	for i := range sc.Spec.NodeGroups {
		g := &sc.Spec.NodeGroups[i]
		if g.Type != scenario.SelfManaged || g.StrategyOf() == scenario.NoUpgrade {
			continue
		}
		if g.Upgrade == nil {
			g.Upgrade = &scenario.GroupUpgrade{}
		}
		g.Upgrade.Strategy = strategy
		if strategy == scenario.Ladder {
			g.Upgrade.Refresh = nil
		}
	}
	return nil
}

// resolveScenario resolves a scenario name or file, gives its self-managed
// groups the --strategy, validates it and prints its warnings: what
// rehearse and view --scenario do before they rehearse.
func resolveScenario(cmd *cobra.Command, name, strategy string) (*scenario.Scenario, error) {
	sc, err := scenario.Resolve(name)
	if err != nil {
		return nil, err
	}
	if err := applyStrategy(sc, strategy); err != nil {
		return nil, err
	}
	warnings, err := sc.Validate()
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		termtext.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
	return sc, nil
}
