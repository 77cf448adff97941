package sim_test

import (
	"testing"

	"idemlab/sim"
)

func TestChecklist(t *testing.T) {
	for _, tc := range []struct {
		protection sim.Protection
		key        sim.KeyStrategy
		want       [4]bool
	}{
		{sim.ProtectNone, sim.KeyNone, [4]bool{true, false, false, false}},
		{sim.ProtectCheckThenInsert, sim.KeyUUID, [4]bool{true, true, false, false}},
		{sim.ProtectUnique, sim.KeyUUID, [4]bool{true, true, true, false}},
		{sim.ProtectOnConflict, sim.KeyNatural, [4]bool{true, true, true, false}},
		{sim.ProtectReplay, sim.KeyUUID, [4]bool{true, true, true, true}},
		{sim.ProtectReplay, sim.KeyUUIDPerRequest, [4]bool{true, false, false, false}},
		{sim.ProtectUnique, sim.KeyNone, [4]bool{true, false, false, false}},
	} {
		s := sim.DefaultSettings()
		s.Protection, s.KeyStrategy = tc.protection, tc.key
		var got [4]bool
		for i, c := range sim.Checklist(s) {
			got[i] = c.Yes
			if c.Why == "" || c.Question == "" {
				t.Errorf("%s/%s: question %d has no id or reason", tc.protection, tc.key, i)
			}
		}
		if got != tc.want {
			t.Errorf("%s with key %s: %v, want %v", tc.protection, tc.key, got, tc.want)
		}
	}
}
