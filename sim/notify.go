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
		var seq int64
		err := tx.QueryRowContext(ctx, `INSERT INTO mail_counts (lab_id, message_seq) VALUES (?1, 1)
ON CONFLICT (lab_id) DO UPDATE SET message_seq = message_seq + 1 RETURNING message_seq`, l.ID).Scan(&seq)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO messages (lab_id, id, seq, order_id, payment_n, amount, fate, msg_dedup, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, l.ID, "msg-"+NewLabID(), seq, p.OrderID, p.ID, p.Amount, s.Delivery, s.PublishDedup, e.stamp())
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
// the engine closes, woken by each new message and every second.
func (e *Engine) relay() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if err := e.publishPending(e.ctx); err != nil && e.ctx.Err() == nil {
			e.log.Warn("relay", "err", err)
		}
		select {
		case <-e.ctx.Done():
			return
		case <-e.relayWake:
		case <-t.C:
		}
	}
}

// wakeRelay tells the relay that a message waits, without blocking.
func (e *Engine) wakeRelay() {
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
				return fmt.Errorf("publish %s: %w", m.ID, err)
			}
		}
		if _, err := e.store.exec(ctx, `UPDATE messages SET published = ? WHERE lab_id = ? AND id = ?`, copies, m.Lab, m.ID); err != nil && !isGone(err) {
			return err
		}
	}
	return nil
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
// with messages not yet done: the broker redelivers what was not acked.
func (e *Engine) resumeConsumers(ctx context.Context) error {
	labs, err := e.labIDs(ctx, `SELECT DISTINCT lab_id FROM messages WHERE done = 0`)
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
// work the message asks for, as the lab's consumer_dedup says, records the
// delivery, and acknowledges, unless the message's fate is to crash
// before its first ack.
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
	s := l.Settings()
	outcome, err := e.work1(ctx, l, s, m)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("consumer", "lab", m.Lab, "message", m.ID, "err", err)
		}
		return // no ack: the broker tries again
	}
	crash := m.Fate == DeliveryCrashBeforeAck && bm.Delivered == 1
	if crash {
		outcome = DeliveryCrashed
	}
	var n int
	err = e.store.tx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO message_deliveries (lab_id, message_id, n, stream_seq, delivered, fate, outcome, at)
SELECT ?1, ?2, COALESCE(MAX(n), 0) + 1, ?3, ?4, ?5, ?6, ?7 FROM message_deliveries WHERE lab_id = ?1 AND message_id = ?2
RETURNING n`, m.Lab, m.ID, bm.Seq, bm.Delivered, m.Fate, outcome, e.stamp()).Scan(&n)
	})
	if err != nil && !isGone(err) {
		e.log.Warn("consumer: record delivery", "lab", m.Lab, "err", err)
	}
	e.emit(Event{Lab: m.Lab, Kind: EventMessage, OrderID: m.OrderID, Delivery: &DeliveryEvent{N: n, Outcome: outcome}})
	if crash {
		return // dies before the ack: the broker delivers it again after ack_wait
	}
	if err := bm.Ack(ctx); err != nil {
		return
	}
	if _, err := e.store.exec(ctx, `UPDATE messages SET done = 1 WHERE lab_id = ? AND id = ?`, m.Lab, m.ID); err != nil && !isGone(err) {
		e.log.Warn("consumer: done", "lab", m.Lab, "err", err)
	}
}

// work1 is the consumer's work for one delivery: the email, unless the
// lab's consumer_dedup recognises the message (or the order) as done. The
// memory of it and the email's outbox row commit together; the email goes
// out from the outbox.
func (e *Engine) work1(ctx context.Context, l *Lab, s Settings, m message) (string, error) {
	var key string
	switch s.ConsumerDedup {
	case DedupMessageID:
		key = m.ID
	case DedupNatural:
		key = "order:" + m.OrderID
	}
	var email string
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		if key != "" {
			res, err := tx.ExecContext(ctx, `INSERT INTO processed_messages (lab_id, key, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, l.ID, key, e.stamp())
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil // done before: skipped
			}
		}
		var err error
		email, err = e.queueEmail(ctx, tx, l.ID, m.OrderID, m.Amount, m.Payment, m.ID)
		return err
	})
	if err != nil {
		return "", err
	}
	e.fault(FaultConsumerOutbox)
	if email == "" {
		return DeliverySkipped, nil
	}
	if err := e.sendEmail(ctx, l.ID, email); err != nil {
		// the outbox keeps it: the mailer sends it later
		e.log.Warn("consumer: send", "lab", l.ID, "email", email, "err", err)
	}
	return DeliverySent, nil
}
