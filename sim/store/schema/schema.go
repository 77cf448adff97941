// Package schema is the lab's database schema: numbered migrations per
// dialect (SQLite and PostgreSQL), embedded, applied in order and recorded
// in one version table of the same shape in both; and the way up from the
// files and databases of the days before the numbers (legacy.go).
package schema

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// migrations are the schema's numbered steps, per dialect:
// migrations/{sqlite,postgres}/NNNN_what.sql, applied in order, each once,
// and recorded in schema_migrations, one table of the same shape in both.
//
//go:embed migrations
var migrations embed.FS

// migration is one numbered step of the schema.
type migration struct {
	version int
	name    string
	sql     string
}

// steps reads a dialect's migrations, in order.
func steps(dialect string) ([]migration, error) {
	entries, err := fs.ReadDir(migrations, path.Join("migrations", dialect))
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != len(out)+1 {
			return nil, fmt.Errorf("migration %s/%s: not the next number (%04d_…)", dialect, e.Name(), len(out)+1)
		}
		b, err := migrations.ReadFile(path.Join("migrations", dialect, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{v, name, string(b)})
	}
	return out, nil
}

// Latest is the newest schema version this program knows (the same number
// in both dialects).
func Latest() int {
	ms, err := steps("sqlite")
	if err != nil {
		panic(err) // embedded: only a broken build gets here
	}
	return len(ms)
}

const versionTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at BIGINT NOT NULL
)`

// applyPending records the version table in tx and applies the dialect's
// migrations newer than what it records. Every step and its record commit
// with the caller's transaction, or none does.
func applyPending(ctx context.Context, tx *sql.Tx, dialect string) error {
	all, err := steps(dialect)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, versionTable); err != nil {
		return err
	}
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return err
	}
	if have > len(all) {
		return fmt.Errorf("the database is of schema version %d, newer than this program's %d", have, len(all))
	}
	for _, m := range all[have:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("%04d_%s: %w", m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}

// Numbered is the user_version of a SQLite file whose schema
// schema_migrations records: above every version of the old numbering, so
// that a program of those days refuses the file instead of "migrating" it.
const Numbered = 100

// SQLite brings a SQLite file to the newest schema in one
// transaction. A file from before the numbered migrations (PRAGMA
// user_version 1 to 4) is first brought to their shape (legacy.go).
func SQLite(ctx context.Context, db *sql.DB) error {
	var version, tables int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'labs'`).Scan(&tables); err != nil {
		return err
	}
	if version != Numbered && version > legacyLast {
		return fmt.Errorf("the database has user_version %d, which no version of this program wrote", version)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if tables == 1 && version != Numbered {
		if err := fromLegacy(ctx, tx, version); err != nil {
			return err
		}
	}
	if err := applyPending(ctx, tx, "sqlite"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, Numbered)); err != nil {
		return err
	}
	return tx.Commit()
}

// Postgres brings a PostgreSQL database to the newest schema in one
// transaction, under a lock, so that processes starting together migrate
// once. A database from before the numbered migrations is first brought to
// their shape (legacy.go).
func Postgres(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fromLegacyPostgres(ctx, tx); err != nil {
		return err
	}
	if err := applyPending(ctx, tx, "postgres"); err != nil {
		return err
	}
	return tx.Commit()
}

// migrateLock is the advisory lock under which processes starting together
// migrate once.
const migrateLock = 7_347_120_426
