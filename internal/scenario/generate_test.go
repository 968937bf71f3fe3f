package scenario

import (
	"os"
	"testing"
)

func TestGenerateWritesValidScenario(t *testing.T) {
	data, err := Generate(GenerateOptions{Nodes: 30, PodsPerNode: 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("LADDER_DUMP"); p != "" {
		os.WriteFile(p, data, 0o644)
	}
	sc, err := Parse("gen.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
}
