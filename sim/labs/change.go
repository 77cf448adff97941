package labs

import (
	"context"
	"fmt"

	"idemlab/sim"
	"idemlab/sim/store"
)

// Change runs fn in a writing transaction on the lab's current state (as
// stored, not as kept: two changes in one group commit see each other),
// bumps the lab's revision, and publishes the new state once committed.
func (r *Registry) Change(ctx context.Context, l *Lab, fn func(tx *store.Tx, cur State) error) (prev, next State, err error) {
	return change(ctx, l, func(fn func(*store.Tx) error) error { return r.store.WriteLab(ctx, l.ID, fn) }, fn)
}

// ChangeAside is Change for a change of the lab's own state that numbers
// none of its rows (a lesson's move): it does not queue behind the lab's
// writes, whose lock a stepped racer's open transaction may hold on
// PostgreSQL while a person thinks. Changes still run one at a time:
// the first statement takes the lab's row.
func (r *Registry) ChangeAside(ctx context.Context, l *Lab, fn func(tx *store.Tx, cur State) error) (prev, next State, err error) {
	return change(ctx, l, func(fn func(*store.Tx) error) error {
		return r.store.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(`UPDATE labs SET rev = rev WHERE id = ?`, l.ID); err != nil {
				return err
			}
			return fn(tx)
		})
	}, fn)
}

func change(ctx context.Context, l *Lab, write func(func(*store.Tx) error) error, fn func(tx *store.Tx, cur State) error) (prev, next State, err error) {
	err = write(func(tx *store.Tx) error {
		if prev, err = scanState(tx.QueryRow(stateQuery, l.ID), l.ID); err != nil {
			return err
		}
		if err := fn(tx, prev); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE labs SET rev = rev + 1 WHERE id = ?`, l.ID); err != nil {
			return err
		}
		next, err = scanState(tx.QueryRow(stateQuery, l.ID), l.ID)
		return err
	})
	if err != nil {
		return State{}, State{}, Gone(l.ID, err)
	}
	l.publish(next)
	return prev, next, nil
}

// Gone turns a write that failed because its lab was removed meanwhile into
// ENotFound; other errors pass unchanged.
func Gone(lab string, err error) error {
	if store.IsGone(err) {
		return sim.NoLab(lab)
	}
	return err
}

// Failed wraps an error of the store with what was being done; a lab
// removed meanwhile is ENotFound, and the lab's own refusals pass as they are.
func Failed(lab, what string, err error) error {
	if err = Gone(lab, err); sim.ErrorCode(err) != sim.EInternal {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// UpdateSettings merges p into the lab's settings and stores them.
func (r *Registry) UpdateSettings(ctx context.Context, l *Lab, p sim.SettingsPatch) (sim.Settings, error) {
	if s, err := l.Settings().Apply(p); err != nil {
		return sim.Settings{}, err // refused before it queues for the writer
	} else if err := r.Check(s); err != nil {
		return sim.Settings{}, err
	}
	_, next, err := r.Change(ctx, l, func(tx *store.Tx, cur State) error {
		s, err := cur.Settings.Apply(p)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE labs SET settings = ? WHERE id = ?`, mustJSON(s), l.ID); err != nil {
			return err
		}
		tx.Notify(sim.Event{Lab: l.ID, Kind: sim.EventSettings, Settings: &s}) // the others' copies go stale with it
		return r.Record(tx, l.ID, sim.Action{Kind: "settings", Settings: &p})
	})
	if err != nil {
		return sim.Settings{}, Failed(l.ID, "labs: save settings of "+l.ID, err)
	}
	s := next.Settings
	r.bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventSettings, Settings: &s})
	return s, nil
}

// Reset empties the lab's payments, idempotency records and history, keeps
// its settings, and numbers its operations from 1 again, so that its seed
// draws the same as before. A lesson's step that is running ends first; the
// lesson must then be set up again.
func (r *Registry) Reset(ctx context.Context, l *Lab) error {
	release, err := l.TakeTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	return r.ResetInTurn(ctx, l)
}

// ResetInTurn is Reset for a caller that has the lab's turn.
func (r *Registry) ResetInTurn(ctx context.Context, l *Lab) error {
	halt(ctx, r.rooms, l.ID, Emptied)
	_, _, err := r.Change(ctx, l, func(tx *store.Tx, cur State) error {
		for _, room := range r.rooms {
			if err := room.Reset(ctx, tx, l.ID); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(`UPDATE labs SET clock_ms = 0, gen = gen + 1 WHERE id = ?`, l.ID); err != nil {
			return err
		}
		// What the other processes keep of the lab is stale once it commits.
		tx.Notify(sim.Event{Lab: l.ID, Kind: sim.EventReset})

		base := cur.Settings // a scenario starts again here
		return r.Record(tx, l.ID, sim.Action{Kind: "base", Base: &base})
	})
	if err != nil {
		return Failed(l.ID, "labs: reset "+l.ID, err)
	}
	closeRooms(ctx, r.rooms, l.ID, Emptied)
	r.bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventReset})
	return nil
}

// halt stops the rooms' work in the lab that holds its locks (Halter).
func halt(ctx context.Context, rooms []Room, lab string, why Closing) {
	for _, room := range rooms {
		if h, ok := room.(Halter); ok {
			h.Halt(ctx, lab, why)
		}
	}
}

// closeRooms tells every room to let go of the lab, for why.
func closeRooms(ctx context.Context, rooms []Room, lab string, why Closing) {
	for _, room := range rooms {
		room.Close(ctx, lab, why)
	}
}
