package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"idemlab/sim"
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
// several processes on one database, the leader's relay alone publishes:
// from the moment it leads, it first resumes the consumers of the messages
// left unacknowledged, then publishes.
func (n *Notifier) relay() {
	leading := false
	n.every(time.Second, n.relayWake, func() {
		if !leading && n.Store.Lead(n.ctx) {
			if err := n.resumeConsumers(n.ctx); err != nil && n.ctx.Err() == nil {
				n.Log.Warn("relay: resume the consumers", "err", err)
			} else {
				leading = true
			}
		}
		if leading {
			if err := n.publishPending(n.ctx); err != nil && n.ctx.Err() == nil {
				n.Log.Warn("relay", "err", err)
			}
		}
	})
}

// WakeRelay tells the relay that a message may wait in the outbox, without
// blocking; the relay looks every second anyway.
func (n *Notifier) WakeRelay() {
	select {
	case n.relayWake <- struct{}{}:
	default:
	}
}

func (n *Notifier) publishPending(ctx context.Context) error {
	pending, err := n.pending(ctx)
	if err != nil {
		return err
	}
	var done []published
	for _, m := range pending {
		if err := n.consumeLab(ctx, m.Lab); err != nil {
			if sim.ErrorCode(err) == sim.ENotFound {
				continue // the lab went: its messages go with it
			}
			return err
		}
		copies := 1
		if m.Fate == sim.DeliveryDuplicatePublish {
			copies = 2
		}
		id := ""
		if m.MsgDedup {
			id = m.ID
		}
		data, _ := json.Marshal(m)
		for range copies {
			if _, _, err := n.broker.Publish(ctx, m.Lab, data, id); err != nil {
				n.markPublished(ctx, done)
				return fmt.Errorf("publish %s: %w", m.ID, err)
			}
		}
		done = append(done, published{m.Lab, m.ID, copies})
	}
	return n.markPublished(ctx, done)
}

// pending reads the oldest messages not yet published.
func (n *Notifier) pending(ctx context.Context) ([]message, error) {
	rows, err := n.Store.Query(ctx, `SELECT lab_id, id, order_id, payment_n, amount, fate, msg_dedup
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
func (n *Notifier) markPublished(ctx context.Context, done []published) error {
	if len(done) == 0 {
		return nil
	}
	return n.Store.Write(ctx, func(tx *store.Tx) error {
		for _, p := range done {
			if _, err := tx.ExecStmt(n.st.markPublished, p.copies, p.lab, p.id); err != nil {
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
func (n *Notifier) consumeLab(ctx context.Context, lab string) error {
	l, err := n.Labs.Lab(ctx, lab)
	if err != nil {
		return err
	}
	wait := time.Duration(l.Settings().AckWaitMS) * time.Millisecond
	n.consumers.mu.Lock()
	defer n.consumers.mu.Unlock()
	if n.consumers.m == nil {
		n.consumers.m = map[string]time.Duration{}
	}
	if got, ok := n.consumers.m[lab]; ok && got == wait {
		return nil
	}
	if err := n.broker.Consume(lab, wait, n.deliver); err != nil {
		return fmt.Errorf("consume %s: %w", lab, err)
	}
	n.consumers.m[lab] = wait
	return nil
}

// removeConsumer removes the lab's consumer and its messages from the
// broker, when the lab is removed.
func (n *Notifier) removeConsumer(ctx context.Context, lab string) {
	if n.broker == nil {
		return
	}
	n.consumers.mu.Lock()
	delete(n.consumers.m, lab)
	n.consumers.mu.Unlock()
	if err := n.broker.Remove(ctx, lab); err != nil {
		n.Log.Warn("broker: remove", "lab", lab, "err", err)
	}
}

// stopConsumer stops the consumer of a lab let go from memory; its durable
// keeps what is unacknowledged for the next start of the consumer.
func (n *Notifier) stopConsumer(lab string) {
	if n.broker == nil {
		return
	}
	n.consumers.mu.Lock()
	_, ok := n.consumers.m[lab]
	delete(n.consumers.m, lab)
	n.consumers.mu.Unlock()
	if ok {
		n.broker.Stop(lab)
	}
}

// resumeConsumers starts, at the relay's start, the consumers of the labs
// with messages younger than the broker keeps them: it redelivers what was
// not acknowledged.
func (n *Notifier) resumeConsumers(ctx context.Context) error {
	labs, err := n.Labs.IDs(ctx, `SELECT DISTINCT lab_id FROM messages WHERE created_at > ?`, n.Clock.Now().Add(-24*time.Hour).UnixMilli())
	if err != nil {
		return err
	}
	for _, lab := range labs {
		if err := n.consumeLab(ctx, lab); err != nil && sim.ErrorCode(err) != sim.ENotFound {
			return err
		}
	}
	return nil
}
