package sim

import (
	"context"
	"database/sql"
	"fmt"
)

// The statements of the charge path, prepared once when the store opens:
// SQLite compiles each statement anew otherwise, and on the charge path that
// compiling costs more than the writing.
const (
	// A payment's number is the next in its lab (found through the index
	// on (lab_id, n)): the writer runs one insert at a time, so two never
	// take the same.
	sqlInsertPayment = `
INSERT INTO payments (lab_id, n, order_id, amount, idempotency_key, dedup_key, direct, created_at)
VALUES (?1, COALESCE((SELECT MAX(n) FROM payments WHERE lab_id = ?1), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING n`

	sqlInsertPaymentOnConflict = `
INSERT INTO payments (lab_id, n, order_id, amount, idempotency_key, dedup_key, direct, created_at)
VALUES (?1, COALESCE((SELECT MAX(n) FROM payments WHERE lab_id = ?1), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7)
ON CONFLICT (lab_id, dedup_key) DO NOTHING RETURNING n`

	// The scenario's next action: its number (a "base" starts the list
	// anew), then the action itself.
	sqlNextAction = `
UPDATE lab_counts SET action_seq = action_seq + 1, base_seq = CASE WHEN ?1 THEN action_seq + 1 ELSE base_seq END
WHERE lab_id = ?2 RETURNING action_seq, base_seq`
	sqlInsertAction = `INSERT INTO lab_actions (lab_id, seq, action) VALUES (?, ?, ?)`

	sqlCheckKey = `SELECT COUNT(*) FROM payments WHERE lab_id = ? AND idempotency_key = ?`

	// The claim: one statement that takes the key when it is new, expired,
	// or left in flight past its lock, and otherwise changes nothing.
	sqlClaim = `
INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, locked_until, expires_at, created_at)
VALUES (?1, ?2, ?3, ?4, 'in-flight', ?5, ?6, ?7, ?8)
ON CONFLICT (lab_id, scope, key) DO UPDATE SET
    fingerprint = excluded.fingerprint, state = 'in-flight', token = excluded.token,
    status = NULL, location = NULL, content_type = NULL, body = NULL,
    locked_until = excluded.locked_until, expires_at = excluded.expires_at, created_at = excluded.created_at
WHERE idempotency_records.expires_at <= ?9
   OR (idempotency_records.state = 'in-flight' AND idempotency_records.locked_until <= ?9)
RETURNING token`

	// The claim and its answer at once, for a request whose work is already
	// in the transaction: taken on the same terms as sqlClaim.
	sqlClaimDone = `
INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, status, location, content_type, body, locked_until, expires_at, created_at)
VALUES (?1, ?2, ?3, ?4, 'done', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
ON CONFLICT (lab_id, scope, key) DO UPDATE SET
    fingerprint = excluded.fingerprint, state = 'done', token = excluded.token,
    status = excluded.status, location = excluded.location, content_type = excluded.content_type, body = excluded.body,
    locked_until = excluded.locked_until, expires_at = excluded.expires_at, created_at = excluded.created_at
WHERE idempotency_records.expires_at <= ?13
   OR (idempotency_records.state = 'in-flight' AND idempotency_records.locked_until <= ?13)
RETURNING token`

	sqlRecord = `
SELECT fingerprint, state, locked_until, expires_at, status, location, content_type, body
FROM idempotency_records WHERE lab_id = ? AND scope = ? AND key = ?`

	sqlComplete = `
UPDATE idempotency_records
SET state = 'done', status = ?, location = ?, content_type = ?, body = ?, expires_at = ?
WHERE lab_id = ? AND scope = ? AND key = ? AND token = ? AND state = 'in-flight'`
)

// The statements of the email and the queue (notify.go, mailbox.go): a
// message per charge, then a delivery, an email and its receipt.
const (
	sqlInsertMessage = `INSERT INTO messages (lab_id, id, seq, order_id, payment_n, amount, fate, msg_dedup, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlMarkPublished = `UPDATE messages SET published = ? WHERE lab_id = ? AND id = ?`
	sqlProcessed     = `INSERT INTO processed_messages (lab_id, key, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`
	sqlInsertEmail   = `INSERT INTO email_outbox (lab_id, id, order_id, amount, payment_n, message_id, claimed_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlDelivery      = `INSERT INTO message_deliveries (lab_id, message_id, n, stream_seq, delivered, fate, outcome, at)
SELECT ?1, ?2, COALESCE(MAX(n), 0) + 1, ?3, ?4, ?5, ?6, ?7 FROM message_deliveries WHERE lab_id = ?1 AND message_id = ?2
RETURNING n`
	sqlReceive = `INSERT INTO emails (lab_id, n, email_id, to_addr, subject, order_id, message_id, received_at)
SELECT ?1, COALESCE(MAX(n), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7 FROM emails WHERE lab_id = ?1`
	sqlMarkSent = `UPDATE email_outbox SET sent = 1 WHERE lab_id = ? AND id = ?`
)

// queries are the prepared statements: those on the writer are used inside
// its transactions through tx.StmtContext, which reuses them as they are.
type queries struct {
	insertPayment, insertPaymentOnConflict *sql.Stmt // writer
	nextAction, insertAction               *sql.Stmt // writer: the scenario's actions
	claim, claimDone, record, complete     *sql.Stmt // writer
	savepoint, rollbackTo, release         *sql.Stmt // writer: one job of a group commit
	checkKey                               *sql.Stmt // reader: check-then-insert's SELECT

	insertMessage, markPublished     *sql.Stmt // writer: the queue
	processed, insertEmail, delivery *sql.Stmt // writer: the consumer
	receive, markSent                *sql.Stmt // writer: the mailbox

	lock *sql.Stmt // PostgreSQL: the writers' advisory lock, first in every transaction
}

func (s *Store) prepare(ctx context.Context) error {
	for _, p := range []struct {
		dst **sql.Stmt
		db  *sql.DB
		sql string
	}{
		{&s.q.insertPayment, s.w, sqlInsertPayment},
		{&s.q.insertPaymentOnConflict, s.w, sqlInsertPaymentOnConflict},
		{&s.q.claim, s.w, sqlClaim},
		{&s.q.claimDone, s.w, sqlClaimDone},
		{&s.q.nextAction, s.w, sqlNextAction},
		{&s.q.insertAction, s.w, sqlInsertAction},
		{&s.q.savepoint, s.w, "SAVEPOINT job"},
		{&s.q.rollbackTo, s.w, "ROLLBACK TO job"},
		{&s.q.release, s.w, "RELEASE job"},
		{&s.q.record, s.w, sqlRecord},
		{&s.q.complete, s.w, sqlComplete},
		{&s.q.checkKey, s.r, sqlCheckKey},
		{&s.q.insertMessage, s.w, sqlInsertMessage},
		{&s.q.markPublished, s.w, sqlMarkPublished},
		{&s.q.processed, s.w, sqlProcessed},
		{&s.q.insertEmail, s.w, sqlInsertEmail},
		{&s.q.delivery, s.w, sqlDelivery},
		{&s.q.receive, s.w, sqlReceive},
		{&s.q.markSent, s.w, sqlMarkSent},
	} {
		st, err := p.db.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("store: prepare %q: %w", p.sql, err)
		}
		*p.dst = st
	}
	if s.pool != nil { // PostgreSQL
		st, err := s.w.PrepareContext(ctx, fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, writeLock))
		if err != nil {
			return fmt.Errorf("store: prepare the write lock: %w", err)
		}
		s.q.lock = st
	}
	return nil
}

// in returns st for use in tx, or st itself outside a transaction.
func in(ctx context.Context, tx *sql.Tx, st *sql.Stmt) *sql.Stmt {
	if tx == nil {
		return st
	}
	return tx.StmtContext(ctx, st)
}
