package idempotency_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"idemlab/sim"
	"idemlab/sim/store"
)

// The sweeper deletes every lab's finished records past their expiry, in
// every scope, more than a chunk of them in one, and leaves the rest: the
// records still to live, and a claim in flight past its expiry (the
// mending's, not the sweeper's).
func TestSweepDeletesEveryLabsExpiredRecords(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		b := openHouse(t, dsn(t))
		ctx := context.Background()
		now := b.H.Clock.Now().UnixMilli() // the database's clock, the sweeper's (the fake moved by its skew, on PostgreSQL)
		type group struct{ lab, scope string }
		expired := map[group]int{}
		labs := []string{b.NewLab(t, sim.ProtectReplay, nil).ID, b.NewLab(t, sim.ProtectReplay, nil).ID}
		err := b.H.Store.Write(ctx, func(tx *store.Tx) error {
			for i, lab := range labs {
				for j, scope := range []string{"charges", "api /operations"} {
					n := 3 + i + j
					if i == 0 && j == 0 {
						n = store.PurgeChunk + 7
					}
					expired[group{lab, scope}] = n
					rows := []struct {
						state   string
						expires int64
						count   int
					}{{"done", now - 1, n}, {"done", now, 1}, {"done", now + 60_000, 2}, {"in-flight", now - 1, 1}}
					for _, r := range rows {
						for k := range r.count {
							if _, err := tx.Exec(`INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, locked_until, expires_at, created_at)
VALUES (?, ?, ?, 'f', ?, 't', ?, ?, ?)`, lab, scope, fmt.Sprintf("%s-%d-%d", r.state, r.expires, k), r.state, r.expires, r.expires, r.expires-60_000); err != nil {
								return err
							}
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.H.Labs.Janitor().Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		for g := range expired {
			var done, flying, live int
			err := b.H.Store.QueryRow(ctx, `SELECT
    COUNT(CASE WHEN state = 'done' AND expires_at <= ? THEN 1 END),
    COUNT(CASE WHEN state = 'in-flight' THEN 1 END),
    COUNT(CASE WHEN state = 'done' AND expires_at > ? THEN 1 END)
FROM idempotency_records WHERE lab_id = ? AND scope = ?`, now, now, g.lab, g.scope).Scan(&done, &flying, &live)
			if err != nil {
				t.Fatal(err)
			}
			if done != 0 || flying != 1 || live != 2 {
				t.Errorf("lab %d, scope %q, after the sweep: %d expired finished records (of %d), %d in flight, %d to live; want 0, 1 and 2",
					slices.Index(labs, g.lab), g.scope, done, expired[g]+1, flying, live)
			}
		}
	})
}
