package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// attemptState is an attempt while it runs: the client's side and the
// server's answers may complete in either order (a slow answer arrives after
// the client gave up), so both write the whole state under one lock.
type attemptState struct {
	mu         sync.Mutex
	op         *sim.Operation
	a          sim.Attempt
	clientDone bool
	version    int    // of a, as saved: a later save never loses to an earlier
	stepped    string // the racer's token, when the attempt is a stepped race's
	// answered is told the attempt as its answer arrives, before it is
	// recorded (a stepped race's: recording may wait for a racer's locks).
	answered func(sim.Attempt)
}

// begin records a new attempt of op, numbered after the last one, with its
// key and its fate under the network setting f, owned by this process: no
// other mends it while this one lives.
func (c *Client) begin(ctx context.Context, l *labs.Lab, op *sim.Operation, withKey bool, f sim.Fate) (*attemptState, error) {
	seed := l.Settings().Seed
	now := c.Clock.Now()
	a := sim.Attempt{Outcome: sim.OutcomePending, StartedAt: time.UnixMilli(now.UnixMilli()).UTC(), Deliveries: []sim.Delivery{}}
	err := c.Store.WriteLab(ctx, l.ID, func(tx *store.Tx) error {
		if err := tx.QueryRow(`SELECT COALESCE(MAX(n), 0) + 1 FROM attempts WHERE lab_id = ? AND op_id = ?`, l.ID, op.ID).Scan(&a.N); err != nil {
			return err
		}
		a.Key, a.Fate = keyFor(seed, op, a.N, withKey), fateOf(seed, op, a.N, f)
		_, err := tx.Exec(`
INSERT INTO attempts (lab_id, op_id, n, key, fate, outcome, started_at, process) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			l.ID, op.ID, a.N, a.Key, a.Fate, a.Outcome, now.UnixMilli(), c.Store.Process())
		return err
	})
	if err != nil {
		return nil, labs.Failed(l.ID, "client: begin attempt of "+op.ID, err)
	}
	c.Bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventAttempt, Operation: op, Attempt: &a})
	return &attemptState{op: op, a: a}, nil
}

// send plays the attempt through the simulated network to the lab's own
// charge endpoint, and records what the client saw and what the server did.
// Each copy that goes out uses a slot of g.
func (c *Client) send(ctx context.Context, l *labs.Lab, as *attemptState, timeout time.Duration, g *labs.Grant) (status int, after time.Duration, err error) {
	net := &Network{
		Fate: as.a.Fate,
		Next: c.Transport,
		Spawn: func(f func()) {
			release := g.Use()
			c.spawn(func() { defer release(); f() })
		},
		Observe: func(d sim.Delivery) {
			as.mu.Lock()
			as.a.Deliveries = append(as.a.Deliveries, d)
			late := as.clientDone // the client had already given up
			as.mu.Unlock()
			if late {
				c.save(l, as, true)
			}
		},
	}
	ctx, cancel := clock.WithTimeout(ctx, c.Clock, timeout)
	defer cancel()
	req, err := request(ctx, c.BaseURL+api.LabPath(l.ID), as.op)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set(api.HeaderAttempt, as.op.ID+"/"+strconv.Itoa(as.a.N))
	if as.a.Key != nil {
		req.Header.Set(api.HeaderKey, *as.a.Key)
	}
	if as.stepped != "" {
		req.Header.Set(api.HeaderStepped, as.stepped)
	}
	resp, err := net.RoundTrip(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status, after = resp.StatusCode, api.RetryAfter(resp.Header)
	}
	as.mu.Lock()
	as.a.Status = status
	if err != nil {
		msg := err.Error()
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTooSlow) {
			msg = fmt.Sprintf("client: timed out after %d ms", timeout.Milliseconds())
		}
		as.a.Error = &msg
	}
	as.clientDone = true
	as.mu.Unlock()
	if as.answered != nil {
		a, _ := as.settle(c.Clock.Now())
		as.answered(a)
	}
	c.save(l, as, false)
	return status, after, err
}

// save writes the attempt's current state and tells the lab. The client's
// side and a late answer may save at once: each save carries the state's
// version, and the row takes only a newer one.
func (c *Client) save(l *labs.Lab, as *attemptState, late bool) {
	snapshot, version := as.settle(c.Clock.Now())
	var finished any
	if snapshot.FinishedAt != nil {
		finished = snapshot.FinishedAt.UnixMilli()
	}
	_, err := c.Store.Exec(context.Background(), `
UPDATE attempts SET status = ?, error = ?, outcome = ?, deliveries = ?, finished_at = ?, version = ?
WHERE lab_id = ? AND op_id = ? AND n = ? AND version < ?`,
		snapshot.Status, snapshot.Error, snapshot.Outcome, mustJSON(snapshot.Deliveries), finished, version,
		l.ID, as.op.ID, snapshot.N, version)
	if err != nil && !store.IsGone(err) {
		c.Log.Warn("save attempt", "lab", l.ID, "op", as.op.ID, "n", snapshot.N, "err", err)
	}
	c.Bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventAttempt, Operation: as.op, Attempt: &snapshot, Late: late})
}

// settle decides what the server did, so far: the first copy that reached
// it decides; while a copy is still on its way the outcome is pending. It
// returns a copy of the attempt and its new version.
func (as *attemptState) settle(now time.Time) (sim.Attempt, int) {
	as.mu.Lock()
	defer as.mu.Unlock()
	a := &as.a
	slices.SortFunc(a.Deliveries, func(x, y sim.Delivery) int { return x.Copy - y.Copy })
	a.Outcome = sim.OutcomePending
	if len(a.Deliveries) == a.Fate.Copies() {
		a.Outcome = sim.OutcomeNotReached
	}
	for _, d := range a.Deliveries {
		if d.Outcome != sim.OutcomeNotReached {
			a.Outcome = d.Outcome
			break
		}
	}
	if as.clientDone && a.FinishedAt == nil {
		t := time.UnixMilli(now.UnixMilli()).UTC()
		a.FinishedAt = &t
	}
	as.version++
	snapshot := *a
	snapshot.Deliveries = slices.Clone(a.Deliveries)
	return snapshot, as.version
}

// request is the HTTP request of one attempt of op to the lab at base: POST
// the charge, or PUT or DELETE the order.
func request(ctx context.Context, lab string, op *sim.Operation) (*http.Request, error) {
	var (
		url  = lab + "/charges"
		body []byte
	)
	switch op.Method {
	case sim.MethodPut:
		url, body = lab+"/orders/"+op.OrderID, []byte(`{"amount":`+strconv.FormatInt(op.Amount, 10)+`}`)
	case sim.MethodDelete:
		url = lab + "/orders/" + op.OrderID
	default:
		body = sim.Charge{OrderID: op.OrderID, Amount: op.Amount}.Body()
	}
	method := op.Method
	if method == "" {
		method = sim.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", api.ContentJSON)
	}
	return req, nil
}
