package store

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
func (m *member) take(ctx context.Context, pool *pgxpool.Pool, parts string, check bool) (*Crowded, []peer, error) {
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
// servers it would run: their names) and refuses, with a *Crowded, when it
// would not be alone with them: a process that keeps a part to itself runs
// alone on its database, and one that shares everything runs beside no
// process that keeps one. A process that seems to run but may have died
// (a kill -9 just before this start) is given until its lease shows it
// either way: renewed, or ended a lease ago. Taking the lease again later
// (after this process was given up for dead) checks the same. Alone
// reports, after Join, whether no other process was there.
func (s *Store) Join(ctx context.Context, parts []string) error {
	m := s.m
	mine := strings.Join(slices.Sorted(slices.Values(parts)), " ")
	m.mu.Lock()
	m.parts, m.joined = mine, true
	m.mu.Unlock()
	if !s.Postgres() {
		_, err := s.w.ExecContext(ctx, `UPDATE processes SET parts = ? WHERE id = ?`, mine, m.id)
		return err
	}
	seen := map[string]int64{}
	deadline := m.clock.Now().Add(2*m.lease + m.lease/3)
	for waited := false; ; waited = true {
		crowd, peers, err := m.take(ctx, s.mpool, mine, true)
		if err != nil {
			return fmt.Errorf("store: join: %w", err)
		}
		if crowd == nil {
			s.alone = len(peers) == 0
			return nil
		}
		for _, p := range peers {
			if mine == "" && p.parts == "" {
				continue // shares everything, as this one does
			}
			if at, ok := seen[p.id]; ok && p.until > at {
				return crowd // it renewed its lease: it runs
			}
			seen[p.id] = p.until
		}
		if m.clock.Now().After(deadline) {
			return crowd
		}
		if !waited {
			m.log.Info("another process seems to run on this database: waiting for its lease to show whether it does",
				"other", crowd.Peer, "up_to", deadline.Sub(m.clock.Now()).Round(time.Second))
		}
		if err := clock.Sleep(ctx, m.clock, m.lease/10); err != nil {
			return err
		}
	}
}

// Alone reports whether no other process ran on the database when this one
// joined (Join), or opened it: what the last run left unfinished and owns
// no one (a lab half built or half removed) is this one's. Always, on
// SQLite.
func (s *Store) Alone() bool { return s.alone }

// Mending sets fn, which mends, in the transaction it is given, the work
// of the processes that have no row: dead (MendDead took their row away),
// gone (they left), or from before the table (a NULL owner).
func (s *Store) Mending(fn func(*Tx) error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.mender = fn
}

func (m *member) mending() func(*Tx) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mender
}

// sqlBury takes away the rows of the processes whose lease ended a whole
// lease (?2 ms) ago: dead. A row held by a writing transaction of its
// process (hold_lease's shared lock) is left for the next time: that write
// may commit. Only a dead process's lock is tried (OFFSET 0 keeps the
// lease's test first), and it is held until the burial commits.
const sqlBury = `DELETE FROM processes WHERE id IN (
    SELECT id FROM (SELECT id FROM processes WHERE id <> ?1 AND lease_until <= db_ms() - ?2 OFFSET 0) AS dead
    WHERE pg_try_advisory_xact_lock(1, hashtext(id)))
RETURNING name`

// sqlAlone waits, on PostgreSQL, until the other writing transactions of
// process ?1 have ended: their lease step's lock (hold_lease), taken alone.
const sqlAlone = `SELECT pg_advisory_xact_lock(1, hashtext(?))`

// MendDead takes away the rows of the dead processes and mends the work of
// every process with no row (Mending), in one transaction: a process
// renewing its lease finds its row gone, and knows it. Nothing without a
// mender.
func (s *Store) MendDead(ctx context.Context) error {
	fn := s.m.mending()
	if fn == nil {
		return nil
	}
	var dead []string
	err := s.Write(ctx, func(tx *Tx) error {
		dead = dead[:0]
		if s.Postgres() {
			rows, err := tx.Query(sqlBury, s.m.id, s.m.lease.Milliseconds())
			if err != nil {
				return err
			}
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					rows.Close()
					return err
				}
				dead = append(dead, name)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return fn(tx)
	})
	if err == nil && len(dead) > 0 {
		s.m.log.Info("processes dead (their leases ended): their work mended", "processes", dead)
	}
	return err
}

// leave ends the membership: no more renewals, and the row goes, with what
// mending the process's own work left over (a lease that was lost leaves
// the row to the others, who mend it once dead).
func (s *Store) leave() {
	m := s.m
	if m.stop == nil {
		return
	}
	m.stop()
	<-m.done
	ctx, cancel := context.WithTimeout(context.Background(), m.lease)
	defer cancel()
	fn := m.mending()
	err := s.Write(ctx, func(tx *Tx) error {
		if s.Postgres() {
			if _, err := tx.Exec(sqlAlone, m.id); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(`DELETE FROM processes WHERE id = ?`, m.id); err != nil || fn == nil {
			return err
		}
		return fn(tx)
	})
	if err != nil {
		m.log.Warn("leave the database: the lease ends by itself", "err", err)
	}
}
