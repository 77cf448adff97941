package sim

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// schemaVersion is the version schema.sql describes (PRAGMA user_version).
const schemaVersion = 4

// migrate brings the database to schemaVersion in one transaction: a new
// file gets schema.sql; a file of version 1 (the first release: no foreign
// keys, no counts) has its tables rebuilt with everything in them kept; a
// file of version 2 gains the tables of version 3 (the email, the queue),
// which schema.sql creates where they are missing; one of version 2 or 3,
// the columns of version 4 (the lab's clock, the lost charges).
func migrate(ctx context.Context, db *sql.DB, now time.Time) error {
	var version, tables int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'labs'`).Scan(&tables); err != nil {
		return err
	}
	if version > schemaVersion {
		return fmt.Errorf("the database is of version %d, newer than this program's %d", version, schemaVersion)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if tables == 1 && version < 2 {
		if err := fromV1(ctx, tx, now); err != nil {
			return fmt.Errorf("from version 1: %w", err)
		}
	}
	if tables == 1 && version == 2 {
		// Version 3's one new column of an old table; its new tables are
		// schema.sql's.
		if _, err := tx.ExecContext(ctx, `ALTER TABLE operations ADD COLUMN method TEXT NOT NULL DEFAULT 'POST'`); err != nil {
			return fmt.Errorf("from version 2: %w", err)
		}
	}
	if tables == 1 && version >= 2 && version < 4 {
		// Version 4's new columns: the lab's clock and the orders told
		// "already done". (Version 1 gets them from schema.sql.)
		for _, s := range []string{
			`ALTER TABLE labs ADD COLUMN clock_ms INTEGER NOT NULL DEFAULT 0`,
			`ALTER TABLE order_stats ADD COLUMN told_done INTEGER NOT NULL DEFAULT 0`,
		} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("to version 4: %w", err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// v1Tables are the tables of version 1, in the order their rows are copied
// (parents first).
var v1Tables = []string{"labs", "operations", "payments", "attempts", "idempotency_records", "lab_actions", "lab_lessons"}

// fromV1 renames the version-1 tables aside, creates version 2's and copies
// every row over: the triggers fill the counts as the rows arrive.
func fromV1(ctx context.Context, tx *sql.Tx, now time.Time) error {
	var stmts []string
	for _, t := range v1Tables {
		stmts = append(stmts, `ALTER TABLE `+t+` RENAME TO `+t+`_v1`)
	}
	stmts = append(stmts,
		`DROP INDEX IF EXISTS payments_lab_key`,
		`DROP INDEX IF EXISTS operations_lab_seq`,
		schema,
		fmt.Sprintf(`INSERT INTO labs (id, settings, created_at, kind, touched_at)
SELECT id, settings, created_at, CASE id WHEN 'demo' THEN 'demo' ELSE 'private' END, %d FROM labs_v1`, now.UnixMilli()),
		`INSERT INTO lab_counts (lab_id) SELECT id FROM labs`,
		`INSERT INTO operations (lab_id, id, seq, order_id, amount, key_strategy, key, created_at)
SELECT lab_id, id, seq, order_id, amount, key_strategy, key, created_at FROM operations_v1
WHERE lab_id IN (SELECT id FROM labs) ORDER BY lab_id, seq`,
		`INSERT INTO payments (lab_id, n, order_id, amount, idempotency_key, dedup_key, created_at)
SELECT lab_id, id, order_id, amount, idempotency_key, dedup_key, created_at
FROM payments_v1 WHERE lab_id IN (SELECT id FROM labs) ORDER BY id`, // n = id: the replays stored before name them so
		`INSERT INTO attempts (lab_id, op_id, n, key, fate, status, error, outcome, deliveries, started_at, finished_at)
SELECT a.lab_id, a.op_id, a.n, a.key, a.fate, a.status, a.error, a.outcome, a.deliveries, a.started_at, a.finished_at
FROM attempts_v1 a WHERE EXISTS (SELECT 1 FROM operations o WHERE o.lab_id = a.lab_id AND o.id = a.op_id)`,
		`INSERT INTO idempotency_records SELECT * FROM idempotency_records_v1 WHERE lab_id IN (SELECT id FROM labs)`,
		`INSERT INTO lab_actions (lab_id, seq, action) SELECT lab_id, seq, action FROM lab_actions_v1 WHERE lab_id IN (SELECT id FROM labs)`,
		`INSERT INTO lab_lessons SELECT * FROM lab_lessons_v1 WHERE lab_id IN (SELECT id FROM labs)`,
		`UPDATE lab_counts SET
    op_seq = COALESCE((SELECT MAX(seq) FROM operations o WHERE o.lab_id = lab_counts.lab_id), 0),
    action_seq = COALESCE((SELECT MAX(seq) FROM lab_actions a WHERE a.lab_id = lab_counts.lab_id), 0),
    base_seq = COALESCE((SELECT MAX(seq) FROM lab_actions a WHERE a.lab_id = lab_counts.lab_id AND json_extract(a.action, '$.k') = 'base'), 0)`,
	)
	for _, t := range v1Tables {
		stmts = append(stmts, `DROP TABLE `+t+`_v1`)
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.60s…: %w", s, err)
		}
	}
	return nil
}
