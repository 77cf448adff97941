package member

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/sim/clock"
)

// Crowded is Join's refusal: a process that would keep a part to itself
// (an embedded server that the others cannot reach), or one beside a
// process that keeps one, is not alone on the database.
type Crowded struct {
	Mine   []string // the parts this process would keep to itself
	Peer   string   // the other process (host/pid)
	Theirs []string // the parts it keeps to itself
}

// Error says who runs beside whom; the caller knows the flags that help.
func (c *Crowded) Error() string {
	return fmt.Sprintf("store: another lab process runs on this database (%s, keeping to itself %q); this one would keep %q",
		c.Peer, c.Theirs, c.Mine)
}

// peer is another process on the database, not dead.
type peer struct {
	id, name, parts string
	until           int64 // its lease's end, unix ms
}

// take takes this process's lease, or takes it again, with parts (what it
// keeps to itself), in a transaction that locks the table against others
// that take theirs. When check is set and a process that is not dead
// (its lease ended less than a lease ago) keeps a part to itself, or this
// one would beside another, it takes nothing and says so (Crowded). It
// returns the other processes not dead.
func (m *Member) take(ctx context.Context, pool *pgxpool.Pool, parts string, check bool) (*Crowded, []peer, error) {
	var (
		crowd *Crowded
		peers []peer
	)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE processes IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, name, parts, lease_until FROM processes WHERE id <> $1 AND lease_until > db_ms() - $2`, m.id, m.lease.Milliseconds())
		if err != nil {
			return err
		}
		peers, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (p peer, err error) {
			return p, r.Scan(&p.id, &p.name, &p.parts, &p.until)
		})
		if err != nil {
			return err
		}
		if check {
			if crowd = crowding(parts, peers); crowd != nil {
				return nil
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO processes (id, name, parts, started_at, lease_until) VALUES ($1, $2, $3, db_ms(), db_ms() + $4)
ON CONFLICT (id) DO UPDATE SET parts = excluded.parts, lease_until = excluded.lease_until,
    started_at = CASE WHEN processes.lease_until <= db_ms() THEN excluded.started_at ELSE processes.started_at END`,
			m.id, m.name, parts, m.lease.Milliseconds())
		return err
	})
	return crowd, peers, err
}

// crowding is the refusal of a process keeping parts beside peers, if any.
func crowding(parts string, peers []peer) *Crowded {
	for _, p := range peers {
		if parts != "" || p.parts != "" {
			return &Crowded{Mine: strings.Fields(parts), Peer: p.name, Theirs: strings.Fields(p.parts)}
		}
	}
	return nil
}

// Join records the parts this process keeps to itself (the embedded
// servers it would run: their names; Parts) and, on pool, refuses, with a
// *Crowded, when it
// would not be alone with them: a process that keeps a part to itself runs
// alone on its database, and one that shares everything runs beside no
// process that keeps one. A process that seems to run but may have died
// (a kill -9 just before this start) is given until its lease shows it
// either way: renewed, or ended a lease ago. Taking the lease again later
// (after this process was given up for dead) checks the same. It reports
// whether no other process was there.
func (m *Member) Join(ctx context.Context, pool *pgxpool.Pool, parts []string) (alone bool, err error) {
	mine := m.Parts(parts)
	seen := map[string]int64{}
	deadline := m.clock.Now().Add(2*m.lease + m.lease/3)
	for waited := false; ; waited = true {
		crowd, peers, err := m.take(ctx, pool, mine, true)
		if err != nil {
			return false, fmt.Errorf("store: join: %w", err)
		}
		if crowd == nil {
			return len(peers) == 0, nil
		}
		for _, p := range peers {
			if mine == "" && p.parts == "" {
				continue // shares everything, as this one does
			}
			if at, ok := seen[p.id]; ok && p.until > at {
				return false, crowd // it renewed its lease: it runs
			}
			seen[p.id] = p.until
		}
		if m.clock.Now().After(deadline) {
			return false, crowd
		}
		if !waited {
			m.log.Info("another process seems to run on this database: waiting for its lease to show whether it does",
				"other", crowd.Peer, "up_to", deadline.Sub(m.clock.Now()).Round(time.Second))
		}
		if err := clock.Sleep(ctx, m.clock, m.lease/10); err != nil {
			return false, err
		}
	}
}

// Parts records the parts this process keeps to itself, as Join does, and
// returns them as the table processes holds them: sorted, one string.
func (m *Member) Parts(parts []string) string {
	mine := strings.Join(slices.Sorted(slices.Values(parts)), " ")
	m.mu.Lock()
	m.parts, m.joined = mine, true
	m.mu.Unlock()
	return mine
}
