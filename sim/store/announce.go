package store

import (
	"context"
	"sync/atomic"

	"idemlab/sim"
	"idemlab/sim/store/pgsql"
)

// Told is an event a writing transaction tells the other processes
// (Tx.Notify), with its number among this store's notices: the number by
// which the writer learns that the others have heard it (Announce's
// spread).
type Told struct {
	Ev sim.Event
	N  int64
}

// Notify tells ev to the other processes on the database when, and only
// if, this transaction commits: the writer sends what its transaction was
// told in one statement, its last before COMMIT (PostgreSQL's NOTIFY,
// which delivers at the commit, in commit order, or never). What a job of a
// group commit told goes with its savepoint when the job fails. Nothing is
// sent when nobody listens (SQLite: one process; before Store.Announce), nor
// from a transaction outside the writer (Isolated), which changes no lab.
// Write and WriteLab return once the others have heard it (Announce).
func (t *Tx) Notify(ev sim.Event) {
	if t.told != nil {
		t.last = t.an.seq.Add(1)
		*t.told = append(*t.told, Told{Ev: ev, N: t.last})
	}
}

// announcer is where what the writing transactions tell goes (Tx.Notify).
type announcer struct {
	channel string
	encode  func(sim.Event, int64) string
	spread  func(context.Context, int64)
	seq     *atomic.Int64 // the store's: numbers stay unique across Announce
}

// Announce has what each writing transaction tells (Tx.Notify) sent on
// channel inside that transaction, each event as encode makes it from the
// event and its number; a nil encode stops it. Once a transaction that
// told something has committed, Write (or WriteLab) calls spread with the
// number of its last notice before it returns: spread waits until the
// other processes have heard it, so that what a caller does next on
// another process finds them up to date. PostgreSQL only: on SQLite there
// is nobody to tell.
func (s *Store) Announce(channel string, encode func(sim.Event, int64) string, spread func(context.Context, int64)) {
	if s.pool == nil {
		return
	}
	if encode == nil {
		s.tw.announce.Store(nil)
		return
	}
	s.tw.announce.Store(&announcer{channel: channel, encode: encode, spread: spread, seq: &s.toldSeq})
}

// spread runs fn with run (a writing transaction), then, when it told
// something and committed, waits until the others have heard it (an's
// spread).
func spread(ctx context.Context, an *atomic.Pointer[announcer], fn func(*Tx) error, run func(context.Context, func(*Tx) error) error) error {
	if a := an.Load(); a == nil || a.spread == nil {
		return run(ctx, fn) // nobody to wait for
	}
	var n int64
	err := run(ctx, func(tx *Tx) error {
		err := fn(tx)
		n = tx.last
		return err
	})
	if a := an.Load(); err == nil && n > 0 && a != nil && a.spread != nil {
		a.spread(ctx, n)
	}
	return err
}

// statements are what a transaction's jobs told (evs, in their order), as
// the statement to send last before its COMMIT (pgsql.Tx.Commit): PostgreSQL
// delivers it at the commit, or never. A nil announcer (nobody listening)
// sends nothing.
func (a *announcer) statements(evs []Told) []pgsql.Statement {
	if a == nil || len(evs) == 0 {
		return nil
	}
	ps := make([]string, len(evs))
	for i, t := range evs {
		ps[i] = a.encode(t.Ev, t.N)
	}
	return []pgsql.Statement{{Query: `SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS n(p, i) ORDER BY i`, Args: []any{a.channel, ps}}}
}
