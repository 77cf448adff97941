// Package compare runs one fault script in a lab per protection × key
// source, side by side, and a second grid per consumer deduplication ×
// delivery fate, and keeps each run under an address of its own.
//
// A comparison is shared by its address, so it never names the labs behind
// its cells: whoever had the id of one could reset or delete it. Each cell
// keeps instead the scenario of its lab (its settings and what the script
// did), whose link builds every reader a new lab of their own; and the
// cells' labs are removed as soon as their results are read.
package compare

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/client"
	"idemlab/sim/clock"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
	"idemlab/sim/notify"
	"idemlab/sim/scenario"
	"idemlab/sim/store"
)

// Cell is one lab of a side-by-side comparison: a protection and a key
// source, what the script left in its ledger, and the scenario that
// rebuilds the lab.
type Cell struct {
	Protection  sim.Protection  `json:"protection"`
	KeyStrategy sim.KeyStrategy `json:"key_strategy"`
	// Scenario is the code of the cell's lab as the script left it (see
	// package scenario): /s/{code} builds a new lab of the opener's own
	// with its settings and script. "" when there is none.
	Scenario  string `json:"scenario,omitempty"`
	Count     int64  `json:"count"`
	Total     int64  `json:"total"`
	Purchases int64  `json:"purchases"` // what the script meant to charge
	// Cause is why the lab ended as it did: right (as many charges as
	// purchases), double (more), and when fewer, why the server charged
	// less: refused (a purchase answered "duplicate"), replayed (a purchase
	// answered with the first one's stored answer), rejected (400: the
	// protection wants a key and the client sent none), mismatch (422),
	// unavailable (503: a part the protection needs, Redis, did not
	// answer), failed (another error).
	Cause string `json:"cause"`
}

// Comparison is one side-by-side run, kept under an id of its own.
type Comparison struct {
	ID        string     `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	Script    sim.Script `json:"script"`
	Cells     []Cell     `json:"cells"`
	// MailCells is the second grid: consumer deduplication × delivery
	// fate, when the server runs its broker and mailbox.
	MailCells []MailCell `json:"mail_cells"`
}

// The causes of a comparison's cells.
const (
	CauseRight       = "right"
	CauseDouble      = "double"
	CauseRefused     = "refused"
	CauseReplayed    = "replayed"
	CauseRejected    = "rejected"
	CauseMismatch    = "mismatch"
	CauseUnavailable = "unavailable"
	CauseFailed      = "failed"
)

// atOnce is how many labs of a comparison run at the same time.
const atOnce = 4

// Comparisons run and keep the side-by-side comparisons.
type Comparisons struct {
	store     *store.Store
	labs      *labs.Registry
	client    *client.Client
	ledger    *ledger.Ledger
	notify    *notify.Notifier
	scenarios *scenario.Scenarios
	clock     clock.Clock
}

// New returns the comparisons, run in labs of the registry.
func New(s *store.Store, reg *labs.Registry, c *client.Client, g *ledger.Ledger, n *notify.Notifier, sc *scenario.Scenarios, clk clock.Clock) *Comparisons {
	return &Comparisons{store: s, labs: reg, client: c, ledger: g, notify: n, scenarios: sc, clock: clk}
}

// Run runs the script against every protection × key strategy, each in a
// lab of its own, a few labs at a time, and keeps the result under an id
// of its own. Each lab is removed once its result is read (scenario links
// rebuild them): comparisons hold no labs, and never fill -max-labs. A lab
// that a crash leaves behind is of kind "compare" and idles out.
func (cs *Comparisons) Run(ctx context.Context, script sim.Script) (Comparison, error) {
	cells, err := cs.grid(ctx, script)
	if err != nil {
		return Comparison{}, err
	}
	mail, err := cs.mailGrid(ctx)
	if err != nil {
		return Comparison{}, err
	}
	now := cs.clock.Now()
	c := Comparison{ID: sim.NewLabID(), CreatedAt: time.UnixMilli(now.UnixMilli()).UTC(), Script: script, Cells: cells, MailCells: mail}
	b, _ := json.Marshal(c) // plain structs: they always marshal
	if _, err := cs.store.Exec(ctx, `INSERT INTO comparisons (id, created_at, result) VALUES (?, ?, ?)`, c.ID, now.UnixMilli(), string(b)); err != nil {
		return Comparison{}, fmt.Errorf("compare: keep the result: %w", err)
	}
	return c, nil
}

// Get returns a comparison made before, or ENotFound.
func (cs *Comparisons) Get(ctx context.Context, id string) (Comparison, error) {
	if !sim.ValidLabID(id) {
		return Comparison{}, sim.Errorf(sim.ENotFound, "no-comparison", sim.Clip(id))
	}
	var raw string
	err := cs.store.QueryRow(ctx, `SELECT result FROM comparisons WHERE id = ?`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return Comparison{}, sim.Errorf(sim.ENotFound, "no-comparison", sim.Clip(id))
	}
	if err != nil {
		return Comparison{}, fmt.Errorf("compare: read %s: %w", id, err)
	}
	var c Comparison
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return Comparison{}, fmt.Errorf("compare: read %s: %w", id, err)
	}
	return c, nil
}

// Room is the comparisons' part in the labs' life: their results go after
// the labs' idle time, as an unused lab would.
func (cs *Comparisons) Room() labs.Room { return room{cs} }

type room struct{ cs *Comparisons }

func (room) Init(context.Context, *store.Tx, string) error  { return nil }
func (room) Reset(context.Context, *store.Tx, string) error { return nil }
func (room) PurgeStatements() []string                      { return nil }
func (room) Close(context.Context, string, labs.Closing)    {}

// Sweep deletes the comparisons as old as the labs' idle time.
func (r room) Sweep(ctx context.Context, now time.Time) error {
	idle := r.cs.labs.Config().LabIdle
	if _, err := r.cs.store.Exec(ctx, `DELETE FROM comparisons WHERE created_at < ?`, now.Add(-idle).UnixMilli()); err != nil {
		return fmt.Errorf("delete old comparisons: %w", err)
	}
	return nil
}

// grid runs the script in a lab per key strategy × protection.
func (cs *Comparisons) grid(ctx context.Context, script sim.Script) ([]Cell, error) {
	var cells []Cell
	for _, k := range sim.KeyStrategies {
		for _, p := range sim.Protections {
			cells = append(cells, Cell{Protection: p, KeyStrategy: k, Purchases: script.Purchases})
		}
	}
	return cells, eachAtOnce(len(cells), func(i int) error { return cs.cell(ctx, script, &cells[i]) })
}

// eachAtOnce runs f for 0…n-1, atOnce at a time, and joins their errors.
func eachAtOnce(n int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		errs  = make([]error, n)
		slots = make(chan struct{}, atOnce)
	)
	for i := range n {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (cs *Comparisons) cell(ctx context.Context, script sim.Script, c *Cell) error {
	s := sim.DefaultSettings()
	s.Protection, s.KeyStrategy, s.Network, s.Retry.Mode = c.Protection, c.KeyStrategy, sim.FateOK, sim.RetryManual
	l, err := cs.labs.Create(ctx, labs.KindCompare, s)
	if err != nil {
		return err
	}
	defer cs.remove(ctx, l)
	if err := cs.client.RunScript(ctx, l, script); err != nil {
		return err
	}
	t, err := cs.ledger.Totals(ctx, l)
	if err != nil {
		return err
	}
	c.Count, c.Total = t.Payments, t.Total
	if c.Cause, err = cs.cause(ctx, l, c); err != nil {
		return err
	}
	c.Scenario, err = cs.scenario(ctx, l)
	return err
}

// scenario is the code that rebuilds the cell's lab, or "" when the lab
// did more than a link carries.
func (cs *Comparisons) scenario(ctx context.Context, l *labs.Lab) (string, error) {
	code, _, ok, err := cs.scenarios.Code(ctx, l)
	if err != nil || !ok {
		return "", err
	}
	return code, nil
}

// remove removes a cell's lab once its result is read, even when the run
// failed or its caller hung up: nobody can reach it, and it must not hold
// a place under -max-labs. One that cannot be removed now (the database
// is down) idles out.
func (cs *Comparisons) remove(ctx context.Context, l *labs.Lab) {
	_ = cs.labs.Remove(context.WithoutCancel(ctx), l.ID)
}

// cause says why a cell's lab ended as it did, from what the server
// answered its client.
func (cs *Comparisons) cause(ctx context.Context, l *labs.Lab, c *Cell) (string, error) {
	switch {
	case c.Count == c.Purchases:
		return CauseRight, nil
	case c.Count > c.Purchases:
		return CauseDouble, nil
	}
	// The answer to the last purchase's first attempt: what the server
	// said of a purchase it did not charge.
	var first sim.Outcome
	err := cs.store.QueryRow(ctx, `
SELECT a.outcome FROM attempts a
WHERE a.lab_id = ?1 AND a.op_id = (SELECT id FROM operations WHERE lab_id = ?1 ORDER BY seq DESC LIMIT 1)
ORDER BY a.n LIMIT 1`, l.ID).Scan(&first)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("compare: answers of %s: %w", l.ID, err)
	}
	switch first {
	case sim.OutcomeRejected:
		return CauseRejected, nil
	case sim.OutcomeMismatch:
		return CauseMismatch, nil
	case sim.OutcomeReplayed:
		return CauseReplayed, nil
	case sim.OutcomeDuplicate, sim.OutcomeInFlight, sim.OutcomeConflict:
		return CauseRefused, nil
	case sim.OutcomeUnavailable:
		return CauseUnavailable, nil
	}
	return CauseFailed, nil
}
