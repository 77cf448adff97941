package sim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
)

// selfTarget is where the simulated client sends its requests: the lab's own
// server, over real HTTP.
type selfTarget struct {
	mu   sync.RWMutex
	base string
	rt   http.RoundTripper
}

func (t *selfTarget) set(base string, rt http.RoundTripper) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.base, t.rt = base, rt
}

func (t *selfTarget) get() (string, http.RoundTripper) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.base, t.rt
}

// draws is the lab's randomness for one attempt of an operation (n), or for
// the operation itself (n = 0), put to one use: a source keyed by the lab's
// seed and the numbers, so that what is drawn never depends on which process
// draws it, in what order, or on what the lab drew before. The same seed and
// the same actions give the same keys, fates and backoffs.
func draws(seed int64, seq, n int, use string) *mrand.ChaCha8 {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], uint64(seed))
	binary.LittleEndian.PutUint64(key[8:], uint64(seq))
	binary.LittleEndian.PutUint64(key[16:], uint64(n))
	copy(key[24:], use)
	return mrand.NewChaCha8(key)
}

// The uses of draws.
const (
	drawKey     = "key"
	drawFate    = "fate"
	drawBackoff = "backoff"
)

// newUUID is a random UUID from src.
func newUUID(src *mrand.ChaCha8) string {
	return uuid.Must(uuid.NewRandomFromReader(src)).String()
}

// keyFor returns the Idempotency-Key the client sends with attempt n of op,
// by the operation's key strategy; nil when it sends none.
func keyFor(seed int64, op *Operation, n int, withKey bool) *string {
	if !withKey {
		return nil
	}
	switch op.KeyStrategy {
	case KeyUUID:
		return op.Key
	case KeyUUIDPerRequest:
		k := newUUID(draws(seed, op.Seq, n, drawKey))
		return &k
	case KeyNatural:
		k := op.OrderID
		return &k
	case KeyHash:
		sum := sha256.Sum256(Charge{OrderID: op.OrderID, Amount: op.Amount}.Body())
		k := hex.EncodeToString(sum[:])
		return &k
	}
	return nil
}

// fateOf is the fate of attempt n of op under the network setting f.
func fateOf(seed int64, op *Operation, n int, f Fate) Fate {
	if f != FateRandom {
		return f
	}
	// ok 40% of the time, each failure 15%
	if x := mrand.New(draws(seed, op.Seq, n, drawFate)).IntN(20); x < 8 {
		return FateOK
	} else {
		return Fates[1+(x-8)/3]
	}
}

// attemptState is an attempt while it runs: the client's side and the
// server's answers may complete in either order (a slow answer arrives after
// the client gave up), so both write the whole state under one lock.
type attemptState struct {
	mu         sync.Mutex
	op         *Operation
	a          Attempt
	clientDone bool
	version    int // of a, as saved: a later save never loses to an earlier
}

// begin records a new attempt of op, numbered after the last one, with its
// key and its fate under the network setting f.
func (e *Engine) begin(ctx context.Context, l *Lab, op *Operation, withKey bool, f Fate) (*attemptState, error) {
	seed := l.Settings().Seed
	a := Attempt{Outcome: OutcomePending, StartedAt: e.now().UTC(), Deliveries: []Delivery{}}
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(n), 0) + 1 FROM attempts WHERE lab_id = ? AND op_id = ?`, l.ID, op.ID).Scan(&a.N); err != nil {
			return err
		}
		a.Key, a.Fate = keyFor(seed, op, a.N, withKey), fateOf(seed, op, a.N, f)
		_, err := tx.ExecContext(ctx, `
INSERT INTO attempts (lab_id, op_id, n, key, fate, outcome, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			l.ID, op.ID, a.N, a.Key, a.Fate, a.Outcome, a.StartedAt.Format(time.RFC3339Nano))
		return err
	})
	if err != nil {
		return nil, e.failed(l, "client: begin attempt of "+op.ID, err)
	}
	as := &attemptState{op: op, a: a}
	e.emit(Event{Lab: l.ID, Kind: EventAttempt, Operation: op, Attempt: &a})
	return as, nil
}

// AttemptHeader marks the requests of the lab's own simulated client (its
// value: operation id and attempt number), so that the charge endpoint can
// tell them from charges sent to it straight.
const AttemptHeader = "Idemlab-Attempt"

// send plays the attempt through the simulated network to the lab's own
// charge endpoint, and records what the client saw and what the server did.
// Each copy that goes out uses a slot of g.
func (e *Engine) send(ctx context.Context, l *Lab, as *attemptState, timeout time.Duration, g *grant) (status int, after time.Duration, err error) {
	base, rt := e.self.get()
	if rt == nil {
		rt = http.DefaultTransport
	}
	net := &Network{
		Fate:  as.a.Fate,
		Next:  rt,
		Spawn: g.spawn,
		Observe: func(d Delivery) {
			as.mu.Lock()
			as.a.Deliveries = append(as.a.Deliveries, d)
			late := as.clientDone // the client had already given up
			as.mu.Unlock()
			if late {
				e.saveAttempt(l, as, true)
			}
		},
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	op := as.op
	req, err := opRequest(ctx, base+"/api/v1/labs/"+l.ID, op)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set(AttemptHeader, op.ID+"/"+strconv.Itoa(as.a.N))
	if as.a.Key != nil {
		req.Header.Set("Idempotency-Key", *as.a.Key)
	}
	resp, err := net.RoundTrip(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status, after = resp.StatusCode, retryAfter(resp.Header)
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
	e.saveAttempt(l, as, false)
	return status, after, err
}

// saveAttempt writes the attempt's current state and tells the lab. The
// client's side and a late answer may save at once: each save carries the
// state's version, and the row takes only a newer one.
func (e *Engine) saveAttempt(l *Lab, as *attemptState, late bool) {
	as.mu.Lock()
	a := &as.a
	// What the server did: the first copy that reached it decides; while a
	// copy is still on its way the outcome is pending.
	slices.SortFunc(a.Deliveries, func(x, y Delivery) int { return x.Copy - y.Copy })
	a.Outcome = OutcomePending
	if len(a.Deliveries) == a.Fate.Copies() {
		a.Outcome = OutcomeNotReached
	}
	for _, d := range a.Deliveries {
		if d.Outcome != OutcomeNotReached {
			a.Outcome = d.Outcome
			break
		}
	}
	if as.clientDone {
		t := e.now().UTC()
		if a.FinishedAt == nil {
			a.FinishedAt = &t
		}
	}
	var finished any
	if a.FinishedAt != nil {
		finished = a.FinishedAt.Format(time.RFC3339Nano)
	}
	as.version++
	version := as.version
	snapshot := *a
	snapshot.Deliveries = append([]Delivery(nil), a.Deliveries...)
	as.mu.Unlock()
	_, err := e.store.exec(context.Background(), `
UPDATE attempts SET status = ?, error = ?, outcome = ?, deliveries = ?, finished_at = ?, version = ?
WHERE lab_id = ? AND op_id = ? AND n = ? AND version < ?`,
		snapshot.Status, snapshot.Error, snapshot.Outcome, mustJSON(snapshot.Deliveries), finished, version,
		l.ID, as.op.ID, snapshot.N, version)
	if err != nil && !isGone(err) {
		e.log.Warn("save attempt", "lab", l.ID, "op", as.op.ID, "n", snapshot.N, "err", err)
	}
	e.emit(Event{Lab: l.ID, Kind: EventAttempt, Operation: as.op, Attempt: &snapshot, Late: late})
}

// opRequest is the HTTP request of one attempt of op: POST the charge, or
// PUT or DELETE the order.
func opRequest(ctx context.Context, lab string, op *Operation) (*http.Request, error) {
	var (
		url  = lab + "/charges"
		body []byte
	)
	switch op.Method {
	case http.MethodPut:
		url, body = lab+"/orders/"+op.OrderID, []byte(`{"amount":`+strconv.FormatInt(op.Amount, 10)+`}`)
	case http.MethodDelete:
		url = lab + "/orders/" + op.OrderID
	default:
		body = Charge{OrderID: op.OrderID, Amount: op.Amount}.Body()
	}
	method := op.Method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}
