package sim

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// DemoLab is the id of the lab that always exists and everyone shares.
const DemoLab = "demo"

// Lab is one isolated world: ledger, idempotency records, settings, history.
//
// What a lab is set to (its settings and lesson) is an immutable snapshot,
// replaced whole after the transaction that changed it commits: readers
// never wait, neither on a lock nor on the store, and no lock of the lab is
// ever held while the store is used. Its randomness is a function of its
// seed (draws), not a source it keeps.
type Lab struct {
	ID string

	state atomic.Pointer[labState]

	// turn lets one lesson action (a set-up or a step) run at a time: a
	// token, taken with the caller's context, not a lock.
	turn chan struct{}

	used     atomic.Int64 // unix ns of the last use: an idle lab leaves memory
	touched  atomic.Int64 // unix ms of touched_at as last written
	active   atomic.Int32 // operations running: a lab in use never leaves memory
	inFlight slots        // simulated requests of this lab in flight

	scenario atomic.Pointer[scenarioCache]
}

// labState is a lab's settings and lesson as of one revision.
type labState struct {
	rev      int64
	kind     string
	settings Settings
	lesson   LessonState
	clock    time.Duration // how far the lab's clock runs ahead of the engine's, for expiry
}

func newLab(id string, st labState, perLab int64) *Lab {
	l := &Lab{ID: id, turn: make(chan struct{}, 1), inFlight: slots{max: perLab}}
	l.state.Store(&st)
	return l
}

// Settings returns the lab's current settings.
func (l *Lab) Settings() Settings { return l.state.Load().settings }

// Clock is how far the lab's clock runs ahead of the engine's: expiry (of
// idempotency records and of the key-value store's keys) goes by the lab's.
func (l *Lab) Clock() time.Duration { return l.state.Load().clock }

// Lesson returns where the lab is in its lesson.
func (l *Lab) Lesson() LessonState { return l.state.Load().lesson }

// publish makes st the lab's state, unless a newer one is there already
// (two changes may commit in one order and publish in the other).
func (l *Lab) publish(st labState) {
	for {
		cur := l.state.Load()
		if cur.rev >= st.rev || l.state.CompareAndSwap(cur, &st) {
			return
		}
	}
}

// takeTurn waits for the lab's lesson turn, or for ctx to end.
func (l *Lab) takeTurn(ctx context.Context) (release func(), err error) {
	select {
	case l.turn <- struct{}{}:
		return func() { <-l.turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// queryRower is a transaction or a database, for reads that run in either.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// loadState reads a lab's settings and lesson; ENotFound when it is gone.
func loadState(ctx context.Context, q queryRower, id string) (labState, error) {
	var (
		st    labState
		raw   string
		clock int64
	)
	err := q.QueryRowContext(ctx, `
SELECT l.settings, l.rev, l.kind, l.clock_ms, COALESCE(ll.lesson, 0), (ll.ready IS NOT NULL AND ll.ready), COALESCE(ll.next, 0)
FROM labs l LEFT JOIN lab_lessons ll ON ll.lab_id = l.id WHERE l.id = ?`, id).
		Scan(&raw, &st.rev, &st.kind, &clock, &st.lesson.N, &st.lesson.Ready, &st.lesson.Next)
	st.clock = time.Duration(clock) * time.Millisecond
	if errors.Is(err, sql.ErrNoRows) {
		return labState{}, noLab(id)
	}
	if err != nil {
		return labState{}, fmt.Errorf("lab %s: %w", id, err)
	}
	st.settings = DefaultSettings() // a lab saved before a setting existed has its default
	if err := json.Unmarshal([]byte(raw), &st.settings); err != nil {
		return labState{}, fmt.Errorf("lab %s settings: %w", id, err)
	}
	return st, nil
}

func noLab(id string) error { return Errorf(ENotFound, "no-lab", clip(id)) }

// change runs fn in a writing transaction on the lab's current state (as
// stored, not as cached: two changes in one group commit see each other),
// bumps the lab's revision, and publishes the new state once committed.
func (e *Engine) change(ctx context.Context, l *Lab, fn func(tx *sql.Tx, cur labState) error) (prev, next labState, err error) {
	err = e.store.tx(ctx, func(tx *sql.Tx) error {
		if prev, err = loadState(ctx, tx, l.ID); err != nil {
			return err
		}
		if err := fn(tx, prev); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE labs SET rev = rev + 1 WHERE id = ?`, l.ID); err != nil {
			return err
		}
		next, err = loadState(ctx, tx, l.ID)
		return err
	})
	if err != nil {
		return labState{}, labState{}, e.gone(l, err)
	}
	l.publish(next)
	return prev, next, nil
}

// gone turns a write that failed because its lab was removed meanwhile into
// ENotFound; other errors pass unchanged.
func (e *Engine) gone(l *Lab, err error) error {
	if isGone(err) {
		return noLab(l.ID)
	}
	return err
}

// UpdateSettings merges p into the lab's settings and stores them.
func (e *Engine) UpdateSettings(ctx context.Context, l *Lab, p SettingsPatch) (Settings, error) {
	if s, err := l.Settings().Apply(p); err != nil {
		return Settings{}, err // refused before it queues for the writer
	} else if err := e.checkStore(s); err != nil {
		return Settings{}, err
	}
	_, next, err := e.change(ctx, l, func(tx *sql.Tx, cur labState) error {
		s, err := cur.settings.Apply(p)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE labs SET settings = ? WHERE id = ?`, mustJSON(s), l.ID); err != nil {
			return err
		}
		return e.record(ctx, tx, l.ID, Action{Kind: "settings", Settings: &p})
	})
	if err != nil {
		if ErrorCode(err) != EInternal {
			return Settings{}, err
		}
		return Settings{}, fmt.Errorf("engine: save settings of %s: %w", l.ID, err)
	}
	s := next.settings
	e.emit(Event{Lab: l.ID, Kind: EventSettings, Settings: &s})
	return s, nil
}

// Reset empties the lab's payments, idempotency records and history, keeps
// its settings, and numbers its operations from 1 again, so that its seed
// draws the same as before. A lesson's step that is running ends first; the
// lesson must then be set up again.
func (e *Engine) Reset(ctx context.Context, l *Lab) error {
	release, err := l.takeTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	return e.reset(ctx, l)
}

// reset is Reset for a caller that has the lab's turn.
func (e *Engine) reset(ctx context.Context, l *Lab) error {
	_, _, err := e.change(ctx, l, func(tx *sql.Tx, cur labState) error {
		for _, r := range e.rooms {
			if err := r.Reset(ctx, tx, l.ID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE labs SET clock_ms = 0 WHERE id = ?`, l.ID); err != nil {
			return err
		}
		base := cur.settings // a scenario starts again here
		return e.record(ctx, tx, l.ID, Action{Kind: "base", Base: &base})
	})
	if err != nil {
		if ErrorCode(err) != EInternal {
			return err
		}
		return fmt.Errorf("engine: reset %s: %w", l.ID, err)
	}
	e.forgetRecords(ctx, l.ID)
	e.emit(Event{Lab: l.ID, Kind: EventReset})
	return nil
}

// forgetRecords forgets what the engine keeps of a lab's keys outside the
// ledger (its finished records, its keys in the key-value store): the lab
// was reset.
func (e *Engine) forgetRecords(ctx context.Context, id string) {
	e.answers.forget(id)
	e.forgetKeys(ctx, id)
}

// drop lets a lab go from this process's memory, with its finished
// records: the lab is removed.
func (e *Engine) drop(id string) {
	e.labs.mu.Lock()
	delete(e.labs.m, id)
	e.labs.mu.Unlock()
	e.answers.forget(id)
}

// stamp is the engine's current time as stored in the database.
func (e *Engine) stamp() string { return e.now().UTC().Format(time.RFC3339Nano) }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	return string(b)
}

// clip shortens text taken from a request to at most 200 bytes (on a rune
// boundary), so that an answer never echoes a huge input back.
func clip(s string) string {
	const most = 200
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
