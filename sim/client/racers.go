package client

import (
	"context"
	"sync"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// racerTimeout bounds a stepped racer's wait for its answer: a person
// steps it, and its race is aborted when nobody has for sim.SteppedIdle.
const racerTimeout = 10 * sim.SteppedIdle

// Racers starts a stepped race's operation: one attempt per token, sent at
// once, each carrying its token (api.HeaderStepped), so that the server
// stops its charge at the protection's points. The network delivers them
// (fate ok) and the client waits as long as a person takes. Racers returns
// once they are on their way, with a hang-up for each (its client gives
// up waiting); answered is told each attempt as it ends. The attempts hold
// slots of the lab's in-flight limits until the last one ends. a is the
// action that records the race for the lab's scenario.
func (c *Client) Racers(ctx context.Context, l *labs.Lab, r sim.OperationRequest, tokens []string, a sim.Action,
	answered func(i int, at sim.Attempt)) (sim.Operation, []func(), error) {
	if err := r.Check(); err != nil {
		return sim.Operation{}, nil, err
	}
	g, done, err := c.limits.Occupy(ctx, l, len(tokens))
	if err != nil {
		return sim.Operation{}, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			done()
		}
	}()
	op, err := c.create(ctx, l, l.Settings(), sim.MethodPost, r, a)
	if err != nil {
		return sim.Operation{}, nil, err
	}
	attempts := make([]*attemptState, len(tokens))
	for i := range attempts {
		if attempts[i], err = c.begin(ctx, l, op, true, sim.FateOK); err != nil {
			return sim.Operation{}, nil, err
		}
		attempts[i].stepped = tokens[i]
		attempts[i].answered = func(a sim.Attempt) { answered(i, a) }
	}
	hangUps := make([]func(), len(tokens))
	ctxs := make([]context.Context, len(tokens))
	for i := range attempts {
		ctxs[i], hangUps[i] = c.bound(ctx)
	}
	ok = true
	c.spawn(func() {
		defer done()
		var wg sync.WaitGroup
		for i, as := range attempts {
			wg.Go(func() {
				defer hangUps[i]()
				c.send(ctxs[i], l, as, racerTimeout, g)
			})
		}
		wg.Wait()
	})
	return *op, hangUps, nil
}
