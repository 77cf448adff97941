package sim

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Outcome is what the server did with one request.
type Outcome string

// The outcomes of a charge request, and of an attempt that never got one.
const (
	OutcomeNotReached Outcome = "not-reached" // the network lost the request
	OutcomePending    Outcome = "pending"     // the server has not answered yet
	OutcomeCharged    Outcome = "charged"     // a new payment was written
	OutcomeDuplicate  Outcome = "duplicate"   // the key was seen: no new payment
	OutcomeReplayed   Outcome = "replayed"    // the first answer was sent again
	OutcomeInFlight   Outcome = "in-flight"   // 409: the first request is still running
	OutcomeConflict   Outcome = "conflict"    // 409: the database failed the transaction (40001): retry
	OutcomeMismatch   Outcome = "mismatch"    // 422: the key came with another body
	OutcomeRejected   Outcome = "rejected"    // 400: the request was refused
	OutcomeFailed     Outcome = "failed"      // the server failed (5xx)
	OutcomeUnknown    Outcome = "unknown"     // the lab restarted while the attempt was on its way
	OutcomeDropped    Outcome = "dropped"     // the server took the request and died: the connection dropped, no answer

	// The orders' outcomes (orders.go): PUT and DELETE.
	OutcomeCreated Outcome = "created" // PUT: 201, the order is new
	OutcomeUpdated Outcome = "updated" // PUT: 200, the order was there: its state is set again
	OutcomeDeleted Outcome = "deleted" // DELETE: 204
	OutcomeAbsent  Outcome = "absent"  // DELETE: 404, there was no order (any more)
)

// Payment is one row of a lab's ledger.
type Payment struct {
	ID             int64     `json:"id"`
	OrderID        string    `json:"order_id"`
	Amount         int64     `json:"amount"`
	IdempotencyKey *string   `json:"idempotency_key"`
	CreatedAt      time.Time `json:"created_at"`
}

// Charge is one charge request as the server received it.
type Charge struct {
	OrderID string
	Amount  int64
	Key     *string // nil when the request carried no Idempotency-Key
	// Direct is set for a request sent straight to the API, not by the
	// lab's own client: a scenario replays it, and the report names it.
	Direct bool
}

// Body is the canonical JSON body of the charge, the same bytes whoever
// builds it: what the client sends and what the "hash" key strategy and the
// replay fingerprint hash.
func (c Charge) Body() []byte {
	return []byte(`{"order_id":` + strconv.Quote(c.OrderID) + `,"amount":` + strconv.FormatInt(c.Amount, 10) + `}`)
}

// Fingerprint is the SHA-256 of the canonical body, hex-encoded.
func (c Charge) Fingerprint() string {
	sum := sha256.Sum256(c.Body())
	return hex.EncodeToString(sum[:])
}

// ChargeResult is the server's answer to a charge: the outcome, and the
// exact answer to send (chargeAnswers says which status each outcome gets).
type ChargeResult struct {
	Outcome  Outcome
	Payment  *Payment // the new payment (charged)
	Status   int
	Body     []byte
	Location string
	Replayed bool // the answer is a stored one, sent again: Idempotent-Replayed: true
}

// PaymentLocation is the path of a payment in the HTTP API.
func PaymentLocation(lab string, id int64) string {
	return "/api/v1/labs/" + lab + "/payments/" + strconv.FormatInt(id, 10)
}

// ChargeRequest runs one charge request against the lab's ledger under the
// lab's current protection. The work is not tied to the caller's context:
// once a request has reached the server it runs to the end, as a real server
// does when the client hangs up.
func (e *Engine) ChargeRequest(ctx context.Context, l *Lab, c Charge) (ChargeResult, error) {
	if err := c.Validate(); err != nil {
		return ChargeResult{}, err
	}
	ctx = context.WithoutCancel(ctx)
	s := l.Settings()
	var (
		res ChargeResult
		err error
	)
	switch s.Protection {
	case ProtectNone:
		res, err = e.chargeInsert(ctx, l, c, s, false)
	case ProtectCheckThenInsert:
		res, err = e.chargeCheckThenInsert(ctx, l, c, s)
	case ProtectUnique:
		res, err = e.chargeInsert(ctx, l, c, s, true)
	case ProtectOnConflict:
		res, err = e.chargeOnConflict(ctx, l, c, s)
	case ProtectReplay:
		res, err = e.chargeReplay(ctx, l, c, s)
	case ProtectSetNX:
		res, err = e.chargeSetNX(ctx, l, c, s)
	default:
		err = fmt.Errorf("ledger: unknown protection %q", s.Protection)
	}
	ev := Event{Lab: l.ID, Kind: EventCharge, Outcome: res.Outcome, Payment: res.Payment, Key: c.Key, OrderID: c.OrderID}
	switch ErrorCode(err) {
	case EInFlight:
		ev.Outcome = OutcomeInFlight
	case EConflict:
		ev.Outcome = OutcomeConflict
	case EKeyReused:
		ev.Outcome = OutcomeMismatch
	case EKeyMissing, EInvalid:
		ev.Outcome = OutcomeRejected
	case ECrashed:
		ev.Outcome = OutcomeDropped
	default:
		if err != nil {
			ev.Outcome = OutcomeFailed
		}
	}
	e.emit(ev)
	if res.Payment != nil {
		e.afterCharge(ctx, l, res.Payment)
	}
	return res, err
}

// afterCharge sends what a new payment owes under notify "direct": the
// handler's own email, before it answers. (Under "queue" the web layer
// wakes the relay once the answer is written: WakeRelay.)
func (e *Engine) afterCharge(ctx context.Context, l *Lab, p *Payment) {
	if l.Settings().Notify != NotifyDirect {
		return
	}
	em := outboxEmail{lab: l.ID, orderID: p.OrderID, amount: p.Amount}
	err := e.store.r.QueryRowContext(ctx, `SELECT id FROM email_outbox WHERE lab_id = ? AND payment_n = ? AND message_id IS NULL`, l.ID, p.ID).Scan(&em.id)
	if err != nil {
		return // no email of the handler's own
	}
	if err := e.sendClaimed(ctx, em); err != nil {
		e.log.Warn("notify: send", "lab", l.ID, "err", err) // the outbox keeps it for later
	}
}

// work is the charge's own time: calling the bank, say. It runs before the
// commit, so a retry can arrive while the first request is still working.
func (e *Engine) work(s Settings) { pause(s.ServerDelayMS) }

func pause(ms int) {
	if ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}

// insertPayment writes one payment, in tx or on its own. dedup is the value
// of the column the UNIQUE constraint guards (nil: unguarded).
func (e *Engine) insertPayment(ctx context.Context, tx *sql.Tx, l *Lab, c Charge, dedup *string, onConflict bool) (*Payment, error) {
	now := e.now().UTC()
	st := e.store.q.insertPayment
	if onConflict {
		st = e.store.q.insertPaymentOnConflict
	}
	p := &Payment{OrderID: c.OrderID, Amount: c.Amount, IdempotencyKey: c.Key, CreatedAt: now}
	err := in(ctx, tx, st).QueryRowContext(ctx, l.ID, c.OrderID, c.Amount, c.Key, dedup, c.Direct, now.Format(time.RFC3339Nano)).Scan(&p.ID)
	if err != nil {
		return nil, err
	}
	// What the charge owes the customer commits with it (notify.go).
	if err := e.notifyAfter(ctx, tx, l, l.Settings(), p); err != nil {
		return nil, err
	}
	if c.Direct { // a scenario replays it; the lab's client's own are replayed as operations
		a := Action{Kind: "direct", OrderID: c.OrderID, Amount: c.Amount, Key: c.Key}
		if err := e.record(ctx, tx, l.ID, a); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (e *Engine) charged(l *Lab, p *Payment) ChargeResult {
	return ChargeResult{Outcome: OutcomeCharged, Payment: p, Status: StatusOf(OutcomeCharged), Body: paymentBody(p), Location: PaymentLocation(l.ID, p.ID)}
}

// duplicate is the answer to a key already seen, under the protections that
// do not store answers: no new charge, and not the first answer either.
func duplicate(c Charge) ChargeResult {
	body := mustJSON(struct {
		Status string  `json:"status"`
		Key    *string `json:"idempotency_key"`
		Detail string  `json:"detail"`
	}{"duplicate", c.Key, "A charge with this key was already made; no new charge."})
	return ChargeResult{Outcome: OutcomeDuplicate, Status: StatusOf(OutcomeDuplicate), Body: []byte(body)}
}

func paymentBody(p *Payment) []byte {
	b, _ := json.Marshal(p)
	return b
}

// chargeInsert is protection "none" (a plain INSERT: every request charges)
// and, with unique set, protection "unique": the same INSERT into the column
// guarded by UNIQUE, the constraint error caught as the article does.
func (e *Engine) chargeInsert(ctx context.Context, l *Lab, c Charge, s Settings, unique bool) (ChargeResult, error) {
	e.work(s)
	var dedup *string
	if unique {
		dedup = c.Key
	}
	var p *Payment
	err := e.store.tx(ctx, func(tx *sql.Tx) (err error) {
		if p, err = e.insertPayment(ctx, tx, l, c, dedup, false); err != nil {
			return err
		}
		return s.crashBeforeCommit()
	})
	if unique && isUniqueViolation(err) {
		return duplicate(c), nil
	}
	if err != nil {
		return ChargeResult{}, charging(c, err)
	}
	return e.charged(l, p), nil
}

// chargeCheckThenInsert is the race the article warns about: a SELECT for the
// key, then, in a separate statement, the INSERT. Two retries that both run
// their SELECT before either INSERT both charge.
func (e *Engine) chargeCheckThenInsert(ctx context.Context, l *Lab, c Charge, s Settings) (ChargeResult, error) {
	if c.Key != nil && e.store.postgres() {
		return e.checkThenInsertTx(ctx, l, c, s)
	}
	if c.Key != nil {
		var n int
		err := e.store.q.checkKey.QueryRowContext(ctx, l.ID, *c.Key).Scan(&n)
		if err != nil {
			return ChargeResult{}, fmt.Errorf("ledger: check %s: %w", *c.Key, err)
		}
		if n > 0 {
			return duplicate(c), nil
		}
		pause(s.CheckGapMS)
	}
	e.work(s)
	var p *Payment
	err := e.store.tx(ctx, func(tx *sql.Tx) (err error) {
		if p, err = e.insertPayment(ctx, tx, l, c, nil, false); err != nil {
			return err
		}
		return s.crashBeforeCommit()
	})
	if err != nil {
		return ChargeResult{}, charging(c, err)
	}
	return e.charged(l, p), nil
}

// checkThenInsertTx is check-then-insert on PostgreSQL: the SELECT and the
// INSERT in one transaction at the lab's isolation level. The ledger's
// write lock is taken after the SELECT and the gap, so that two racers
// both look before either writes. Under READ COMMITTED both find nothing
// and both charge; under SERIALIZABLE the second to commit fails with
// 40001, answered 409 with Retry-After: its retry finds the payment.
func (e *Engine) checkThenInsertTx(ctx context.Context, l *Lab, c Charge, s Settings) (ChargeResult, error) {
	var res ChargeResult
	err := e.store.isolated(ctx, s.Isolation, func(tx *sql.Tx) error {
		var n int
		if err := in(ctx, tx, e.store.q.checkKey).QueryRowContext(ctx, l.ID, *c.Key).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			res = duplicate(c)
			return nil
		}
		pause(s.CheckGapMS)
		e.work(s)
		if _, err := in(ctx, tx, e.store.q.lock).ExecContext(ctx); err != nil {
			return err
		}
		p, err := e.insertPayment(ctx, tx, l, c, nil, false)
		if err != nil {
			return err
		}
		res = e.charged(l, p)
		return s.crashBeforeCommit()
	})
	if err != nil {
		return ChargeResult{}, e.conflict(c, e.gone(l, err))
	}
	return res, nil
}

// conflict is a serialization failure (40001) of the charge's transaction
// as the lab's error, EConflict: the client should retry in a moment.
// Other errors are the charge's own.
func (e *Engine) conflict(c Charge, err error) error {
	if pgCode(err) == "40001" {
		return &Error{Code: EConflict, Key: "conflict", Args: []any{keyOf(c)}, RetryAfter: time.Second}
	}
	return charging(c, err)
}

// chargeOnConflict is INSERT … ON CONFLICT (lab, key) DO NOTHING: the
// database skips the duplicate, no exception reaches the code.
func (e *Engine) chargeOnConflict(ctx context.Context, l *Lab, c Charge, s Settings) (ChargeResult, error) {
	e.work(s)
	var p *Payment
	err := e.store.tx(ctx, func(tx *sql.Tx) (err error) {
		if p, err = e.insertPayment(ctx, tx, l, c, c.Key, true); err != nil {
			return err
		}
		return s.crashBeforeCommit()
	})
	if errors.Is(err, sql.ErrNoRows) {
		return duplicate(c), nil
	}
	if err != nil {
		return ChargeResult{}, charging(c, err)
	}
	return e.charged(l, p), nil
}

// chargeReplay claims the key's idempotency record, does the work, and in one
// transaction writes the payment and stores the answer; a retry gets that
// stored answer back, byte for byte. When the charge has no work to wait for,
// claim, payment and answer commit in one transaction: there is no moment in
// which another request could see the claim in flight, so none is made.
func (e *Engine) chargeReplay(ctx context.Context, l *Lab, c Charge, s Settings) (ChargeResult, error) {
	if c.Key == nil {
		return ChargeResult{}, Errorf(EKeyMissing, "key-missing")
	}
	fp := c.Fingerprint()
	lock := time.Duration(s.LockTimeoutMS) * time.Millisecond
	claim := e.newClaim(l.ID, ScopeCharges, *c.Key, time.Duration(s.KeyTTLS)*time.Second, l.Clock())
	done, err := claim.lookup(fp)
	if err != nil {
		return ChargeResult{}, err
	}
	var res ChargeResult
	write := func(tx *sql.Tx) error {
		p, err := e.insertPayment(ctx, tx, l, c, nil, false)
		if err != nil {
			return err
		}
		res = e.charged(l, p)
		return claim.complete(ctx, tx, Stored{Status: res.Status, Body: res.Body, Location: res.Location, ContentType: "application/json"})
	}
	switch {
	case done:
	case s.ServerDelayMS == 0 && s.ServerFault == FaultNone:
		// The payment first, then the claim with its answer in the same
		// statement: a new key (the usual case) costs one statement less.
		// When the key is taken, both roll back and the usual way decides.
		err = e.store.tx(ctx, func(tx *sql.Tx) error {
			p, err := e.insertPayment(ctx, tx, l, c, nil, false)
			if err != nil {
				return err
			}
			res = e.charged(l, p)
			return claim.takeDone(ctx, tx, fp, lock, Stored{Status: res.Status, Body: res.Body, Location: res.Location, ContentType: "application/json"})
		})
		if errors.Is(err, errTaken) {
			res = ChargeResult{}
			err = e.store.tx(ctx, func(tx *sql.Tx) error {
				if err := claim.take(ctx, tx, fp, lock); err != nil || claim.Replay != nil {
					return err
				}
				return write(tx)
			})
		}
	default:
		if err = e.store.tx(ctx, func(tx *sql.Tx) error { return claim.take(ctx, tx, fp, lock) }); err != nil || claim.Replay != nil {
			break
		}
		// The claim has committed, in flight: a server that dies here
		// leaves it claimed until its lock times out.
		if err = s.crashBeforeCommit(); err != nil {
			break
		}
		e.work(s)
		if err = e.store.tx(ctx, write); err != nil && ErrorCode(err) == EInternal {
			e.ReleaseLog(claim)
		}
	}
	if err != nil {
		return ChargeResult{}, e.gone(l, claim.wrap(err))
	}
	claim.remember()
	if r := claim.Replay; r != nil {
		return ChargeResult{Outcome: OutcomeReplayed, Status: r.Status, Body: r.Body, Location: r.Location, Replayed: true}, nil
	}
	return res, nil
}

// errCrashed is the server dying in the middle of a charge (server_fault
// crash-after-guard): whatever its transaction wrote rolls back, and the
// web layer drops the connection without an answer.
var errCrashed = &Error{Code: ECrashed, Key: "crashed"}

// crashBeforeCommit is the fault point between a charge's guard and its
// commit: under crash-after-guard the transaction fails there and rolls back.
func (s Settings) crashBeforeCommit() error {
	if s.ServerFault == FaultCrashAfterGuard {
		return errCrashed
	}
	return nil
}

// keyOf is the charge's key as an answer may repeat it.
func keyOf(c Charge) string {
	if c.Key == nil {
		return ""
	}
	return clip(*c.Key)
}

// charging wraps a charge's failure; the server's own crash passes as it is.
func charging(c Charge, err error) error {
	if ErrorCode(err) == ECrashed {
		return err
	}
	return fmt.Errorf("ledger: charge %s: %w", c.OrderID, err)
}

// Totals are a lab's counts, kept in the transaction of every change: what
// they cost to read does not grow with the lab.
type Totals struct {
	Payments    int64 // in the ledger
	Total       int64 // their sum
	Doubled     int64 // orders charged more than once
	Overcharged int64 // of those, orders charged more often than bought
}

// Totals returns the lab's counts.
func (e *Engine) Totals(ctx context.Context, l *Lab) (Totals, error) {
	var t Totals
	err := e.store.r.QueryRowContext(ctx, `SELECT payments, total, doubled, overcharged FROM lab_counts WHERE lab_id = ?`, l.ID).
		Scan(&t.Payments, &t.Total, &t.Doubled, &t.Overcharged)
	if errors.Is(err, sql.ErrNoRows) {
		return t, noLab(l.ID)
	}
	if err != nil {
		return t, fmt.Errorf("ledger: totals of %s: %w", l.ID, err)
	}
	return t, nil
}

// Payments returns a page of the lab's payments, newest first; Totals
// counts the whole ledger.
func (e *Engine) Payments(ctx context.Context, l *Lab, limit, offset int) ([]Payment, error) {
	rows, err := e.store.r.QueryContext(ctx,
		`SELECT n, order_id, amount, idempotency_key, created_at FROM payments WHERE lab_id = ? ORDER BY n DESC LIMIT ? OFFSET ?`,
		l.ID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("ledger: payments of %s: %w", l.ID, err)
	}
	defer rows.Close()
	ps := []Payment{}
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, fmt.Errorf("ledger: payments of %s: %w", l.ID, err)
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

// DirectCharges returns the first `most` payments of the lab that were sent
// straight to the API rather than by its client, oldest first, and how many
// there are in all.
func (e *Engine) DirectCharges(ctx context.Context, l *Lab, most int) ([]Payment, int64, error) {
	var n int64
	if err := e.store.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM payments WHERE lab_id = ? AND direct`, l.ID).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("ledger: direct charges of %s: %w", l.ID, err)
	}
	rows, err := e.store.r.QueryContext(ctx,
		`SELECT n, order_id, amount, idempotency_key, created_at FROM payments WHERE lab_id = ? AND direct ORDER BY n LIMIT ?`, l.ID, most)
	if err != nil {
		return nil, 0, fmt.Errorf("ledger: direct charges of %s: %w", l.ID, err)
	}
	defer rows.Close()
	var ps []Payment
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, 0, err
		}
		ps = append(ps, p)
	}
	return ps, n, rows.Err()
}

// Payment returns one payment of the lab, or ENotFound.
func (e *Engine) Payment(ctx context.Context, l *Lab, id int64) (Payment, error) {
	row := e.store.r.QueryRowContext(ctx,
		`SELECT n, order_id, amount, idempotency_key, created_at FROM payments WHERE lab_id = ? AND n = ?`, l.ID, id)
	p, err := scanPayment(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Payment{}, Errorf(ENotFound, "no-payment", id)
	}
	return p, err
}

func scanPayment(row interface{ Scan(...any) error }) (Payment, error) {
	var (
		p  Payment
		at string
	)
	if err := row.Scan(&p.ID, &p.OrderID, &p.Amount, &p.IdempotencyKey, &at); err != nil {
		return Payment{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return Payment{}, fmt.Errorf("payment %d: created_at %q: %w", p.ID, at, err)
	}
	p.CreatedAt = t
	return p, nil
}

// DoubleCharge is an order charged more than once.
type DoubleCharge struct {
	OrderID string
	Times   int   // charges of the order
	Extra   int64 // what was charged beyond the first charge
	// Purchases is how many operations the lab's client started for the
	// order: each is a purchase the customer meant. 0 when the charges came
	// straight to the API, not through the client.
	Purchases int
}

// DoubleCharges lists at most the first `most` orders of the lab charged
// more than once, in the order of their first charge; Totals counts them all.
func (e *Engine) DoubleCharges(ctx context.Context, l *Lab, most int) ([]DoubleCharge, error) {
	rows, err := e.store.r.QueryContext(ctx, `
SELECT order_id, charges, total - first_amount, purchases FROM order_stats
WHERE lab_id = ? AND charges > 1 ORDER BY first_n LIMIT ?`, l.ID, most)
	if err != nil {
		return nil, fmt.Errorf("ledger: double charges of %s: %w", l.ID, err)
	}
	defer rows.Close()
	var out []DoubleCharge
	for rows.Next() {
		var d DoubleCharge
		if err := rows.Scan(&d.OrderID, &d.Times, &d.Extra, &d.Purchases); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// chargeSetNX takes the key in the key-value store with one atomic command,
// SET idem:{lab}:{key} <fingerprint> NX PX <key_ttl_s>, then inserts the
// payment in the ledger: two stores, two steps. A key already there is a
// duplicate; no key guards nothing.
func (e *Engine) chargeSetNX(ctx context.Context, l *Lab, c Charge, s Settings) (ChargeResult, error) {
	if c.Key != nil {
		if e.kv == nil {
			return ChargeResult{}, Busy("kv", 10*time.Second, "kv-down")
		}
		taken, err := e.kv.SetNX(ctx, l.ID, *c.Key, c.Fingerprint(), time.Duration(s.KeyTTLS)*time.Second, e.now())
		if err != nil {
			e.log.Warn("set-nx", "lab", l.ID, "err", err)
			return ChargeResult{}, Busy("kv", 5*time.Second, "kv-down")
		}
		if !taken {
			return duplicate(c), nil
		}
	}
	return e.chargeInsert(ctx, l, c, s, false)
}
