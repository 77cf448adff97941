package sim

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The engine's pooled writers encode exactly as a fresh one does, whatever
// the writer encoded before, and every code decodes back to its scenario.
func TestScenarioCodeReusesWriters(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, err := NewEngine(ctx, Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	yes := true
	scenarios := []Scenario{
		{Base: DefaultSettings(), Actions: []Action{}},
		{Base: Lessons()[2].Settings, Actions: Lessons()[2].Steps},
		{Base: DefaultSettings(), Actions: []Action{{Kind: "charge", OrderID: "order-42", Amount: 1500, Fate: FateResponseLost}, {Kind: "retry", Op: 1, WithKey: &yes}}},
	}
	for round := range 3 {
		for i, sc := range scenarios {
			code := e.encode(sc)
			if want := sc.Encode(); code != want {
				t.Fatalf("round %d, scenario %d: pooled %q, fresh %q", round, i, code, want)
			}
			back, err := DecodeScenario(code)
			if err != nil {
				t.Fatalf("scenario %d: %v", i, err)
			}
			if diff := cmp.Diff(sc, back); diff != "" {
				t.Errorf("scenario %d does not come back (-sent +decoded):\n%s", i, diff)
			}
		}
	}
}
