package notify

import (
	"context"
	"encoding/json"

	"idemlab/sim"
	"idemlab/sim/broker"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// deliver is the lab's consumer: one delivery of one message. It does the
// work the message asks for, as the lab's consumer_dedup says, and records
// the delivery, in one transaction; sends the email; and acknowledges,
// unless the message's fate is to crash before its first ack.
func (q *queue) deliver(ctx context.Context, bm *broker.Msg) {
	var m message
	if err := json.Unmarshal(bm.Data, &m); err != nil {
		q.n.Log.Warn("consumer: unreadable message", "seq", bm.Seq, "err", err)
		bm.Ack(ctx) // a message no one can read is not worth another try
		return
	}
	l, err := q.n.Labs.Lab(ctx, m.Lab)
	if err != nil {
		bm.Ack(ctx) // the lab is gone
		return
	}
	crash := m.Fate == sim.DeliveryCrashBeforeAck && bm.Delivered == 1
	d, err := q.work(ctx, l, l.Settings(), m, bm, crash)
	if store.IsGone(err) {
		bm.Ack(ctx) // the lab went meanwhile
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			q.n.Log.Warn("consumer", "lab", m.Lab, "message", m.ID, "err", err)
		}
		return // no ack: the broker tries again
	}
	if q.n.AfterConsumerCommit != nil {
		q.n.AfterConsumerCommit()
	}
	if d.email.id != "" {
		if err := q.n.mail.sendClaimed(ctx, d.email); err != nil {
			q.n.Log.Warn("consumer: send", "lab", l.ID, "email", d.email.id, "err", err) // the outbox keeps it: the mailer sends it later
		}
	}
	q.n.Bus.Publish(sim.Event{Lab: m.Lab, Kind: sim.EventMessage, OrderID: m.OrderID, Delivery: &sim.DeliveryEvent{N: d.n, Outcome: d.outcome}})
	if crash {
		return // dies before the ack: the broker delivers it again after ack_wait
	}
	bm.Ack(ctx)
}

// consumed is what the consumer made of one delivery.
type consumed struct {
	n       int         // the delivery's number over every copy of the message
	outcome string      // sim.DeliverySent, DeliverySkipped, DeliveryCrashed
	email   outboxEmail // the email to send, claimed for this consumer; its id "" for none
}

// work is the consumer's work for one delivery, in one transaction: the
// email's outbox row, unless the lab's consumer_dedup recognises the
// message (or the order) as done; its memory of the work; the delivery's
// record. The email goes out from the outbox after the commit.
func (q *queue) work(ctx context.Context, l *labs.Lab, s sim.Settings, m message, bm *broker.Msg, crash bool) (consumed, error) {
	var key string
	switch s.ConsumerDedup {
	case sim.DedupMessageID:
		key = m.ID
	case sim.DedupNatural:
		key = "order:" + m.OrderID
	}
	var d consumed
	err := q.n.Store.WriteLab(ctx, l.ID, func(tx *store.Tx) error { // a delivery is numbered in its lab
		now := q.n.Clock.Now().UnixMilli()
		d = consumed{outcome: sim.DeliverySent}
		if key != "" {
			res, err := tx.ExecStmt(q.n.st.processed, l.ID, key, now)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k == 0 {
				d.outcome = sim.DeliverySkipped // done before
			}
		}
		if d.outcome == sim.DeliverySent {
			var err error
			if d.email, err = q.n.mail.queueEmail(tx, l.ID, m.OrderID, m.Amount, m.Payment, m.ID); err != nil {
				return err
			}
		}
		if crash {
			d.outcome = sim.DeliveryCrashed
		}
		return tx.QueryRowStmt(q.n.st.delivery, m.Lab, m.ID, bm.Seq, bm.Delivered, m.Fate, d.outcome, now).Scan(&d.n)
	})
	return d, err
}
