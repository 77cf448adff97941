// Package labs holds the labs: each lab's settings and lesson as an
// immutable snapshot, its life (made, loaded when used, let go from memory
// when idle, reset, removed with everything in it), the limits of what it
// may have in flight, and the rooms that keep its parts: every mechanism
// plugs into a lab's life through Room, not through more methods here.
package labs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"idemlab/sim"
	"idemlab/sim/budget"
	"idemlab/sim/store"
)

// The kinds of labs.
const (
	KindDemo     = "demo"
	KindPrivate  = "private"
	KindCompare  = "compare"  // made by a comparison run; idles out like any other
	KindBuilding = "building" // a scenario link's lab, until it is whole
	kindDoomed   = "doomed"   // being removed
)

// Lab is one isolated world: ledger, idempotency records, settings, history.
//
// What a lab is set to (its settings and lesson) is an immutable snapshot,
// replaced whole after the transaction that changed it commits: readers
// never wait, neither on a lock nor on the store, and no lock of the lab is
// ever held while the store is used.
type Lab struct {
	ID string

	state atomic.Pointer[State]

	// turn lets one lesson action (a set-up or a step) run at a time: a
	// token, taken with the caller's context, not a lock.
	turn chan struct{}

	used     atomic.Int64 // unix ns of the last use: an idle lab leaves memory
	touched  atomic.Int64 // unix ms of touched_at as last written
	active   atomic.Int32 // operations running: a lab in use never leaves memory
	inFlight slots        // simulated requests of this lab in flight

	capacity budget.Capacity // its server's charges a second (capacity_rps)
	retries  budget.Retries  // its client's retry budget
}

// Capacity is the limiter of the lab's charge endpoint.
func (l *Lab) Capacity() *budget.Capacity { return &l.capacity }

// Retries is the retry budget of the lab's client.
func (l *Lab) Retries() *budget.Retries { return &l.retries }

// State is a lab's settings and lesson as of one revision.
type State struct {
	Rev      int64
	Gen      int64 // the lab's resets: what was kept in memory before one is stale
	Kind     string
	Settings sim.Settings
	Lesson   sim.LessonState
	Clock    time.Duration // how far the lab's clock runs ahead of the process's, for expiry
}

func newLab(id string, st State, perLab int64) *Lab {
	l := &Lab{ID: id, turn: make(chan struct{}, 1), inFlight: slots{max: perLab}}
	l.state.Store(&st)
	return l
}

// Settings returns the lab's current settings.
func (l *Lab) Settings() sim.Settings { return l.state.Load().Settings }

// Clock is how far the lab's clock runs ahead of the process's: expiry (of
// idempotency records and of the key-value store's keys) goes by the lab's.
func (l *Lab) Clock() time.Duration { return l.state.Load().Clock }

// Lesson returns where the lab is in its lesson.
func (l *Lab) Lesson() sim.LessonState { return l.state.Load().Lesson }

// Gen is the lab's reset generation: bumped by every reset.
func (l *Lab) Gen() int64 { return l.state.Load().Gen }

// publish makes st the lab's state, unless a newer one is there already
// (two changes may commit in one order and publish in the other).
func (l *Lab) publish(st State) {
	for {
		cur := l.state.Load()
		if cur.Rev >= st.Rev || l.state.CompareAndSwap(cur, &st) {
			return
		}
	}
}

// TakeTurn waits for the lab's lesson turn, or for ctx to end.
func (l *Lab) TakeTurn(ctx context.Context) (release func(), err error) {
	select {
	case l.turn <- struct{}{}:
		return func() { <-l.turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Hold keeps the lab in memory while work runs in it; the function returned
// lets go.
func (l *Lab) Hold() (release func()) {
	l.active.Add(1)
	return func() { l.active.Add(-1) }
}

const stateQuery = `
SELECT l.settings, l.rev, l.gen, l.kind, l.clock_ms, COALESCE(ll.lesson, 0), (ll.ready IS NOT NULL AND ll.ready), COALESCE(ll.next, 0)
FROM labs l LEFT JOIN lab_lessons ll ON ll.lab_id = l.id WHERE l.id = ?`

// scanState reads a lab's state from a row of stateQuery; ENotFound when
// there is none.
func scanState(row store.Row, id string) (State, error) {
	var (
		st    State
		raw   string
		clock int64
	)
	err := row.Scan(&raw, &st.Rev, &st.Gen, &st.Kind, &clock, &st.Lesson.N, &st.Lesson.Ready, &st.Lesson.Next)
	if errors.Is(err, sql.ErrNoRows) {
		return State{}, sim.NoLab(id)
	}
	if err != nil {
		return State{}, fmt.Errorf("lab %s: %w", id, err)
	}
	// Clamped, so that the offset never wraps round, whatever is stored.
	st.Clock = time.Duration(min(max(clock, 0), sim.MaxClockOffset*1000)) * time.Millisecond
	st.Settings = sim.DefaultSettings() // a lab saved before a setting existed has its default
	if err := json.Unmarshal([]byte(raw), &st.Settings); err != nil {
		return State{}, fmt.Errorf("lab %s settings: %w", id, err)
	}
	return st, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	return string(b)
}
