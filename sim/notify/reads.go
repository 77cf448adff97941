package notify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// Mailbox reads the lab's mailbox: at most limit emails, newest first, how
// many in all, and the first ten orders with more than one.
func (n *Notifier) Mailbox(ctx context.Context, l *labs.Lab, limit int) (sim.Mailbox, error) {
	var mb sim.Mailbox
	var doubled int64
	err := n.Store.QueryRow(ctx, `SELECT emails, doubled FROM mail_counts WHERE lab_id = ?`, l.ID).Scan(&mb.Count, &doubled)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return mb, err
	}
	if mb.Emails, err = n.emails(ctx, l, limit); err != nil {
		return mb, err
	}
	if doubled == 0 {
		return mb, nil
	}
	rows, err := n.Store.Query(ctx, `SELECT order_id, emails FROM email_stats WHERE lab_id = ? AND emails > 1 ORDER BY first_n LIMIT 10`, l.ID)
	if err != nil {
		return mb, err
	}
	defer rows.Close()
	for rows.Next() {
		var o sim.OrderEmails
		if err := rows.Scan(&o.OrderID, &o.Emails); err != nil {
			return mb, err
		}
		mb.Doubled = append(mb.Doubled, o)
	}
	mb.More = doubled - int64(len(mb.Doubled))
	return mb, rows.Err()
}

func (n *Notifier) emails(ctx context.Context, l *labs.Lab, limit int) ([]sim.Email, error) {
	rows, err := n.Store.Query(ctx, `SELECT n, to_addr, subject, order_id, message_id, received_at FROM emails WHERE lab_id = ? ORDER BY n DESC LIMIT ?`, l.ID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sim.Email
	for rows.Next() {
		var (
			m  sim.Email
			at int64
		)
		if err := rows.Scan(&m.N, &m.To, &m.Subject, &m.OrderID, &m.MessageID, &at); err != nil {
			return nil, err
		}
		m.ReceivedAt = time.UnixMilli(at).UTC()
		out = append(out, m)
	}
	return out, rows.Err()
}

// OrderEmails is how many emails the lab's order got.
func (n *Notifier) OrderEmails(ctx context.Context, l *labs.Lab, orderID string) (int64, error) {
	var k int64
	err := n.Store.QueryRow(ctx, `SELECT emails FROM email_stats WHERE lab_id = ? AND order_id = ?`, l.ID, orderID).Scan(&k)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("mailbox of %s: %w", l.ID, err)
	}
	return k, nil
}

// Messages reads the lab's newest messages, at most limit, newest first,
// with their deliveries.
func (n *Notifier) Messages(ctx context.Context, l *labs.Lab, limit int) ([]sim.Message, error) {
	return n.messages(ctx, l, "", time.Time{}, limit)
}

// MessagesOf reads the messages of an operation: those of its order written
// since it started, oldest first, at most limit.
func (n *Notifier) MessagesOf(ctx context.Context, l *labs.Lab, op *sim.Operation, limit int) ([]sim.Message, error) {
	ms, err := n.messages(ctx, l, op.OrderID, op.CreatedAt, limit)
	slices.Reverse(ms)
	return ms, err
}

// The newest messages of a lab, or of one of its orders since a time, with
// their deliveries.
const (
	messagesOfLab = `
WITH latest AS (SELECT id, seq, order_id, published, fate, created_at FROM messages
                WHERE lab_id = ?1 ORDER BY seq DESC LIMIT ?2)` + messagesWithDeliveries
	messagesOfOrder = `
WITH latest AS (SELECT id, seq, order_id, published, fate, created_at FROM messages
                WHERE lab_id = ?1 AND order_id = ?3 AND created_at >= ?4 ORDER BY seq DESC LIMIT ?2)` + messagesWithDeliveries
	messagesWithDeliveries = `
SELECT m.id, m.order_id, m.published, m.fate, m.created_at, d.n, d.fate, d.outcome
FROM latest m LEFT JOIN message_deliveries d ON d.lab_id = ?1 AND d.message_id = m.id
ORDER BY m.seq DESC, d.n`
)

func (n *Notifier) messages(ctx context.Context, l *labs.Lab, orderID string, since time.Time, limit int) ([]sim.Message, error) {
	// Two texts, not one with "?3 = '' OR …": SQLite compiles that one
	// again at every run, the value bound deciding its plan.
	q, args := messagesOfLab, []any{l.ID, limit}
	if orderID != "" {
		q, args = messagesOfOrder, append(args, orderID, since.UnixMilli())
	}
	rows, err := n.Store.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []sim.Message{}
	for rows.Next() {
		var (
			m       sim.Message
			at      int64
			k       *int
			fate    *sim.MessageFate
			outcome *string
		)
		if err := rows.Scan(&m.ID, &m.OrderID, &m.Published, &m.Fate, &at, &k, &fate, &outcome); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].ID != m.ID {
			m.CreatedAt = time.UnixMilli(at).UTC()
			m.Deliveries = []sim.MessageDelivery{}
			out = append(out, m)
		}
		if k != nil {
			last := &out[len(out)-1]
			last.Deliveries = append(last.Deliveries, sim.MessageDelivery{N: *k, Fate: *fate, Outcome: *outcome})
		}
	}
	return out, rows.Err()
}

// Unsettled is how much of the lab's email path is still under way (its
// messages never delivered but to a crash, its emails not yet sent), and
// how many emails its mailbox holds.
func (n *Notifier) Unsettled(ctx context.Context, l *labs.Lab) (open, emails int64, err error) {
	err = n.Store.QueryRow(ctx, `
SELECT (SELECT COUNT(*) FROM messages m WHERE m.lab_id = ?1 AND NOT EXISTS (
            SELECT 1 FROM message_deliveries d WHERE d.lab_id = m.lab_id AND d.message_id = m.id AND d.outcome <> 'crashed'))
     + (SELECT COUNT(*) FROM email_outbox WHERE lab_id = ?1 AND sent = 0),
       COALESCE((SELECT emails FROM mail_counts WHERE lab_id = ?1), 0)`, l.ID).Scan(&open, &emails)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("mailbox of %s: %w", l.ID, err)
	}
	return open, emails, nil
}
