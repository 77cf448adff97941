package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/labs"
)

// The key each strategy sends across an operation's attempts: the first,
// two retries with the key, and one without any. Keys are told apart by
// letter, in the order they first appear ("-" for none); each strategy's
// first key is checked as well.
func TestKeysAcrossRetries(t *testing.T) {
	t.Parallel()
	body := sha256.Sum256([]byte(`{"order_id":"order-42","amount":1500}`))
	for _, tc := range []struct {
		strategy sim.KeyStrategy
		pattern  []string
		first    func(op sim.Operation) bool
	}{
		{sim.KeyNone, []string{"-", "-", "-", "-"}, nil},
		{sim.KeyUUID, []string{"A", "A", "A", "-"}, func(op sim.Operation) bool {
			return op.Key != nil && *op.Attempts[0].Key == *op.Key && isUUID(*op.Key)
		}},
		{sim.KeyUUIDPerRequest, []string{"A", "B", "C", "-"}, func(op sim.Operation) bool {
			return op.Key == nil && isUUID(*op.Attempts[0].Key) && isUUID(*op.Attempts[2].Key)
		}},
		{sim.KeyNatural, []string{"A", "A", "A", "-"}, func(op sim.Operation) bool { return *op.Attempts[0].Key == "order-42" }},
		{sim.KeyHash, []string{"A", "A", "A", "-"}, func(op sim.Operation) bool {
			return *op.Attempts[0].Key == hex.EncodeToString(body[:])
		}},
	} {
		t.Run(string(tc.strategy), func(t *testing.T) {
			var sent [2][]string // by the lab, as the server received them
			for i := range sent {
				g := newRig(t, clock.NewFake(start), &server{})
				l := g.newLab(t, func(s *sim.Settings) { s.KeyStrategy, s.Seed = tc.strategy, 7 })
				op := g.keys(t, l)
				reqs := g.srv.requests()
				if len(reqs) != 4 || len(op.Attempts) != 4 {
					t.Fatalf("%d requests reached the server, %d attempts recorded; want 4 and 4", len(reqs), len(op.Attempts))
				}
				for j, r := range reqs {
					sent[i] = append(sent[i], r.Key)
					if a := op.Attempts[j]; (a.Key == nil) != (r.Key == "") || a.Key != nil && *a.Key != r.Key {
						t.Errorf("attempt %d recorded key %v, sent %q", a.N, a.Key, r.Key)
					}
				}
				if diff := cmp.Diff(tc.pattern, letters(sent[i])); diff != "" {
					t.Errorf("keys sent (-want +got):\n%s", diff)
				}
				if tc.first != nil && !tc.first(op) {
					t.Errorf("the keys of %s: operation key %v, attempts %+v", tc.strategy, op.Key, op.Attempts)
				}
			}
			if diff := cmp.Diff(sent[0], sent[1]); diff != "" {
				t.Errorf("two labs of one seed sent different keys (-first +second):\n%s", diff)
			}
		})
	}
}

// keys starts an operation in the lab, retries it twice with its key and
// once without, and returns it.
func (g rig) keys(t *testing.T, l *labs.Lab) sim.Operation {
	t.Helper()
	ctx := context.Background()
	op, err := g.c.Start(ctx, l, charge)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	for _, withKey := range []bool{true, true, false} {
		if op, err = g.c.Retry(ctx, l, op.ID, withKey, ""); err != nil {
			t.Fatalf("retry: %v", err)
		}
	}
	return op
}

func isUUID(s string) bool { _, err := uuid.Parse(s); return err == nil }

// letters names each key by the order it first appears: A, B, …; "-" for none.
func letters(keys []string) []string {
	seen := map[string]string{}
	var out []string
	for _, k := range keys {
		if k == "" {
			out = append(out, "-")
			continue
		}
		if _, ok := seen[k]; !ok {
			seen[k] = string(rune('A' + len(seen)))
		}
		out = append(out, seen[k])
	}
	return out
}
