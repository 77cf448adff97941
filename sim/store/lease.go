package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/sim/clock"
	"idemlab/sim/store/pgsql"
)

// Membership: the processes on one database know of each other from the
// table processes, a row each, whose lease its process renews every third
// of it, on the database's clock (SPEC, "Membership survives a restart of
// PostgreSQL"). A row outlives the connections that wrote it: a restart
// of PostgreSQL drops every session, and no lease with them.
//
//   - A process whose lease is current is live; the live one that took its
//     lease first leads (Lead): it publishes the outbox and expires.
//   - One that could not renew before its lease's end has lost it: its
//     writing transactions are refused (ErrLeaseLost) until it renews, and
//     a renewal that finds the row gone takes it again.
//   - One whose lease ended a whole lease ago is dead: another takes its
//     row away and mends the work it owned (MendDead), in one transaction.
//   - Every writing transaction begins with the lease step (hold_lease): a
//     process whose lease is not current cannot write, and its row stays
//     until the transaction ends (the process's advisory lock, shared by
//     its writes), so that nobody mends what it may commit.
//
// On SQLite one process runs: its row is the only one, it always leads,
// and what the last run owned is its own to mend.

// DefaultLease is how long a lease lasts unrenewed: a process that dies is
// replaced as the leader within it, and its work mended a lease later.
const DefaultLease = 5 * time.Second

// Options are how a store takes part in the membership.
type Options struct {
	Lease time.Duration // 0: DefaultLease
	Clock clock.Clock   // ticks the renewals (every Lease/3); nil: the real one
	Log   *slog.Logger  // the lease lost and taken again; nil: discarded
}

// ErrLeaseLost is what a writing transaction gets while this process
// holds no current lease (IsUnavailable: the web answers 503).
var ErrLeaseLost = errors.New("store: this process holds no current lease on the database; it writes again once it has renewed it")

// leaseLostCode is the SQLSTATE hold_lease raises.
const leaseLostCode = "IL001"

// leaseStep is the lease's step in the first statement of every writing
// transaction on PostgreSQL (migrations 0004, 0013): it fails unless the
// lease of process $1 is current, and holds its row until the transaction
// ends: the process's advisory lock, shared, which burying the row takes
// alone (sqlBury, sqlAlone).
const leaseStep = `hold_lease($1)`

// IsLeaseLost reports whether err is a write refused for want of a lease.
func IsLeaseLost(err error) bool {
	return errors.Is(err, ErrLeaseLost) || pgsql.Code(err) == leaseLostCode
}

// member is this process's membership.
type member struct {
	id, name string
	lease    time.Duration
	clock    clock.Clock
	log      *slog.Logger

	mu      sync.Mutex
	parts   string          // what it keeps to itself, as Join recorded it
	joined  bool            // Join has run: taking the lease again checks the parts
	until   time.Time       // by clock: the lease holds at least until then
	leads   bool            // the last renewal found it the leader
	said    bool            // it leads, as its log last said
	lapsed  bool            // its loss was logged
	refused error           // why taking the lease again was refused (logged once)
	mender  func(*Tx) error // mends the work of processes with no row (Mending)

	stop context.CancelFunc
	done chan struct{}
}

func newMember(o Options) *member {
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var b [8]byte
	rand.Read(b[:])
	host, _ := os.Hostname()
	return &member{id: hex.EncodeToString(b[:]), name: fmt.Sprintf("%s/%d", host, os.Getpid()),
		lease: o.Lease, clock: o.Clock, log: o.Log}
}

// Process is the id of this process in the table processes: the owner of
// the work it writes (an attempt, a claim, an email it sends).
func (s *Store) Process() string { return s.m.id }

// Lead reports whether this process is the one that runs what must run
// once per database: the live process that took its lease first, as its
// last renewal found, while that renewal's lease lasts. Always, on SQLite.
func (s *Store) Lead(context.Context) bool {
	if !s.Postgres() {
		return true
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.m.leads && s.m.clock.Now().Before(s.m.until)
}

// holds reports whether the lease is current by this process's reckoning.
func (m *member) holds() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clock.Now().Before(m.until)
}

// hold is a writing transaction's first statement, st (PostgreSQL's
// placeholders): the transaction's id (txStep), then the lease step (its
// first argument, this process; more are the rest of st's, such as a lab
// to lock). It is refused at once
// when this process knows its lease lost, and by the database when it is
// not current there (leaseErr). The transaction's id is what a COMMIT
// whose answer was lost is settled by (Store.settle).
func (m *member) hold(st string, more ...any) (pgsql.Statement, error) {
	if !m.holds() {
		m.failed(ErrLeaseLost) // it ran out before a renewal failed (one late): logged once all the same
		return pgsql.Statement{}, ErrLeaseLost
	}
	return pgsql.Statement{Query: st, Args: append([]any{m.id}, more...)}, nil
}

// leaseErr is err, the failure of a first statement of hold's, marked
// ErrLeaseLost when the database refused the lease.
func leaseErr(err error) error {
	if pgsql.Code(err) == leaseLostCode {
		return fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return err
}

// renewed notes a lease renewed (or taken) by a statement sent at sent.
func (m *member) renewed(sent time.Time, leads bool) {
	m.mu.Lock()
	m.until, m.leads, m.refused = sent.Add(m.lease), leads, nil
	lapsed, said := m.lapsed, m.said
	m.lapsed, m.said = false, leads
	m.mu.Unlock()
	if lapsed {
		m.log.Info("lease on the database renewed: this process writes again", "process", m.id)
	}
	switch {
	case leads && !said:
		m.log.Info("this process leads: it alone relays the queue and expires keys and labs", "process", m.id)
	case !leads && said:
		m.log.Info("another process leads now: this one no longer relays the queue", "process", m.id)
	}
}

// failed notes a renewal that failed; once the lease has run out, its
// loss is logged, once.
func (m *member) failed(err error) {
	m.mu.Lock()
	out := !m.clock.Now().Before(m.until)
	log := out && !m.lapsed
	m.lapsed = m.lapsed || out
	m.said = m.said && !out // the loss's line says it leads no more
	refusedBefore := m.refused != nil
	var crowd *Crowded
	if errors.As(err, &crowd) {
		m.refused = err
	}
	m.mu.Unlock()
	switch {
	case crowd != nil && !refusedBefore:
		m.log.Error("this process cannot take its lease again: it would run beside another as it started", "err", err)
	case log:
		m.log.Warn("lease on the database lost: this process's writes are refused until it renews it", "process", m.id, "err", err)
	}
}

// sqlRenew renews this process's lease ($1, for $2 ms) and says whether it
// leads (no live process took its lease before it) and whether a process
// is dead (its lease ended a whole lease ago). A lease renewed after it
// ran out counts as taken anew: its process is the newest.
const sqlRenew = `
WITH now AS (SELECT db_ms() AS ms),
me AS (
    UPDATE processes SET lease_until = now.ms + $2,
        started_at = CASE WHEN processes.lease_until <= now.ms THEN now.ms ELSE processes.started_at END
    FROM now WHERE processes.id = $1
    RETURNING processes.started_at, now.ms
)
SELECT NOT EXISTS (SELECT 1 FROM processes p WHERE p.id <> $1 AND p.lease_until > me.ms
        AND (p.started_at < me.started_at OR p.started_at = me.started_at AND p.id < $1)),
    EXISTS (SELECT 1 FROM processes p WHERE p.id <> $1 AND p.lease_until <= me.ms - $2)
FROM me`

// renew renews the lease, or takes it again when its row has gone; it
// reports whether a process is dead.
func (m *member) renew(ctx context.Context, pool *pgxpool.Pool) (dead bool, err error) {
	sent := m.clock.Now()
	var leads bool
	err = pool.QueryRow(ctx, sqlRenew, m.id, m.lease.Milliseconds()).Scan(&leads, &dead)
	if errors.Is(err, pgx.ErrNoRows) { // taken away: this process was given up for dead
		m.mu.Lock()
		parts, joined := m.parts, m.joined
		m.mu.Unlock()
		var crowd *Crowded
		if crowd, _, err = m.take(ctx, pool, parts, joined); err == nil && crowd != nil {
			err = crowd
		}
		if err == nil {
			m.log.Warn("lease on the database taken again: this process had been given up for dead, and its work mended", "process", m.id)
		}
		leads = false // the newest: the next renewal says
	}
	if err != nil {
		m.failed(err)
		return false, err
	}
	m.renewed(sent, leads)
	return dead, nil
}

// keep renews the lease every third of it until ctx ends, and mends the
// work of the dead when a renewal finds one.
func (m *member) keep(ctx context.Context, s *Store, t clock.Ticker) {
	defer close(m.done)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		rctx, cancel := context.WithTimeout(ctx, m.lease) // answered late, it still renews
		dead, err := m.renew(rctx, s.mpool)
		if err == nil && dead {
			err = s.MendDead(rctx)
			if err != nil && ctx.Err() == nil {
				m.log.Warn("mend the work of a dead process", "err", err)
			}
		}
		cancel()
	}
}

// start takes the lease (Open), renews it at once to learn whether this
// process leads, and starts keeping it.
func (m *member) start(ctx context.Context, s *Store) (alone bool, err error) {
	_, peers, err := m.take(ctx, s.mpool, "", false)
	if err == nil {
		_, err = m.renew(ctx, s.mpool)
	}
	if err != nil {
		return false, fmt.Errorf("store: take a lease: %w", err)
	}
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.stop, m.done = cancel, make(chan struct{})
	go m.keep(kctx, s, m.clock.NewTicker(m.lease/3))
	return len(peers) == 0, nil
}
