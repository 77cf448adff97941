package idempotency

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"idemlab/sim/store"
)

// The sweeper's statements read and delete through the records' one index
// beside their primary key (migration 14): a lab's records of a scope in
// the order they expire.
const (
	// sqlNextScope is the first lab and scope after (?1, ?2) that has
	// records (one step of the index, however many records each has), and
	// whether the earliest to expire of its finished records has expired
	// by ?3.
	sqlNextScope = `
SELECT n.lab_id, n.scope, COALESCE((
    SELECT e.expires_at <= ?3 FROM idempotency_records AS e
    WHERE e.lab_id = n.lab_id AND e.scope = n.scope AND e.expires_at >= 0 AND e.state = 'done'
    ORDER BY e.expires_at LIMIT 1), false)
FROM (SELECT lab_id, scope FROM idempotency_records
      WHERE (lab_id, scope) > (?1, ?2) AND expires_at >= 0 ORDER BY lab_id, scope, expires_at LIMIT 1) AS n`

	// sqlSweep deletes up to ?4 finished records of the lab and scope
	// expired by ?3, the earliest first; a claim still in flight is the
	// mending's (claim.go), not the sweeper's.
	sqlSweep = `
DELETE FROM idempotency_records WHERE (lab_id, scope, key) IN (
    SELECT lab_id, scope, key FROM idempotency_records
    WHERE lab_id = ?1 AND scope = ?2 AND expires_at >= 0 AND expires_at <= ?3 AND state = 'done'
    ORDER BY expires_at LIMIT ?4)`
)

// sweep deletes every lab's finished records expired by now, a lab and
// scope at a time, PurgeChunk records a transaction: what it reads is one
// statement for each lab and scope that has records (two steps of the
// index), and what it deletes, so its cost follows the labs and what has
// expired, never the records that are still to live; the writer is taken
// only where something has expired.
func sweep(ctx context.Context, s *store.Store, now time.Time) error {
	lab, scope, at := "", "", now.UnixMilli()
	for {
		var expired bool
		err := s.QueryRow(ctx, sqlNextScope, lab, scope, at).Scan(&lab, &scope, &expired)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if !expired {
			continue
		}
		if err := sweepScope(ctx, s, lab, scope, at); err != nil {
			return err
		}
	}
}

// sweepScope deletes the lab's finished records of the scope expired by
// now (unix ms), PurgeChunk a transaction.
func sweepScope(ctx context.Context, s *store.Store, lab, scope string, now int64) error {
	for {
		res, err := s.Exec(ctx, sqlSweep, lab, scope, now, store.PurgeChunk)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n < store.PurgeChunk {
			return nil
		}
	}
}
