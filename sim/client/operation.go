package client

import (
	"context"
	mrand "math/rand/v2"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Start creates an operation and runs its first attempt, and under an
// automatic retry policy its retries, through the simulated network.
func (c *Client) Start(ctx context.Context, l *labs.Lab, r sim.OperationRequest) (sim.Operation, error) {
	if err := r.Check(); err != nil {
		return sim.Operation{}, err
	}
	method := r.Method
	if method == "" {
		method = sim.MethodPost
	}
	s := l.Settings()
	fate := r.Fate
	if fate == "" {
		fate = s.Network
	}
	g, done, err := c.limits.Occupy(ctx, l, fate.CopiesAtMost())
	if err != nil {
		return sim.Operation{}, err
	}
	defer done()
	a := sim.Action{Kind: "charge", OrderID: r.OrderID, Amount: r.Amount, Fate: r.Fate}
	if method != sim.MethodPost {
		a.Method = method
	}
	op, err := c.create(ctx, l, s, method, r, a)
	if err != nil {
		return sim.Operation{}, err
	}
	if err := c.run(ctx, l, op, fate, true, g); err != nil {
		return sim.Operation{}, err
	}
	return c.Operation(ctx, l, op.ID)
}

// create writes a new operation of the lab, numbered after the last, with
// the action that recorded it (a.Kind "" records none).
func (c *Client) create(ctx context.Context, l *labs.Lab, s sim.Settings, method string, r sim.OperationRequest, a sim.Action) (*sim.Operation, error) {
	now := c.Clock.Now()
	op := &sim.Operation{ID: "op-" + sim.NewToken()[:16], OrderID: r.OrderID, Amount: r.Amount, Method: method,
		KeyStrategy: s.KeyStrategy, CreatedAt: time.UnixMilli(now.UnixMilli()).UTC()}
	err := c.Store.Write(ctx, func(tx *store.Tx) error {
		if a.Kind != "" {
			if err := c.Labs.Record(tx, l.ID, a); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(`UPDATE lab_counts SET op_seq = op_seq + 1 WHERE lab_id = ? RETURNING op_seq`, l.ID).Scan(&op.Seq); err != nil {
			return err
		}
		if s.KeyStrategy == sim.KeyUUID {
			k := newUUID(draws(s.Seed, op.Seq, 0, drawKey))
			op.Key = &k
		}
		_, err := tx.Exec(`
INSERT INTO operations (lab_id, id, seq, order_id, amount, method, key_strategy, key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			l.ID, op.ID, op.Seq, op.OrderID, op.Amount, op.Method, op.KeyStrategy, op.Key, now.UnixMilli())
		return err
	})
	if err != nil {
		return nil, labs.Failed(l.ID, "client: create operation", err)
	}
	c.Bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventOperation, Operation: op})
	return op, nil
}

// Retry makes one more attempt of an operation, with its key or without any
// key; under an automatic policy it goes on retrying while that fails.
func (c *Client) Retry(ctx context.Context, l *labs.Lab, opID string, withKey bool, fate sim.Fate) (sim.Operation, error) {
	if err := sim.CheckFate(fate); err != nil {
		return sim.Operation{}, err
	}
	op, err := c.Operation(ctx, l, opID)
	if err != nil {
		return sim.Operation{}, err
	}
	asked := fate // recorded as asked: "" replays as the network is set then
	if fate == "" {
		fate = l.Settings().Network
	}
	g, done, err := c.limits.Occupy(ctx, l, fate.CopiesAtMost())
	if err != nil {
		return sim.Operation{}, err
	}
	defer done()
	if err := c.record(ctx, l, sim.Action{Kind: "retry", Op: op.Seq, WithKey: &withKey, Fate: asked}); err != nil {
		return sim.Operation{}, labs.Failed(l.ID, "client: record retry", err)
	}
	if err := c.run(ctx, l, &op, fate, withKey, g); err != nil {
		return sim.Operation{}, err
	}
	return c.Operation(ctx, l, op.ID)
}

// record writes an action of the lab's client, for its scenario.
func (c *Client) record(ctx context.Context, l *labs.Lab, a sim.Action) error {
	return c.Store.Write(ctx, func(tx *store.Tx) error { return c.Labs.Record(tx, l.ID, a) })
}

// run makes attempts of op: one, or under the automatic policy, until one
// gets a final answer or the attempts run out, waiting by the backoff
// between them. Settings are read afresh before every attempt. The first
// attempt's slots are reserved by the caller; each retry reserves its own,
// and the loop ends quietly when the server has none to give.
func (c *Client) run(ctx context.Context, l *labs.Lab, op *sim.Operation, fate sim.Fate, withKey bool, g *labs.Grant) error {
	ctx, stop := c.bound(ctx)
	defer stop()
	s := l.Settings()
	tries := 1
	if s.Retry.Mode == sim.RetryAuto {
		tries = s.Retry.MaxAttempts
	}
	prev := time.Duration(s.Retry.BaseMS) * time.Millisecond
	budget := l.Retries()
	for k := 1; ; k++ {
		as, err := c.begin(ctx, l, op, withKey, fate)
		if err != nil {
			return err
		}
		if k == 1 && as.a.N == 1 {
			budget.First(c.Clock.Now(), s.Retry)
		} else if k == 1 { // a person's retry goes whatever the budget, and counts
			budget.Retry(c.Clock.Now(), s.Retry, true)
		}
		status, after, err := c.send(ctx, l, as, time.Duration(s.ClientTimeoutMS)*time.Millisecond, g)
		s = l.Settings()
		budget.Answered(s.Retry, sim.Retryable(status, err))
		if !sim.Retryable(status, err) || k >= tries || s.Retry.Mode != sim.RetryAuto || ctx.Err() != nil {
			return nil
		}
		if !budget.Retry(c.Clock.Now(), s.Retry, false) {
			c.Bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventRetry, Operation: op, Retry: &sim.RetryWait{Next: k + 1, Of: tries, Spent: true}})
			return nil
		}
		wait := s.Retry.Backoff(k, prev, mrand.New(draws(s.Seed, op.Seq, as.a.N, drawBackoff)))
		prev = wait
		if s.Retry.RespectRetryAfter { // up to the policy's cap
			wait = max(wait, min(after, time.Duration(s.Retry.CapMS)*time.Millisecond))
		}
		c.Bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventRetry, Operation: op, Retry: &sim.RetryWait{Next: k + 1, Of: tries, Delay: wait}})
		if clock.Sleep(ctx, c.Clock, wait) != nil {
			return nil
		}
		fate = s.Network // retries meet the network as it is set now
		if err := g.More(fate.CopiesAtMost()); err != nil {
			c.Bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventRetry, Operation: op, Retry: &sim.RetryWait{Next: k + 1, Of: tries, Busy: true}})
			return nil
		}
	}
}

// Race sends n attempts of an operation at the same moment from n
// goroutines, the way concurrent retries reach a server.
func (c *Client) Race(ctx context.Context, l *labs.Lab, opID string, n int) (sim.Operation, error) {
	if n < 2 || n > sim.MaxRace {
		return sim.Operation{}, sim.Invalid(sim.Broke("parallel", "range", 2, sim.MaxRace))
	}
	op, err := c.Operation(ctx, l, opID)
	if err != nil {
		return sim.Operation{}, err
	}
	s := l.Settings()
	g, done, err := c.limits.Occupy(ctx, l, n*s.Network.CopiesAtMost())
	if err != nil {
		return sim.Operation{}, err
	}
	defer done()
	if err := c.record(ctx, l, sim.Action{Kind: "race", Op: op.Seq, N: n}); err != nil {
		return sim.Operation{}, labs.Failed(l.ID, "client: record race", err)
	}
	ctx, stop := c.bound(ctx)
	defer stop()
	attempts := make([]*attemptState, n)
	for i := range attempts { // keys and fates drawn in order: the race repeats with the seed
		if attempts[i], err = c.begin(ctx, l, &op, true, s.Network); err != nil {
			return sim.Operation{}, err
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, as := range attempts {
		wg.Go(func() {
			<-start
			c.send(ctx, l, as, time.Duration(s.ClientTimeoutMS)*time.Millisecond, g)
		})
	}
	close(start)
	wg.Wait()
	return c.Operation(ctx, l, op.ID)
}
