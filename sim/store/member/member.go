// Package member is a process's membership of a PostgreSQL database: the
// processes on one database know of each other from the table processes, a
// row each, whose lease its process renews every third of it, on the
// database's clock (SPEC, "Membership survives a restart of PostgreSQL"). A row outlives the connections that wrote it: a restart
// of PostgreSQL drops every session, and no lease with them.
//
//   - A process whose lease is current is live; the live one that took its
//     lease first leads (Member.Leads): it publishes the outbox and expires.
//   - One that could not renew before its lease's end has lost it: its
//     writing transactions are refused (ErrLeaseLost) until it renews, and
//     a renewal that finds the row gone takes it again.
//   - One whose lease ended a whole lease ago is dead: another takes its
//     row away and mends the work it owned (the store's MendDead, which
//     Start is given), in one transaction.
//   - Every writing transaction begins with the lease step (hold_lease): a
//     process whose lease is not current cannot write, and its row stays
//     until the transaction ends (the process's advisory lock, shared by
//     its writes), so that nobody mends what it may commit.
//
// On SQLite one process runs: its row is the only one, it always leads,
// and what the last run owned is its own to mend; the store writes that
// row itself.
package member

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

// DefaultLease is how long a lease lasts unrenewed: a process that dies is
// replaced as the leader within it, and its work mended a lease later.
const DefaultLease = 5 * time.Second

// ErrLeaseLost is what a writing transaction gets while this process
// holds no current lease (the store's IsUnavailable: the web answers 503).
var ErrLeaseLost = errors.New("store: this process holds no current lease on the database; it writes again once it has renewed it")

// lostCode is the SQLSTATE hold_lease raises.
const lostCode = "IL001"

// Step is the lease's step in the first statement of every writing
// transaction on PostgreSQL (migrations 0004, 0013): it fails unless the
// lease of process $1 is current, and holds its row until the transaction
// ends: the process's advisory lock, shared, which burying the row takes
// alone (the store's sqlBury and sqlAlone).
const Step = `hold_lease($1)`

// IsLost reports whether err is a write refused for want of a lease.
func IsLost(err error) bool {
	return errors.Is(err, ErrLeaseLost) || pgsql.Code(err) == lostCode
}

// Member is this process's membership.
type Member struct {
	id, name string
	lease    time.Duration
	clock    clock.Clock
	log      *slog.Logger

	mu      sync.Mutex
	parts   string    // what it keeps to itself, as Join recorded it
	joined  bool      // Join has run: taking the lease again checks the parts
	until   time.Time // by clock: the lease holds at least until then
	leads   bool      // the last renewal found it the leader
	lapsed  bool      // its loss was logged
	refused error     // why taking the lease again was refused (logged once)

	stop context.CancelFunc
	done chan struct{}
}

// New is this process's membership, not yet taken (Start): its lease
// lasts lease unrenewed (0: DefaultLease), its renewals are ticked by c
// (nil: the real clock), what it loses and takes again is logged to log
// (nil: discarded).
func New(lease time.Duration, c clock.Clock, log *slog.Logger) *Member {
	if lease <= 0 {
		lease = DefaultLease
	}
	if c == nil {
		c = clock.Real()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b [8]byte
	rand.Read(b[:])
	host, _ := os.Hostname()
	return &Member{id: hex.EncodeToString(b[:]), name: fmt.Sprintf("%s/%d", host, os.Getpid()),
		lease: lease, clock: c, log: log}
}

// ID is this process's id in the table processes: the owner of the work
// it writes.
func (m *Member) ID() string { return m.id }

// Name is this process as people know it: host/pid.
func (m *Member) Name() string { return m.name }

// Lease is how long its lease lasts unrenewed.
func (m *Member) Lease() time.Duration { return m.lease }

// Log is where the membership logs.
func (m *Member) Log() *slog.Logger { return m.log }

// Leads reports whether this process leads, as its last renewal found,
// while that renewal's lease lasts.
func (m *Member) Leads() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leads && m.clock.Now().Before(m.until)
}

// Holds reports whether the lease is current by this process's reckoning.
func (m *Member) Holds() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clock.Now().Before(m.until)
}

// Hold is a writing transaction's first statement, st (PostgreSQL's
// placeholders): the transaction's id (the store's txStep), then the lease
// step (its first argument, this process; more are the rest of st's, such
// as a lab to lock). It is refused at once when this process knows its
// lease lost, and by the database when it is not current there (Refused). The transaction's id is what a COMMIT
// whose answer was lost is settled by (the store's settle).
func (m *Member) Hold(st string, more ...any) (pgsql.Statement, error) {
	if !m.Holds() {
		m.failed(ErrLeaseLost) // it ran out before a renewal failed (one late): logged once all the same
		return pgsql.Statement{}, ErrLeaseLost
	}
	return pgsql.Statement{Query: st, Args: append([]any{m.id}, more...)}, nil
}

// Refused is err, the failure of a first statement of Hold's, marked
// ErrLeaseLost when the database refused the lease.
func Refused(err error) error {
	if pgsql.Code(err) == lostCode {
		return fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return err
}

// renewed notes a lease renewed (or taken) by a statement sent at sent.
func (m *Member) renewed(sent time.Time, leads bool) {
	m.mu.Lock()
	lapsed, said := m.lapsed, m.leads && !m.lapsed // its log last said it leads
	m.until, m.leads, m.refused, m.lapsed = sent.Add(m.lease), leads, nil, false
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
func (m *Member) failed(err error) {
	m.mu.Lock()
	out := !m.clock.Now().Before(m.until)
	log := out && !m.lapsed
	m.lapsed = m.lapsed || out
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
func (m *Member) renew(ctx context.Context, pool *pgxpool.Pool) (dead bool, err error) {
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
// work of the dead (mend) when a renewal finds one.
func (m *Member) keep(ctx context.Context, pool *pgxpool.Pool, t clock.Ticker, mend func(context.Context) error) {
	defer close(m.done)
	clock.Ticks(ctx, t, func() {
		rctx, cancel := context.WithTimeout(ctx, m.lease) // answered late, it still renews
		defer cancel()
		if dead, err := m.renew(rctx, pool); err == nil && dead {
			if err := mend(rctx); err != nil && ctx.Err() == nil {
				m.log.Warn("mend the work of a dead process", "err", err)
			}
		}
	})
}

// Start takes the lease, renews it at once to learn whether this process
// leads, and keeps it until Stop, on pool (the membership's own
// connections); mend takes the dead's rows away and mends their work. It
// reports whether no other process was on the database.
func (m *Member) Start(ctx context.Context, pool *pgxpool.Pool, mend func(context.Context) error) (alone bool, err error) {
	_, peers, err := m.take(ctx, pool, "", false)
	if err == nil {
		_, err = m.renew(ctx, pool)
	}
	if err != nil {
		return false, fmt.Errorf("store: take a lease: %w", err)
	}
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.stop, m.done = cancel, make(chan struct{})
	go m.keep(kctx, pool, m.clock.NewTicker(m.lease/3), mend)
	return len(peers) == 0, nil
}

// Stop ends the renewals, as a kill would, and reports whether they had
// started; the lease then ends by itself, or the store's leaving takes the
// row away.
func (m *Member) Stop() bool {
	if m.stop == nil {
		return false
	}
	m.stop()
	<-m.done
	return true
}
