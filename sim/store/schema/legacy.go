package schema

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"time"
)

// Databases from before the numbered migrations. A SQLite file kept its
// version in PRAGMA user_version: 1 (the first release: no foreign keys,
// no counts), 2 (the counts), 3 (the email and the queue), 4 (the lab's
// clock, the lost charges); a PostgreSQL database applied its schema at
// every start. All kept their times as text. fromLegacy brings one to the
// shape of migrations 0001 and 0002, every row kept; they then run over it
// (they are idempotent) and are recorded.

// legacyLast is the last user_version of the old numbering.
const legacyLast = 4

// sqliteTimes turns a legacy SQLite file's times into integers.
//
//go:embed legacy/sqlite_times.sql
var sqliteTimes string

// postgresTimes turns a legacy PostgreSQL database's times into integers.
//
//go:embed legacy/postgres_times.sql
var postgresTimes string

// fromLegacy brings a SQLite file of the old numbering's version to the
// shape of the numbered migrations.
func fromLegacy(ctx context.Context, tx *sql.Tx, version int) error {
	ms, err := steps("sqlite")
	if err != nil {
		return err
	}
	if version <= 1 {
		if err := fromV1(ctx, tx, ms, time.Now()); err != nil {
			return fmt.Errorf("from version 1: %w", err)
		}
		return nil
	}
	var stmts []string
	if version == 2 {
		// Version 3's one new column of an old table; its new tables are 0002's.
		stmts = append(stmts, `ALTER TABLE operations ADD COLUMN method TEXT NOT NULL DEFAULT 'POST'`)
	}
	if version < 4 {
		// Version 4's new columns: the lab's clock and the orders told "already done".
		stmts = append(stmts,
			`ALTER TABLE labs ADD COLUMN clock_ms INTEGER NOT NULL DEFAULT 0`,
			`ALTER TABLE order_stats ADD COLUMN told_done INTEGER NOT NULL DEFAULT 0`)
	}
	stmts = append(stmts, ms[1].sql, sqliteTimes) // the tables of version 3 a file of version 2 lacks, then the times
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("from version %d: %.60s…: %w", version, s, err)
		}
	}
	return nil
}

// v1Tables are the tables of version 1, in the order their rows are copied
// (parents first).
var v1Tables = []string{"labs", "operations", "payments", "attempts", "idempotency_records", "lab_actions", "lab_lessons"}

// fromV1 renames the version-1 tables aside, creates those of migrations
// 0001 and 0002 and copies every row over, its times made integers: the
// triggers fill the counts as the rows arrive.
func fromV1(ctx context.Context, tx *sql.Tx, ms []migration, now time.Time) error {
	var stmts []string
	for _, t := range v1Tables {
		stmts = append(stmts, `ALTER TABLE `+t+` RENAME TO `+t+`_v1`)
	}
	stmts = append(stmts, `DROP INDEX IF EXISTS payments_lab_key`, `DROP INDEX IF EXISTS operations_lab_seq`, ms[0].sql, ms[1].sql)
	stmts = append(stmts, v1Copies(now)...)
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

// ms is a text time of a legacy row as unix milliseconds.
func ms(column string) string {
	return `CAST(ROUND(unixepoch(` + column + `, 'subsec') * 1000) AS INTEGER)`
}

// v1Copies copy the rows of version 1's tables into 0001's.
func v1Copies(now time.Time) []string {
	return []string{
		fmt.Sprintf(`INSERT INTO labs (id, settings, created_at, kind, touched_at)
SELECT id, settings, %s, CASE id WHEN 'demo' THEN 'demo' ELSE 'private' END, %d FROM labs_v1`, ms("created_at"), now.UnixMilli()),
		`INSERT INTO lab_counts (lab_id) SELECT id FROM labs`,
		`INSERT INTO operations (lab_id, id, seq, order_id, amount, key_strategy, key, created_at)
SELECT lab_id, id, seq, order_id, amount, key_strategy, key, ` + ms("created_at") + ` FROM operations_v1
WHERE lab_id IN (SELECT id FROM labs) ORDER BY lab_id, seq`,
		`INSERT INTO payments (lab_id, n, order_id, amount, idempotency_key, dedup_key, created_at)
SELECT lab_id, id, order_id, amount, idempotency_key, dedup_key, ` + ms("created_at") + `
FROM payments_v1 WHERE lab_id IN (SELECT id FROM labs) ORDER BY id`, // n = id: the replays stored before name them so
		`INSERT INTO attempts (lab_id, op_id, n, key, fate, status, error, outcome, deliveries, started_at, finished_at)
SELECT a.lab_id, a.op_id, a.n, a.key, a.fate, a.status, a.error, a.outcome, a.deliveries, ` + ms("a.started_at") + `, ` + ms("a.finished_at") + `
FROM attempts_v1 a WHERE EXISTS (SELECT 1 FROM operations o WHERE o.lab_id = a.lab_id AND o.id = a.op_id)`,
		`INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, status, location, content_type, body, locked_until, expires_at, created_at)
SELECT lab_id, scope, key, fingerprint, state, token, status, location, content_type, body, locked_until, expires_at, ` + ms("created_at") + `
FROM idempotency_records_v1 WHERE lab_id IN (SELECT id FROM labs)`,
		`INSERT INTO lab_actions (lab_id, seq, action) SELECT lab_id, seq, action FROM lab_actions_v1 WHERE lab_id IN (SELECT id FROM labs)`,
		`INSERT INTO lab_lessons SELECT * FROM lab_lessons_v1 WHERE lab_id IN (SELECT id FROM labs)`,
		`UPDATE lab_counts SET
    op_seq = COALESCE((SELECT MAX(seq) FROM operations o WHERE o.lab_id = lab_counts.lab_id), 0),
    action_seq = COALESCE((SELECT MAX(seq) FROM lab_actions a WHERE a.lab_id = lab_counts.lab_id), 0),
    base_seq = COALESCE((SELECT MAX(seq) FROM lab_actions a WHERE a.lab_id = lab_counts.lab_id AND json_extract(a.action, '$.k') = 'base'), 0)`,
	}
}

// fromLegacyPostgres brings a PostgreSQL database of the days before the
// numbered migrations (its tables there, no version table) to their shape.
func fromLegacyPostgres(ctx context.Context, tx *sql.Tx) error {
	var legacy bool
	err := tx.QueryRowContext(ctx, `SELECT to_regclass('labs') IS NOT NULL AND to_regclass('schema_migrations') IS NULL`).Scan(&legacy)
	if err != nil || !legacy {
		return err
	}
	if _, err := tx.ExecContext(ctx, postgresTimes); err != nil {
		return fmt.Errorf("from the days before numbered migrations: %w", err)
	}
	return nil
}
