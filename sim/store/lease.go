package store

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"idemlab/sim/clock"
	"idemlab/sim/store/member"
)

// The processes on one database know of each other from leases in the
// table processes (package member): the leader runs what must run once per
// database, a process whose lease lapsed cannot write, and a dead one's
// work is mended by a live one (MendDead).

// DefaultLease is how long a lease lasts unrenewed: a process that dies is
// replaced as the leader within it, and its work mended a lease later.
const DefaultLease = member.DefaultLease

// Options are how a store takes part in the membership.
type Options struct {
	Lease time.Duration // 0: DefaultLease
	Clock clock.Clock   // ticks the renewals (every Lease/3); nil: the real one
	Log   *slog.Logger  // the lease lost and taken again; nil: discarded
}

// ErrLeaseLost is what a writing transaction gets while this process
// holds no current lease (IsUnavailable: the web answers 503).
var ErrLeaseLost = member.ErrLeaseLost

// IsLeaseLost reports whether err is a write refused for want of a lease.
func IsLeaseLost(err error) bool { return member.IsLost(err) }

// leaseStep is the lease's step in the first statement of every writing
// transaction on PostgreSQL (member.Step).
const leaseStep = member.Step

// Crowded is Join's refusal: a process that would keep a part to itself,
// or one beside a process that keeps one, is not alone on the database.
type Crowded = member.Crowded

// Process is the id of this process in the table processes: the owner of
// the work it writes (an attempt, a claim, an email it sends).
func (s *Store) Process() string { return s.m.ID() }

// Lead reports whether this process is the one that runs what must run
// once per database: the live process that took its lease first, as its
// last renewal found, while that renewal's lease lasts. Always, on SQLite.
func (s *Store) Lead(context.Context) bool { return !s.Postgres() || s.m.Leads() }

// Join records the parts this process keeps to itself (the embedded
// servers it would run: their names) and refuses, with a *Crowded, when it
// would not be alone with them (member.Member.Join). Alone reports, after
// Join, whether no other process was there.
func (s *Store) Join(ctx context.Context, parts []string) error {
	if !s.Postgres() {
		_, err := s.w.ExecContext(ctx, `UPDATE processes SET parts = ? WHERE id = ?`, s.m.Parts(parts), s.m.ID())
		return err
	}
	alone, err := s.m.Join(ctx, s.mpool, parts)
	if err == nil {
		s.alone = alone
	}
	return err
}

// Alone reports whether no other process ran on the database when this one
// joined (Join), or opened it: what the last run left unfinished and owns
// no one (a lab half built or half removed) is this one's. Always, on
// SQLite.
func (s *Store) Alone() bool { return s.alone }

// Mending sets fn, which mends, in the transaction it is given, the work
// of the processes that have no row: dead (MendDead took their row away),
// gone (they left), or from before the table (a NULL owner).
func (s *Store) Mending(fn func(*Tx) error) { s.mender.fn.Store(&fn) }

// mender holds what mends the work of processes with no row (Mending).
type mender struct {
	fn atomic.Pointer[func(*Tx) error]
}

// get is the function Mending set, or nil.
func (m *mender) get() func(*Tx) error {
	if fn := m.fn.Load(); fn != nil {
		return *fn
	}
	return nil
}
