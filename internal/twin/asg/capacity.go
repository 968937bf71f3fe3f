package asg

import "github.com/ladder-eks/ladder/internal/rules/instancerefresh"

// The refresh's preferences and arithmetic are internal/rules/instancerefresh's
// (semantics.md §C): the twin applies them.
type (
	// Preferences are StartInstanceRefresh's RefreshPreferences.
	Preferences = instancerefresh.Preferences
	// Settings are a refresh's preferences with the defaults filled in.
	Settings = instancerefresh.Settings
	// Capacity is what the healthy percentages allow a group during a refresh.
	Capacity = instancerefresh.Capacity
	// Set is one set of replacements.
	Set = instancerefresh.Set
)

// NewCapacity is the Capacity of desired instances under the percentages.
func NewCapacity(desired, minHealthyPercentage, maxHealthyPercentage int) Capacity {
	return instancerefresh.NewCapacity(desired, minHealthyPercentage, maxHealthyPercentage)
}
