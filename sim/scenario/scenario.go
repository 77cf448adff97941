// Package scenario is what a lab was given and what was done to it since,
// as a link that rebuilds it: the code of a lab's actions, a new lab built
// from a code (whole, or not at all), and the player that takes one action,
// for the links and the lessons alike.
package scenario

import (
	"compress/flate"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"idemlab/sim"
	"idemlab/sim/client"
	"idemlab/sim/client/storm"
	"idemlab/sim/idempotency"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
	"idemlab/sim/orders"
	"idemlab/sim/stepped"
	"idemlab/sim/store"
)

// Scenarios are the labs' scenarios.
type Scenarios struct {
	store  *store.Store
	labs   *labs.Registry
	client *client.Client
	ledger *ledger.Ledger
	orders *orders.Orders
	keys   *idempotency.Keys
	races  *stepped.Races
	storms *storm.Storms
	log    *slog.Logger

	flaters sync.Pool // *flate.Writer: a new one allocates about a megabyte

	mu    sync.Mutex
	codes map[string]code // by lab: its code as of one action
}

// code is a lab's scenario code as of one action.
type code struct {
	seq     int64 // labs.action_seq the code was made at
	actions int
	code    string
	ok      bool
}

// New returns the scenarios of the labs, played through the client, the
// ledger, the orders and the keys' clock.
func New(s *store.Store, reg *labs.Registry, c *client.Client, g *ledger.Ledger, o *orders.Orders, k *idempotency.Keys, r *stepped.Races, st *storm.Storms, log *slog.Logger) *Scenarios {
	return &Scenarios{store: s, labs: reg, client: c, ledger: g, orders: o, keys: k, races: r, storms: st, log: log, codes: map[string]code{}}
}

// Room is the scenario's part in a lab's life: its actions (a reset
// records a new base, which empties them) and its code kept in memory.
func (sc *Scenarios) Room() labs.Room {
	return room{sc, labs.Tables{Store: sc.store,
		Purges: []string{`DELETE FROM lab_actions WHERE (lab_id, seq) IN (SELECT lab_id, seq FROM lab_actions WHERE lab_id = ?1 LIMIT ?2)`}}}
}

type room struct {
	sc *Scenarios
	labs.Tables
}

func (r room) Close(_ context.Context, lab string, _ labs.Closing) {
	r.sc.mu.Lock()
	delete(r.sc.codes, lab)
	r.sc.mu.Unlock()
}

// Code returns the lab's scenario as a code for a link, and how many
// actions it holds. ok is false when it holds more than a link carries (the
// link could not be opened). The code is made once per change of the lab:
// a page rendered again costs one read.
func (sc *Scenarios) Code(ctx context.Context, l *labs.Lab) (string, int, bool, error) {
	var seq, baseSeq int64
	err := sc.store.QueryRow(ctx, `SELECT action_seq, base_seq FROM lab_counts WHERE lab_id = ?`, l.ID).Scan(&seq, &baseSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, sim.NoLab(l.ID)
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("scenario of %s: %w", l.ID, err)
	}
	sc.mu.Lock()
	c, ok := sc.codes[l.ID]
	sc.mu.Unlock()
	if ok && c.seq == seq {
		return c.code, c.actions, c.ok, nil
	}
	c = code{seq: seq, actions: int(seq - baseSeq)}
	if c.actions <= sim.MaxScenarioActions {
		s, err := sc.Scenario(ctx, l)
		if err != nil {
			return "", 0, false, err
		}
		c.code, c.ok, c.actions = sc.encode(s), true, len(s.Actions)
	}
	sc.mu.Lock()
	sc.codes[l.ID] = c
	sc.mu.Unlock()
	return c.code, c.actions, c.ok, nil
}

// encode is Encode with a deflate writer of the pool.
func (sc *Scenarios) encode(s sim.Scenario) string {
	w, ok := sc.flaters.Get().(*flate.Writer)
	if !ok {
		w, _ = flate.NewWriter(nil, flate.BestCompression)
	}
	defer sc.flaters.Put(w)
	return encode(s, w)
}

// Scenario returns what the lab was given and what was done to it since.
func (sc *Scenarios) Scenario(ctx context.Context, l *labs.Lab) (sim.Scenario, error) {
	s := sim.Scenario{Base: l.Settings(), Actions: []sim.Action{}}
	rows, err := sc.store.Query(ctx, `
SELECT action FROM lab_actions WHERE lab_id = ?1 AND seq >= (SELECT base_seq FROM lab_counts WHERE lab_id = ?1) ORDER BY seq`, l.ID)
	if err != nil {
		return sim.Scenario{}, fmt.Errorf("scenario of %s: %w", l.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			raw string
			a   sim.Action
		)
		if err := rows.Scan(&raw); err != nil {
			return sim.Scenario{}, err
		}
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			return sim.Scenario{}, fmt.Errorf("scenario of %s: %w", l.ID, err)
		}
		if a.Kind == "base" && a.Base != nil {
			s.Base, s.Actions = *a.Base, []sim.Action{}
			continue
		}
		s.Actions = append(s.Actions, a)
	}
	return s, rows.Err()
}
