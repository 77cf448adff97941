package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/broker"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// message is what a charge asks the consumer to do, as published.
type message struct {
	Lab      string          `json:"lab"`
	ID       string          `json:"id"`
	OrderID  string          `json:"order_id"`
	Payment  int64           `json:"payment"`
	Amount   int64           `json:"amount"`
	Fate     sim.MessageFate `json:"fate"`
	MsgDedup bool            `json:"msg_dedup"`
}

// relay publishes the messages the outbox holds, oldest first, each once
// (twice under the fate "duplicate-publish": the producer's own retry after
// a lost publish ack), and starts the consumers of their labs. It runs until
// the notifier closes, woken by each new message and every second. Of
// several processes on one database, the leader's relay alone publishes,
// asking at each turn whether this process leads (the lead passes when the
// leader dies or loses its lease): from the moment it leads, it first
// resumes the consumers of the messages left unacknowledged, then
// publishes.
func (q *queue) relay() {
	leading := false
	q.n.every(time.Second, q.wake, func() {
		if !q.n.Store.Lead(q.n.ctx) {
			leading = false
			return
		}
		if !leading {
			if err := q.resumeConsumers(q.n.ctx); err != nil && q.n.ctx.Err() == nil {
				q.n.Log.Warn("relay: resume the consumers", "err", err)
			} else {
				leading = true
			}
		}
		if leading {
			// A broker or a database that does not answer is logged once
			// per outage, by its watch; the messages wait in the outbox.
			switch err := q.publishPending(q.n.ctx); {
			case err == nil, q.n.ctx.Err() != nil, errors.Is(err, broker.ErrDown):
			case store.IsUnavailable(err) && q.n.DB != nil:
				q.n.DB.Failed(err, "the relay publishes when it does")
			default:
				q.n.Log.Warn("relay", "err", err)
			}
		}
	})
}

// wakeUp tells the relay that a message may wait in the outbox, without
// blocking; the relay looks every second anyway.
func (q *queue) wakeUp() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) publishPending(ctx context.Context) error {
	pending, err := q.pending(ctx)
	if err != nil {
		return err
	}
	var done []published
	for _, m := range pending {
		if err := q.consumeLab(ctx, m.Lab); err != nil {
			if sim.ErrorCode(err) == sim.ENotFound {
				continue // the lab went: its messages go with it
			}
			return err
		}
		copies := 1
		if m.Fate == sim.DeliveryDuplicatePublish {
			copies = 2
		}
		data, _ := json.Marshal(m)
		for c := range copies {
			if _, _, err := q.broker.Publish(ctx, m.Lab, data, copyID(m, c)); err != nil {
				q.markPublished(ctx, done)
				return fmt.Errorf("publish %s: %w", m.ID, err)
			}
		}
		done = append(done, published{m.Lab, m.ID, copies})
	}
	return q.markPublished(ctx, done)
}

// copyID is the Nats-Msg-Id of copy c of m. With the lab's publisher
// deduplication (msg_dedup) every copy carries the message's id, and the
// broker keeps the first. Without it each copy carries one of its own: the
// fate's second copy (the producer's retry) reaches the consumer, while
// the relay's own publishing again of a copy it published, when the
// database did not take its record of that (an outage), is dropped by the
// broker, as it is in a relay made to survive its database.
func copyID(m message, c int) string {
	if m.MsgDedup {
		return m.ID
	}
	return fmt.Sprintf("%s#%d", m.ID, c+1)
}

// pending reads the oldest messages not yet published.
func (q *queue) pending(ctx context.Context) ([]message, error) {
	rows, err := q.n.Store.Query(ctx, `SELECT lab_id, id, order_id, payment_n, amount, fate, msg_dedup
FROM messages WHERE published = 0 ORDER BY created_at, seq LIMIT 100`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var pending []message
	for rows.Next() {
		var m message
		if err := rows.Scan(&m.Lab, &m.ID, &m.OrderID, &m.Payment, &m.Amount, &m.Fate, &m.MsgDedup); err != nil {
			return nil, err
		}
		pending = append(pending, m)
	}
	return pending, rows.Err()
}

// published is a message the relay has published, and how many copies.
type published struct {
	lab, id string
	copies  int
}

// markPublished records the relay's batch in one transaction.
func (q *queue) markPublished(ctx context.Context, done []published) error {
	if len(done) == 0 {
		return nil
	}
	return q.n.Store.Write(ctx, func(tx *store.Tx) error {
		for _, p := range done {
			if _, err := tx.ExecStmt(q.n.st.markPublished, p.copies, p.lab, p.id); err != nil {
				return err
			}
		}
		return nil
	})
}

// queue is the email's path through the broker: the relay, which publishes
// the outbox's messages, and the labs' consumers, which send the emails.
type queue struct {
	n         *Notifier
	broker    *broker.Broker
	wake      chan struct{} // a message waits in the outbox
	consumers consumers     // the labs whose consumer runs
}

// consumers are the labs whose consumer runs, with its ack wait.
type consumers struct {
	mu sync.Mutex
	m  map[string]time.Duration
}

// consumeLab makes sure the lab's consumer runs with the lab's ack wait.
func (q *queue) consumeLab(ctx context.Context, lab string) error {
	l, err := q.n.Labs.Lab(ctx, lab)
	if err != nil {
		return err
	}
	wait := time.Duration(l.Settings().AckWaitMS) * time.Millisecond
	q.consumers.mu.Lock()
	defer q.consumers.mu.Unlock()
	if q.consumers.m == nil {
		q.consumers.m = map[string]time.Duration{}
	}
	if got, ok := q.consumers.m[lab]; ok && got == wait {
		return nil
	}
	if err := q.broker.Consume(lab, wait, q.deliver); err != nil {
		return fmt.Errorf("consume %s: %w", lab, err)
	}
	q.consumers.m[lab] = wait
	return nil
}

// removeConsumer removes the lab's consumer and its messages from the
// broker, when the lab is removed.
func (q *queue) removeConsumer(ctx context.Context, lab string) {
	if q.broker == nil {
		return
	}
	q.consumers.mu.Lock()
	delete(q.consumers.m, lab)
	q.consumers.mu.Unlock()
	if err := q.broker.Remove(ctx, lab); err != nil {
		q.n.Log.Warn("broker: remove", "lab", lab, "err", err)
	}
}

// stopConsumer stops the consumer of a lab let go from memory; its durable
// keeps what is unacknowledged for the next start of the consumer.
func (q *queue) stopConsumer(lab string) {
	if q.broker == nil {
		return
	}
	q.consumers.mu.Lock()
	_, ok := q.consumers.m[lab]
	delete(q.consumers.m, lab)
	q.consumers.mu.Unlock()
	if ok {
		q.broker.Stop(lab)
	}
}

// resumeConsumers starts, at the relay's start, the consumers of the labs
// with messages younger than the broker keeps them: it redelivers what was
// not acknowledged.
func (q *queue) resumeConsumers(ctx context.Context) error {
	ids, err := labs.IDs(ctx, q.n.Store, `SELECT DISTINCT lab_id FROM messages WHERE created_at > ?`, q.n.Clock.Now().Add(-24*time.Hour).UnixMilli())
	if err != nil {
		return err
	}
	for _, lab := range ids {
		if err := q.consumeLab(ctx, lab); err != nil && sim.ErrorCode(err) != sim.ENotFound {
			return err
		}
	}
	return nil
}
