package sim

import (
	"context"
	"database/sql"
)

// Room is one mechanism of a lab, beside the others: the ledger (payments
// and their guards), the client's history, the lesson, the scenario; later
// a broker, a mailbox, a key-value store. Each keeps its own tables, and
// says what a lab's reset empties of it and what a lab's removal deletes;
// the lab's life (labs.go, Reset) runs every room, so a new mechanism is one
// more Room in the engine, not more steps in every place a lab changes.
type Room interface {
	// Reset empties what the room holds of the lab, in the reset's
	// transaction: the lab then starts again from its settings.
	Reset(ctx context.Context, tx *sql.Tx, lab string) error
	// Purge lists statements that each delete at most ?2 rows of lab ?1:
	// removing a big lab a chunk at a time never holds the writer long.
	Purge() []string
}

// tableRoom is a room whose reset deletes its rows and whose removal
// deletes them a chunk at a time: children first.
type tableRoom struct {
	reset  []string // statements of ?1 = lab
	purges []string
}

func (r tableRoom) Reset(ctx context.Context, tx *sql.Tx, lab string) error {
	for _, q := range r.reset {
		if _, err := tx.ExecContext(ctx, q, lab); err != nil {
			return err
		}
	}
	return nil
}

func (r tableRoom) Purge() []string { return r.purges }

// The rooms of the ledger's lab, in the order their rows go.
var (
	// historyRoom is what the simulated client did: operations and their attempts.
	historyRoom = tableRoom{
		reset: []string{
			`DELETE FROM operations WHERE lab_id = ?1`, // and their attempts
			`UPDATE lab_counts SET op_seq = 0 WHERE lab_id = ?1`,
		},
		purges: []string{
			`DELETE FROM attempts WHERE (lab_id, op_id, n) IN (SELECT lab_id, op_id, n FROM attempts WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM operations WHERE (lab_id, id) IN (SELECT lab_id, id FROM operations WHERE lab_id = ?1 LIMIT ?2)`,
		},
	}
	// ledgerRoom is the payments, their counts and the replay records.
	ledgerRoom = tableRoom{
		reset: []string{
			`DELETE FROM order_stats WHERE lab_id = ?1`,
			`DELETE FROM payments WHERE lab_id = ?1`,
			`DELETE FROM idempotency_records WHERE lab_id = ?1`,
			`UPDATE lab_counts SET payments = 0, total = 0, doubled = 0, overcharged = 0 WHERE lab_id = ?1`,
		},
		purges: []string{
			`DELETE FROM payments WHERE (lab_id, n) IN (SELECT lab_id, n FROM payments WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM order_stats WHERE (lab_id, order_id) IN (SELECT lab_id, order_id FROM order_stats WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM idempotency_records WHERE (lab_id, scope, key) IN (SELECT lab_id, scope, key FROM idempotency_records WHERE lab_id = ?1 LIMIT ?2)`,
		},
	}
	// lessonRoom is where the lab is in its guided lesson: a reset asks for
	// a new set-up.
	lessonRoom = tableRoom{
		reset: []string{`UPDATE lab_lessons SET ready = (1 = 0), next = 0 WHERE lab_id = ?1`},
	}
	// scenarioRoom is the lab's actions, for its link; a reset records a
	// new base (Engine.reset), which empties them.
	scenarioRoom = tableRoom{
		purges: []string{`DELETE FROM lab_actions WHERE (lab_id, seq) IN (SELECT lab_id, seq FROM lab_actions WHERE lab_id = ?1 LIMIT ?2)`},
	}
	// mailRoom is past the ledger: the email and the queue (messages and
	// their deliveries, the consumer's memory, the email outbox, the
	// mailbox) and the orders of the methods' lesson. (What the
	// broker still holds for a reset lab is acknowledged unread: its
	// message is gone.)
	mailRoom = tableRoom{
		reset: []string{
			`DELETE FROM messages WHERE lab_id = ?1`, // and their deliveries
			`DELETE FROM processed_messages WHERE lab_id = ?1`,
			`DELETE FROM email_outbox WHERE lab_id = ?1`,
			`DELETE FROM emails WHERE lab_id = ?1`,
			`DELETE FROM email_stats WHERE lab_id = ?1`,
			`UPDATE mail_counts SET emails = 0, doubled = 0 WHERE lab_id = ?1`,
			`DELETE FROM orders WHERE lab_id = ?1`,
		},
		purges: []string{
			`DELETE FROM message_deliveries WHERE (lab_id, message_id, n) IN (SELECT lab_id, message_id, n FROM message_deliveries WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM messages WHERE (lab_id, id) IN (SELECT lab_id, id FROM messages WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM processed_messages WHERE (lab_id, key) IN (SELECT lab_id, key FROM processed_messages WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM email_outbox WHERE (lab_id, id) IN (SELECT lab_id, id FROM email_outbox WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM emails WHERE (lab_id, n) IN (SELECT lab_id, n FROM emails WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM email_stats WHERE (lab_id, order_id) IN (SELECT lab_id, order_id FROM email_stats WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM orders WHERE (lab_id, order_id) IN (SELECT lab_id, order_id FROM orders WHERE lab_id = ?1 LIMIT ?2)`,
		},
	}
)

// defaultRooms are the rooms every engine has.
func defaultRooms() []Room {
	return []Room{historyRoom, ledgerRoom, lessonRoom, scenarioRoom, mailRoom}
}
