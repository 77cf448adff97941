package scenario

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
)

// The pooled writers encode exactly as a fresh one does, whatever the
// writer encoded before, and every code decodes back to its scenario.
func TestCodesReuseWriters(t *testing.T) {
	var sc Scenarios
	yes := true
	unique := sim.ProtectUnique
	scenarios := []sim.Scenario{
		{Base: sim.DefaultSettings(), Actions: []sim.Action{}},
		{Base: sim.DefaultSettings(), Actions: []sim.Action{{Kind: "race", N: 2}, {Kind: "settings", Settings: &sim.SettingsPatch{Protection: &unique}}}},
		{Base: sim.DefaultSettings(), Actions: []sim.Action{{Kind: "charge", OrderID: "order-42", Amount: 1500, Fate: sim.FateResponseLost}, {Kind: "retry", Op: 1, WithKey: &yes}}},
	}
	for round := range 3 {
		for i, s := range scenarios {
			code := sc.encode(s)
			if want := Encode(s); code != want {
				t.Fatalf("round %d, scenario %d: pooled %q, fresh %q", round, i, code, want)
			}
			back, err := Decode(code)
			if err != nil {
				t.Fatalf("scenario %d: %v", i, err)
			}
			if diff := cmp.Diff(s, back); diff != "" {
				t.Errorf("scenario %d does not come back (-sent +decoded):\n%s", i, diff)
			}
		}
	}
}
