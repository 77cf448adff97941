package sim

import (
	"context"
	"errors"
	"sync"
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
}

// compareAtOnce is how many labs of a comparison run at the same time.
const compareAtOnce = 4

// Compare runs the script against every protection × key strategy, each in
// a lab of its own (kind "compare": it idles out like any other), a few labs
// at a time. The labs stay to be looked at.
func (e *Engine) Compare(ctx context.Context, script Script) ([]CompareCell, error) {
	var cells []CompareCell
	for _, k := range KeyStrategies {
		for _, p := range Protections {
			cells = append(cells, CompareCell{Protection: p, KeyStrategy: k, Purchases: script.Purchases})
		}
	}
	var (
		wg    sync.WaitGroup
		errs  = make([]error, len(cells))
		slots = make(chan struct{}, compareAtOnce)
	)
	for i := range cells {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = e.compareCell(ctx, script, &cells[i])
		})
	}
	wg.Wait()
	return cells, errors.Join(errs...)
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
	c.Count, c.Total = t.Payments, t.Total
	return err
}
