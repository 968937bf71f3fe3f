package scenario

// ParseFixture is parseTest for the external tests (package scenario_test),
// which build the twin from a scenario and so cannot live in this package.
var ParseFixture = parseTest
