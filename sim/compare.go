package sim

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// CompareCell is one lab of a side-by-side comparison: a protection and a
// key source, and what the script left in its ledger.
type CompareCell struct {
	Protection  Protection  `json:"protection"`
	KeyStrategy KeyStrategy `json:"key_strategy"`
	Lab         string      `json:"lab"`
	Count       int64       `json:"count"`
	Total       int64       `json:"total"`
	Purchases   int64       `json:"purchases"` // what the script meant to charge
	// Cause is why the lab ended as it did: right (as many charges as
	// purchases), double (more), and when fewer, why the server charged
	// less: refused (a purchase answered "duplicate"), replayed (a purchase
	// answered with the first one's stored answer), rejected (400: the
	// protection wants a key and the client sent none), mismatch (422).
	Cause string `json:"cause"`
}

// Comparison is one side-by-side run, kept under an id of its own.
type Comparison struct {
	ID        string        `json:"id"`
	CreatedAt time.Time     `json:"created_at"`
	Script    Script        `json:"script"`
	Cells     []CompareCell `json:"cells"`
	// MailCells is the second grid: consumer deduplication × delivery
	// fate, when the server runs its broker and mailbox.
	MailCells []MailCell `json:"mail_cells"`
}

// The causes of a comparison's cells.
const (
	CauseRight    = "right"
	CauseDouble   = "double"
	CauseRefused  = "refused"
	CauseReplayed = "replayed"
	CauseRejected = "rejected"
	CauseMismatch = "mismatch"
)

// compareAtOnce is how many labs of a comparison run at the same time.
const compareAtOnce = 4

// Compare runs the script against every protection × key strategy, each in
// a lab of its own (kind "compare": it idles out like any other), a few labs
// at a time, and keeps the result under an id of its own. The labs stay to
// be looked at.
func (e *Engine) Compare(ctx context.Context, script Script) (Comparison, error) {
	cells, err := e.compare(ctx, script)
	if err != nil {
		return Comparison{}, err
	}
	mail, err := e.compareMail(ctx)
	if err != nil {
		return Comparison{}, err
	}
	c := Comparison{ID: NewLabID(), CreatedAt: e.now().UTC(), Script: script, Cells: cells, MailCells: mail}
	if _, err := e.store.exec(ctx, `INSERT INTO comparisons (id, created_at, result) VALUES (?, ?, ?)`,
		c.ID, c.CreatedAt.UnixMilli(), mustJSON(c)); err != nil {
		return Comparison{}, fmt.Errorf("compare: keep the result: %w", err)
	}
	return c, nil
}

// Comparison returns a comparison made before, or ENotFound.
func (e *Engine) Comparison(ctx context.Context, id string) (Comparison, error) {
	var raw string
	err := e.store.r.QueryRowContext(ctx, `SELECT result FROM comparisons WHERE id = ?`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) || !ValidLabID(id) {
		return Comparison{}, Errorf(ENotFound, "no-comparison", clip(id))
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

// compare runs the script in the 25 labs.
func (e *Engine) compare(ctx context.Context, script Script) ([]CompareCell, error) {
	var cells []CompareCell
	for _, k := range KeyStrategies {
		for _, p := range Protections {
			cells = append(cells, CompareCell{Protection: p, KeyStrategy: k, Purchases: script.Purchases})
		}
	}
	return cells, eachAtOnce(len(cells), func(i int) error { return e.compareCell(ctx, script, &cells[i]) })
}

// eachAtOnce runs f for 0…n-1, compareAtOnce at a time, and joins their
// errors: the labs of a comparison run side by side, a few at a time.
func eachAtOnce(n int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		errs  = make([]error, n)
		slots = make(chan struct{}, compareAtOnce)
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

func (e *Engine) compareCell(ctx context.Context, script Script, c *CompareCell) error {
	s := DefaultSettings()
	s.Protection, s.KeyStrategy, s.Network, s.Retry.Mode = c.Protection, c.KeyStrategy, FateOK, RetryManual
	l, err := e.createLab(ctx, kindCompare, s)
	if err != nil {
		return err
	}
	c.Lab = l.ID
	if err := e.RunScript(ctx, l, script); err != nil {
		return err
	}
	t, err := e.Totals(ctx, l)
	if err != nil {
		return err
	}
	c.Count, c.Total = t.Payments, t.Total
	c.Cause, err = e.cause(ctx, l, c)
	return err
}

// cause says why a cell's lab ended as it did, from what the server
// answered its client.
func (e *Engine) cause(ctx context.Context, l *Lab, c *CompareCell) (string, error) {
	switch {
	case c.Count == c.Purchases:
		return CauseRight, nil
	case c.Count > c.Purchases:
		return CauseDouble, nil
	}
	// The answer to the last purchase's first attempt: what the server
	// said of a purchase it did not charge.
	var first Outcome
	err := e.store.r.QueryRowContext(ctx, `
SELECT a.outcome FROM attempts a
WHERE a.lab_id = ?1 AND a.op_id = (SELECT id FROM operations WHERE lab_id = ?1 ORDER BY seq DESC LIMIT 1)
ORDER BY a.n LIMIT 1`, l.ID).Scan(&first)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("compare: answers of %s: %w", l.ID, err)
	}
	switch first {
	case OutcomeRejected:
		return CauseRejected, nil
	case OutcomeMismatch:
		return CauseMismatch, nil
	case OutcomeReplayed:
		return CauseReplayed, nil
	}
	return CauseRefused, nil
}
