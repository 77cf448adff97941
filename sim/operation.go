package sim

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Operation is one intent of the client, "charge order-42 1500 ₽", with every
// attempt it made.
type Operation struct {
	ID          string      `json:"id"`
	Seq         int         `json:"seq"` // the operation's number in the lab, from 1
	OrderID     string      `json:"order_id"`
	Amount      int64       `json:"amount"`
	Method      string      `json:"method"` // POST charges; PUT and DELETE set and remove the order
	KeyStrategy KeyStrategy `json:"key_strategy"`
	Key         *string     `json:"key"` // the key fixed for the operation (uuid), if any
	CreatedAt   time.Time   `json:"created_at"`
	Attempts    []Attempt   `json:"attempts"`
}

// Attempt is one HTTP request of an operation through the simulated network.
type Attempt struct {
	N          int        `json:"n"`
	Key        *string    `json:"key"`
	Fate       Fate       `json:"fate"`
	Status     int        `json:"status"` // what the client saw; 0 when no answer reached it
	Error      *string    `json:"error"`
	Outcome    Outcome    `json:"outcome"`    // what the server did (the first copy, for a duplicate)
	Deliveries []Delivery `json:"deliveries"` // every copy the server answered
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// OperationRequest starts an operation.
type OperationRequest struct {
	OrderID string
	Amount  int64
	Fate    Fate   // of the first attempt; "" for the lab's network setting
	Method  string // POST (the default: a charge), PUT or DELETE (the order)
}

// The methods of an operation.
var Methods = []string{http.MethodPost, http.MethodPut, http.MethodDelete}

// checkMethod refuses a method an operation cannot have.
func checkMethod(m string) error {
	if m != "" && !slices.Contains(Methods, m) {
		return Invalid(Broke("method", "one-of", quoted(Methods)))
	}
	return nil
}

// ValidFate reports whether f may be asked of the network for one attempt.
func ValidFate(f Fate) bool { return slices.Contains(fateChoices(), string(f)) }

// fateChoices are the fates one may ask for: each fate, or random.
func fateChoices() []string { return append(Names(Fates), string(FateRandom)) }

// checkFate refuses a fate asked for an attempt unless it is one ("" asks
// for the lab's network setting).
func checkFate(f Fate) error {
	if f != "" && !ValidFate(f) {
		return Invalid(Broke("fate", "one-of", quoted(fateChoices())))
	}
	return nil
}

// copiesAtMost is how many copies of a request a fate may send: what an
// attempt reserves of the in-flight limit.
func copiesAtMost(f Fate) int {
	if f == FateRandom {
		return 2
	}
	return f.Copies()
}

// StartOperation creates an operation and runs its first attempt, and under
// an automatic retry policy its retries, through the simulated network.
func (e *Engine) StartOperation(ctx context.Context, l *Lab, r OperationRequest) (Operation, error) {
	if err := (Charge{OrderID: r.OrderID, Amount: r.Amount}).Validate(); err != nil {
		return Operation{}, err
	}
	if err := checkFate(r.Fate); err != nil {
		return Operation{}, err
	}
	if err := checkMethod(r.Method); err != nil {
		return Operation{}, err
	}
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	s := l.Settings()
	fate := r.Fate
	if fate == "" {
		fate = s.Network
	}
	g, done, err := e.occupy(l, copiesAtMost(fate))
	if err != nil {
		return Operation{}, err
	}
	defer done()
	op := &Operation{ID: "op-" + newToken()[:16], OrderID: r.OrderID, Amount: r.Amount, Method: method, KeyStrategy: s.KeyStrategy, CreatedAt: e.now().UTC()}
	err = e.store.tx(ctx, func(tx *sql.Tx) error {
		a := Action{Kind: "charge", OrderID: r.OrderID, Amount: r.Amount, Fate: r.Fate}
		if method != http.MethodPost {
			a.Method = method
		}
		if err := e.record(ctx, tx, l.ID, a); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `UPDATE lab_counts SET op_seq = op_seq + 1 WHERE lab_id = ? RETURNING op_seq`, l.ID).Scan(&op.Seq); err != nil {
			return err
		}
		if s.KeyStrategy == KeyUUID {
			k := newUUID(draws(s.Seed, op.Seq, 0, drawKey))
			op.Key = &k
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO operations (lab_id, id, seq, order_id, amount, method, key_strategy, key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			l.ID, op.ID, op.Seq, op.OrderID, op.Amount, op.Method, op.KeyStrategy, op.Key, op.CreatedAt.Format(time.RFC3339Nano))
		return err
	})
	if err != nil {
		return Operation{}, e.failed(l, "client: create operation", err)
	}
	e.emit(Event{Lab: l.ID, Kind: EventOperation, Operation: op})
	if err := e.run(ctx, l, op, fate, true, g); err != nil {
		return Operation{}, err
	}
	return e.Operation(ctx, l, op.ID)
}

// failed wraps an error of the store with what was being done; a lab
// removed meanwhile is ENotFound, and the lab's own refusals pass as they are.
func (e *Engine) failed(l *Lab, what string, err error) error {
	if err = e.gone(l, err); ErrorCode(err) != EInternal {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Retry makes one more attempt of an operation, with its key or without any
// key; under an automatic policy it goes on retrying while that fails.
func (e *Engine) Retry(ctx context.Context, l *Lab, opID string, withKey bool, fate Fate) (Operation, error) {
	if err := checkFate(fate); err != nil {
		return Operation{}, err
	}
	op, err := e.Operation(ctx, l, opID)
	if err != nil {
		return Operation{}, err
	}
	asked := fate // recorded as asked: "" replays as the network is set then
	if fate == "" {
		fate = l.Settings().Network
	}
	g, done, err := e.occupy(l, copiesAtMost(fate))
	if err != nil {
		return Operation{}, err
	}
	defer done()
	err = e.store.tx(ctx, func(tx *sql.Tx) error {
		return e.record(ctx, tx, l.ID, Action{Kind: "retry", Op: op.Seq, WithKey: &withKey, Fate: asked})
	})
	if err != nil {
		return Operation{}, e.failed(l, "client: record retry", err)
	}
	if err := e.run(ctx, l, &op, fate, withKey, g); err != nil {
		return Operation{}, err
	}
	return e.Operation(ctx, l, op.ID)
}

// run makes attempts of op: one, or under the automatic policy, until one
// gets a final answer or the attempts run out, sleeping by the backoff
// between them. Settings are read afresh before every attempt. The first
// attempt's slots are reserved by the caller; each retry reserves its own,
// and the loop ends quietly when the server has none to give.
func (e *Engine) run(ctx context.Context, l *Lab, op *Operation, fate Fate, withKey bool, g *grant) error {
	ctx, stop := e.bound(ctx)
	defer stop()
	s := l.Settings()
	tries := 1
	if s.Retry.Mode == RetryAuto {
		tries = s.Retry.MaxAttempts
	}
	prev := time.Duration(s.Retry.BaseMS) * time.Millisecond
	for k := 1; ; k++ {
		as, err := e.begin(ctx, l, op, withKey, fate)
		if err != nil {
			return err
		}
		status, after, err := e.send(ctx, l, as, time.Duration(s.ClientTimeoutMS)*time.Millisecond, g)
		s = l.Settings()
		if !retryable(status, err) || k >= tries || s.Retry.Mode != RetryAuto || ctx.Err() != nil {
			return nil
		}
		wait := s.Retry.Backoff(k, prev, mrand.New(draws(s.Seed, op.Seq, as.a.N, drawBackoff)))
		prev = wait
		// Retry-After is honoured, up to the policy's cap.
		wait = max(wait, min(after, time.Duration(s.Retry.CapMS)*time.Millisecond))
		e.emit(Event{Lab: l.ID, Kind: EventRetry, Operation: op, Retry: &RetryWait{Next: k + 1, Of: tries, Delay: wait}})
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		fate = s.Network // retries meet the network as it is set now
		if err := g.more(copiesAtMost(fate)); err != nil {
			e.emit(Event{Lab: l.ID, Kind: EventRetry, Operation: op, Retry: &RetryWait{Next: k + 1, Of: tries, Busy: true}})
			return nil
		}
	}
}

// bound returns a context that ends when ctx or the engine ends, but not when
// a caller merely hangs up: the client finishes its operation regardless.
func (e *Engine) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(e.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// maxRace is the most attempts a race sends at once.
const maxRace = 64

// Race sends n attempts of an operation at the same moment from n goroutines,
// the way concurrent retries reach a server.
func (e *Engine) Race(ctx context.Context, l *Lab, opID string, n int) (Operation, error) {
	if n < 2 || n > maxRace {
		return Operation{}, Invalid(Broke("parallel", "range", 2, maxRace))
	}
	op, err := e.Operation(ctx, l, opID)
	if err != nil {
		return Operation{}, err
	}
	s := l.Settings()
	g, done, err := e.occupy(l, n*copiesAtMost(s.Network))
	if err != nil {
		return Operation{}, err
	}
	defer done()
	err = e.store.tx(ctx, func(tx *sql.Tx) error {
		return e.record(ctx, tx, l.ID, Action{Kind: "race", Op: op.Seq, N: n})
	})
	if err != nil {
		return Operation{}, e.failed(l, "client: record race", err)
	}
	ctx, stop := e.bound(ctx)
	defer stop()
	attempts := make([]*attemptState, n)
	for i := range attempts { // keys and fates drawn in order: the race repeats with the seed
		if attempts[i], err = e.begin(ctx, l, &op, true, s.Network); err != nil {
			return Operation{}, err
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, as := range attempts {
		wg.Go(func() {
			<-start
			e.send(ctx, l, as, time.Duration(s.ClientTimeoutMS)*time.Millisecond, g)
		})
	}
	close(start)
	wg.Wait()
	return e.Operation(ctx, l, op.ID)
}

// LatestOperation is an alias of the newest operation of a lab, wherever an
// operation id is expected: "retry the latest operation" needs no id.
const LatestOperation = "latest"

// Operation returns an operation of the lab with its attempts, or ENotFound.
func (e *Engine) Operation(ctx context.Context, l *Lab, id string) (Operation, error) {
	var (
		op Operation
		at string
	)
	// Two statements, not one with an OR: each is one step down an index.
	q := `SELECT id, seq, order_id, amount, method, key_strategy, key, created_at FROM operations WHERE lab_id = ? AND id = ?`
	args := []any{l.ID, id}
	if id == LatestOperation {
		q = `SELECT id, seq, order_id, amount, method, key_strategy, key, created_at FROM operations WHERE lab_id = ? ORDER BY seq DESC LIMIT 1`
		args = args[:1]
	}
	err := e.store.r.QueryRowContext(ctx, q, args...).
		Scan(&op.ID, &op.Seq, &op.OrderID, &op.Amount, &op.Method, &op.KeyStrategy, &op.Key, &at)
	if errors.Is(err, sql.ErrNoRows) && id == LatestOperation {
		return Operation{}, Errorf(ENotFound, "no-operation-yet")
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Operation{}, Errorf(ENotFound, "no-operation", clip(id))
	}
	if err != nil {
		return Operation{}, fmt.Errorf("client: load operation %s: %w", id, err)
	}
	op.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
	ops := []*Operation{&op}
	if err := e.loadAttempts(ctx, l, ops); err != nil {
		return Operation{}, err
	}
	return op, nil
}

// Operations returns the lab's latest operations, newest first.
func (e *Engine) Operations(ctx context.Context, l *Lab, limit int) ([]Operation, error) {
	rows, err := e.store.r.QueryContext(ctx, `
SELECT id, seq, order_id, amount, method, key_strategy, key, created_at FROM operations WHERE lab_id = ? ORDER BY seq DESC LIMIT ?`, l.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("client: operations of %s: %w", l.ID, err)
	}
	defer rows.Close()
	var ops []*Operation
	for rows.Next() {
		var (
			op Operation
			at string
		)
		if err := rows.Scan(&op.ID, &op.Seq, &op.OrderID, &op.Amount, &op.Method, &op.KeyStrategy, &op.Key, &at); err != nil {
			return nil, err
		}
		op.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
		ops = append(ops, &op)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := e.loadAttempts(ctx, l, ops); err != nil {
		return nil, err
	}
	out := make([]Operation, len(ops))
	for i, op := range ops {
		out[i] = *op
	}
	return out, nil
}

func (e *Engine) loadAttempts(ctx context.Context, l *Lab, ops []*Operation) error {
	for _, op := range ops {
		rows, err := e.store.r.QueryContext(ctx, `
SELECT n, key, fate, status, error, outcome, deliveries, started_at, finished_at
FROM attempts WHERE lab_id = ? AND op_id = ? ORDER BY n`, l.ID, op.ID)
		if err != nil {
			return fmt.Errorf("client: attempts of %s: %w", op.ID, err)
		}
		op.Attempts = []Attempt{}
		for rows.Next() {
			var (
				a          Attempt
				deliveries string
				started    string
				finished   sql.NullString
			)
			if err := rows.Scan(&a.N, &a.Key, &a.Fate, &a.Status, &a.Error, &a.Outcome, &deliveries, &started, &finished); err != nil {
				rows.Close()
				return fmt.Errorf("client: attempts of %s: %w", op.ID, err)
			}
			json.Unmarshal([]byte(deliveries), &a.Deliveries)
			a.StartedAt, _ = time.Parse(time.RFC3339Nano, started)
			if finished.Valid {
				t, _ := time.Parse(time.RFC3339Nano, finished.String)
				a.FinishedAt = &t
			}
			op.Attempts = append(op.Attempts, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}
