package sim

import (
	"context"
	"slices"
	"time"
)

// Message is one message of the queue as the lab's API shows it: how many
// copies were published and every delivery of them to the consumer.
type Message struct {
	ID         string            `json:"id"`
	OrderID    string            `json:"order_id"`
	Published  int               `json:"published"`
	Fate       MessageFate       `json:"fate"`
	Deliveries []MessageDelivery `json:"deliveries"`
	CreatedAt  time.Time         `json:"created_at"`
}

// MessageDelivery is one delivery of a message to the consumer, and what
// the consumer made of it: DeliverySent, DeliverySkipped, DeliveryCrashed.
type MessageDelivery struct {
	N       int         `json:"n"`
	Fate    MessageFate `json:"fate"`
	Outcome string      `json:"outcome"`
}

// Messages reads the lab's newest messages, at most limit, newest first,
// with their deliveries.
func (e *Engine) Messages(ctx context.Context, l *Lab, limit int) ([]Message, error) {
	return e.messages(ctx, l, "", time.Time{}, limit)
}

// MessagesOf reads the messages of an operation: those of its order written
// since it started, oldest first, at most limit.
func (e *Engine) MessagesOf(ctx context.Context, l *Lab, op *Operation, limit int) ([]Message, error) {
	ms, err := e.messages(ctx, l, op.OrderID, op.CreatedAt, limit)
	slices.Reverse(ms)
	return ms, err
}

func (e *Engine) messages(ctx context.Context, l *Lab, orderID string, since time.Time, limit int) ([]Message, error) {
	rows, err := e.store.r.QueryContext(ctx, `
WITH latest AS (SELECT id, seq, order_id, published, fate, created_at FROM messages
                WHERE lab_id = ?1 AND (?3 = '' OR (order_id = ?3 AND created_at >= ?4)) ORDER BY seq DESC LIMIT ?2)
SELECT m.id, m.order_id, m.published, m.fate, m.created_at, d.n, d.fate, d.outcome
FROM latest m LEFT JOIN message_deliveries d ON d.lab_id = ?1 AND d.message_id = m.id
ORDER BY m.seq DESC, d.n`, l.ID, limit, orderID, since.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		var (
			m       Message
			at      string
			n       *int
			fate    *MessageFate
			outcome *string
		)
		if err := rows.Scan(&m.ID, &m.OrderID, &m.Published, &m.Fate, &at, &n, &fate, &outcome); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].ID != m.ID {
			m.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
			m.Deliveries = []MessageDelivery{}
			out = append(out, m)
		}
		if n != nil {
			last := &out[len(out)-1]
			last.Deliveries = append(last.Deliveries, MessageDelivery{N: *n, Fate: *fate, Outcome: *outcome})
		}
	}
	return out, rows.Err()
}
