package sim

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"idemlab/sim/broker"
)

// The notification room: after a new charge commits, the "your order is
// placed" email. Under notify "direct" the charge handler sends it itself;
// under "queue" the charge writes a message in its own transaction (the
// outbox, table messages), the relay publishes it to the broker after the
// commit, and the lab's consumer sends the email on each delivery, as its
// consumer_dedup lets it. The broker delivers at least once: what the
// consumer does about a second delivery is the lesson.

// message is what a charge asks the consumer to do, as published.
type message struct {
	Lab      string      `json:"lab"`
	ID       string      `json:"id"`
	OrderID  string      `json:"order_id"`
	Payment  int64       `json:"payment"`
	Amount   int64       `json:"amount"`
	Fate     MessageFate `json:"fate"`
	MsgDedup bool        `json:"msg_dedup"`
}

// The outcomes of one delivery to the consumer.
const (
	DeliverySent    = "sent"    // the consumer sent the email
	DeliverySkipped = "skipped" // it recognised the work as done
	DeliveryCrashed = "crashed" // it did the work and died before its ack: it will come again
)

// notifyAfter writes, in the payment's transaction, what the charge owes
// the customer: a message for the broker (queue) or an email for the
// handler to send once the payment has committed (direct).
func (e *Engine) notifyAfter(ctx context.Context, tx *sql.Tx, l *Lab, s Settings, p *Payment) error {
	switch s.Notify {
	case NotifyQueue:
		if e.broker == nil {
			return nil
		}
		// One statement on the charge's path: the message's number in the
		// lab is its payment's.
		_, err := in(ctx, tx, e.store.q.insertMessage).ExecContext(ctx, l.ID, "msg-"+NewLabID(), p.ID, p.OrderID, p.ID, p.Amount, s.Delivery, s.PublishDedup, e.stamp())
		return err
	case NotifyDirect:
		_, err := e.queueEmail(ctx, tx, l.ID, p.OrderID, p.Amount, p.ID, "")
		return err
	}
	return nil
}

// relay publishes the messages the outbox holds, oldest first, each once
// (twice under the fate "duplicate-publish": the producer's own retry after
// a lost publish ack), and starts the consumers of their labs. It runs until
// the engine closes, woken by each new message and every second. Of several
// processes on one database, the leader's relay alone publishes: from the
// moment it leads, it first resumes the consumers of the messages left
// unacknowledged, then publishes.
func (e *Engine) relay() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	leading := false
	for {
		if !leading && e.store.lead(e.ctx) {
			if err := e.resumeConsumers(e.ctx); err != nil && e.ctx.Err() == nil {
				e.log.Warn("relay: resume the consumers", "err", err)
			} else {
				leading = true
			}
		}
		if leading {
			if err := e.publishPending(e.ctx); err != nil && e.ctx.Err() == nil {
				e.log.Warn("relay", "err", err)
			}
		}
		select {
		case <-e.ctx.Done():
			return
		case <-e.relayWake:
		case <-t.C:
		}
	}
}

// WakeRelay tells the relay that a message may wait in the outbox, without
// blocking; the relay looks every second anyway.
func (e *Engine) WakeRelay() {
	select {
	case e.relayWake <- struct{}{}:
	default:
	}
}

func (e *Engine) publishPending(ctx context.Context) error {
	rows, err := e.store.r.QueryContext(ctx, `SELECT lab_id, id, order_id, payment_n, amount, fate, msg_dedup
FROM messages WHERE published = 0 ORDER BY created_at LIMIT 100`)
	if err != nil {
		return err
	}
	var pending []message
	for rows.Next() {
		var m message
		if err := rows.Scan(&m.Lab, &m.ID, &m.OrderID, &m.Payment, &m.Amount, &m.Fate, &m.MsgDedup); err != nil {
			rows.Close()
			return err
		}
		pending = append(pending, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var done []published
	for _, m := range pending {
		if err := e.consumeLab(ctx, m.Lab); err != nil {
			if ErrorCode(err) == ENotFound {
				continue // the lab went: its messages go with it
			}
			return err
		}
		copies := 1
		if m.Fate == DeliveryDuplicatePublish {
			copies = 2
		}
		id := ""
		if m.MsgDedup {
			id = m.ID
		}
		data, _ := json.Marshal(m)
		for range copies {
			if _, _, err := e.broker.Publish(ctx, m.Lab, data, id); err != nil {
				e.markPublished(ctx, done)
				return fmt.Errorf("publish %s: %w", m.ID, err)
			}
		}
		done = append(done, published{m.Lab, m.ID, copies})
	}
	return e.markPublished(ctx, done)
}

// published is a message the relay has published, and how many copies.
type published struct {
	lab, id string
	copies  int
}

// markPublished records the relay's batch in one transaction.
func (e *Engine) markPublished(ctx context.Context, done []published) error {
	if len(done) == 0 {
		return nil
	}
	return e.store.tx(ctx, func(tx *sql.Tx) error {
		for _, p := range done {
			if _, err := in(ctx, tx, e.store.q.markPublished).ExecContext(ctx, p.copies, p.lab, p.id); err != nil {
				return err
			}
		}
		return nil
	})
}

// consumers are the labs whose consumer runs, with its ack wait.
type consumers struct {
	mu sync.Mutex
	m  map[string]time.Duration
}

// consumeLab makes sure the lab's consumer runs with the lab's ack wait.
func (e *Engine) consumeLab(ctx context.Context, lab string) error {
	l, err := e.Lab(ctx, lab)
	if err != nil {
		return err
	}
	wait := time.Duration(l.Settings().AckWaitMS) * time.Millisecond
	e.consumers.mu.Lock()
	defer e.consumers.mu.Unlock()
	if e.consumers.m == nil {
		e.consumers.m = map[string]time.Duration{}
	}
	if got, ok := e.consumers.m[lab]; ok && got == wait {
		return nil
	}
	if err := e.broker.Consume(lab, wait, e.deliver); err != nil {
		return fmt.Errorf("consume %s: %w", lab, err)
	}
	e.consumers.m[lab] = wait
	return nil
}

// forgetConsumer removes the lab's consumer and its messages from the
// broker, when the lab is removed.
func (e *Engine) forgetConsumer(ctx context.Context, lab string) {
	if e.broker == nil {
		return
	}
	e.consumers.mu.Lock()
	delete(e.consumers.m, lab)
	e.consumers.mu.Unlock()
	if err := e.broker.Remove(ctx, lab); err != nil {
		e.log.Warn("broker: remove", "lab", lab, "err", err)
	}
}

// stopConsumers stops the consumers of labs let go from memory; their
// durables keep what is unacknowledged for the next start of the consumer.
func (e *Engine) stopConsumers(labs []string) {
	if e.broker == nil {
		return
	}
	for _, lab := range labs {
		e.consumers.mu.Lock()
		_, ok := e.consumers.m[lab]
		delete(e.consumers.m, lab)
		e.consumers.mu.Unlock()
		if ok {
			e.broker.Stop(lab)
		}
	}
}

// resumeConsumers starts, at the engine's start, the consumers of the labs
// with messages younger than the broker keeps them: it redelivers what was
// not acknowledged.
func (e *Engine) resumeConsumers(ctx context.Context) error {
	labs, err := e.labIDs(ctx, `SELECT DISTINCT lab_id FROM messages WHERE created_at > ?`, e.now().Add(-24*time.Hour).UTC().Format(time.RFC3339Nano))
	if err != nil {
		return err
	}
	for _, lab := range labs {
		if err := e.consumeLab(ctx, lab); err != nil && ErrorCode(err) != ENotFound {
			return err
		}
	}
	return nil
}

// deliver is the lab's consumer: one delivery of one message. It does the
// work the message asks for, as the lab's consumer_dedup says, and records
// the delivery, in one transaction; sends the email; and acknowledges,
// unless the message's fate is to crash before its first ack.
func (e *Engine) deliver(ctx context.Context, bm *broker.Msg) {
	var m message
	if err := json.Unmarshal(bm.Data, &m); err != nil {
		e.log.Warn("consumer: unreadable message", "seq", bm.Seq, "err", err)
		bm.Ack(ctx) // a message no one can read is not worth another try
		return
	}
	l, err := e.Lab(ctx, m.Lab)
	if err != nil {
		bm.Ack(ctx) // the lab is gone
		return
	}
	crash := m.Fate == DeliveryCrashBeforeAck && bm.Delivered == 1
	d, err := e.work1(ctx, l, l.Settings(), m, bm, crash)
	if isGone(err) {
		bm.Ack(ctx) // the lab went meanwhile
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("consumer", "lab", m.Lab, "message", m.ID, "err", err)
		}
		return // no ack: the broker tries again
	}
	e.fault(FaultConsumerOutbox)
	if d.email.id != "" {
		if err := e.sendClaimed(ctx, d.email); err != nil {
			e.log.Warn("consumer: send", "lab", l.ID, "email", d.email.id, "err", err) // the outbox keeps it: the mailer sends it later
		}
	}
	e.emit(Event{Lab: m.Lab, Kind: EventMessage, OrderID: m.OrderID, Delivery: &DeliveryEvent{N: d.n, Outcome: d.outcome}})
	if crash {
		return // dies before the ack: the broker delivers it again after ack_wait
	}
	bm.Ack(ctx)
}

// consumed is what the consumer made of one delivery.
type consumed struct {
	n       int         // the delivery's number over every copy of the message
	outcome string      // DeliverySent, DeliverySkipped, DeliveryCrashed
	email   outboxEmail // the email to send, claimed for this consumer; its id "" for none
}

// work1 is the consumer's work for one delivery, in one transaction: the
// email's outbox row, unless the lab's consumer_dedup recognises the
// message (or the order) as done; its memory of the work; the delivery's
// record. The email goes out from the outbox after the commit.
func (e *Engine) work1(ctx context.Context, l *Lab, s Settings, m message, bm *broker.Msg, crash bool) (consumed, error) {
	var key string
	switch s.ConsumerDedup {
	case DedupMessageID:
		key = m.ID
	case DedupNatural:
		key = "order:" + m.OrderID
	}
	var d consumed
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		d = consumed{outcome: DeliverySent}
		if key != "" {
			res, err := in(ctx, tx, e.store.q.processed).ExecContext(ctx, l.ID, key, e.stamp())
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				d.outcome = DeliverySkipped // done before
			}
		}
		if d.outcome == DeliverySent {
			var err error
			if d.email, err = e.queueEmail(ctx, tx, l.ID, m.OrderID, m.Amount, m.Payment, m.ID); err != nil {
				return err
			}
		}
		if crash {
			d.outcome = DeliveryCrashed
		}
		return in(ctx, tx, e.store.q.delivery).QueryRowContext(ctx, m.Lab, m.ID, bm.Seq, bm.Delivered, m.Fate, d.outcome, e.stamp()).Scan(&d.n)
	})
	return d, err
}

// forgetKeys deletes the lab's keys from the key-value store (its reset,
// its removal). A store that does not answer keeps them until they expire.
func (e *Engine) forgetKeys(ctx context.Context, lab string) {
	if e.kv == nil {
		return
	}
	if err := e.kv.Forget(ctx, lab); err != nil {
		e.log.Warn("set-nx: forget the keys", "lab", lab, "err", err)
	}
}
