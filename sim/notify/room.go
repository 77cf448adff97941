package notify

import (
	"context"

	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Room is the email's part in a lab's life: the messages and their
// deliveries, the consumer's memory, the email outbox, the mailbox; and
// the lab's consumer in the broker. (What the broker still holds for a
// reset lab is acknowledged unread: its message is gone.)
func (n *Notifier) Room() labs.Room {
	return room{n, labs.Tables{
		Store: n.Store,
		Resets: []string{
			`DELETE FROM messages WHERE lab_id = ?1`, // and their deliveries
			`DELETE FROM processed_messages WHERE lab_id = ?1`,
			`DELETE FROM email_outbox WHERE lab_id = ?1`,
			`DELETE FROM emails WHERE lab_id = ?1`,
			`DELETE FROM email_stats WHERE lab_id = ?1`,
			`UPDATE mail_counts SET emails = 0, doubled = 0 WHERE lab_id = ?1`,
		},
		Purges: []string{
			`DELETE FROM message_deliveries WHERE (lab_id, message_id, n) IN (SELECT lab_id, message_id, n FROM message_deliveries WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM messages WHERE (lab_id, id) IN (SELECT lab_id, id FROM messages WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM processed_messages WHERE (lab_id, key) IN (SELECT lab_id, key FROM processed_messages WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM email_outbox WHERE (lab_id, id) IN (SELECT lab_id, id FROM email_outbox WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM emails WHERE (lab_id, n) IN (SELECT lab_id, n FROM emails WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM email_stats WHERE (lab_id, order_id) IN (SELECT lab_id, order_id FROM email_stats WHERE lab_id = ?1 LIMIT ?2)`,
		},
	}}
}

type room struct {
	n *Notifier
	labs.Tables
}

// Close stops the lab's consumer when the lab leaves memory (its durable
// keeps what is unacknowledged for the next start), and removes it and its
// messages from the broker when the lab is removed.
func (r room) Close(ctx context.Context, lab string, why labs.Closing) {
	if r.n.queue == nil {
		return
	}
	switch why {
	case labs.Evicted:
		r.n.queue.stopConsumer(lab)
	case labs.Removed:
		r.n.queue.removeConsumer(ctx, lab)
	}
}

// statements are the email path's prepared statements: a message per
// charge, then a delivery, an email and its receipt.
type statements struct {
	insertMessage, markPublished     *store.Stmt
	processed, insertEmail, delivery *store.Stmt
	receive, markSent                *store.Stmt
}

func (st *statements) prepare(ctx context.Context, s *store.Store) error {
	for _, p := range []struct {
		dst **store.Stmt
		sql string
	}{
		{&st.insertMessage, `INSERT INTO messages (lab_id, id, seq, order_id, payment_n, amount, fate, msg_dedup, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&st.markPublished, `UPDATE messages SET published = ? WHERE lab_id = ? AND id = ?`},
		{&st.processed, `INSERT INTO processed_messages (lab_id, key, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`},
		{&st.insertEmail, `INSERT INTO email_outbox (lab_id, id, order_id, amount, payment_n, message_id, claimed_at, created_at, process) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&st.delivery, `INSERT INTO message_deliveries (lab_id, message_id, n, stream_seq, delivered, fate, outcome, at)
SELECT ?1, ?2, COALESCE(MAX(n), 0) + 1, ?3, ?4, ?5, ?6, ?7 FROM message_deliveries WHERE lab_id = ?1 AND message_id = ?2
RETURNING n`},
		{&st.receive, `INSERT INTO emails (lab_id, n, email_id, to_addr, subject, order_id, message_id, received_at)
SELECT ?1, COALESCE(MAX(n), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7 FROM emails WHERE lab_id = ?1`},
		{&st.markSent, `UPDATE email_outbox SET sent = 1 WHERE lab_id = ? AND id = ?`},
	} {
		stmt, err := s.Prepare(ctx, p.sql)
		if err != nil {
			return err
		}
		*p.dst = stmt
	}
	return nil
}
