package sim

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL: the same store on a database many processes share. The SQL of
// the lab is written once, with SQLite's placeholders (?, ?1); a connector
// between database/sql and pgx's pool turns them into PostgreSQL's ($1) as
// each statement is prepared. The schema is PostgreSQL's own (schema_pg.sql).

//go:embed schema_pg.sql
var schemaPG string

// IsPostgres reports whether a -db value names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// writeLock is the advisory lock every writing transaction of every
// process takes first: one writer at a time on the shared ledger, as on
// SQLite, so that a lab's numbering (its payments, attempts, emails) never
// collides across processes. Each process still commits in groups.
const writeLock = 7_347_120_425

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	db := sql.OpenDB(rebinder{stdlib.GetPoolConnector(pool)})
	db.SetMaxOpenConns(int(cfg.MaxConns))
	db.SetMaxIdleConns(int(cfg.MaxConns))
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		pool.Close()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	if err := migratePG(ctx, db); err != nil {
		db.Close()
		pool.Close()
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	// One lab process per database, for now: a second one would release
	// the first's outbox claims and run its own relay and expiry. Until the
	// processes share them (issue 12), the second refuses to start.
	owner, err := db.Conn(ctx)
	if err == nil {
		var mine bool
		if err = owner.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(7347120427)`).Scan(&mine); err == nil && !mine {
			err = errors.New("another lab process is running on this database; one process per database for now")
		}
	}
	if err != nil {
		if owner != nil {
			owner.Close()
		}
		db.Close()
		pool.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	s := &Store{w: db, r: db, pool: pool, owner: owner}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, err
	}
	s.tw = newWriter(db, &s.q)
	return s, nil
}

// migratePG applies schema_pg.sql under a lock, so that processes starting
// together apply it once.
func migratePG(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(7347120426)`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(7347120426)`)
	_, err = conn.ExecContext(ctx, schemaPG)
	return err
}

// pgCode is the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// rebind turns SQLite's placeholders into PostgreSQL's: ?N is $N, and each
// bare ? the next number. Quoted text is left alone.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n, quoted := 0, false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteString("$" + q[i+1:j])
			} else {
				n++
				b.WriteString("$" + strconv.Itoa(n))
			}
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// rebinder is pgx's connector with the placeholders rebound.
type rebinder struct{ driver.Connector }

func (r rebinder) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return rebound{c.(pgConn)}, nil
}

// pgConn is what pgx's stdlib connection offers database/sql.
type pgConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.NamedValueChecker
}

type rebound struct{ pgConn }

func (c rebound) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.pgConn.PrepareContext(ctx, rebind(q))
}

func (c rebound) Prepare(q string) (driver.Stmt, error) {
	return c.pgConn.PrepareContext(context.Background(), rebind(q))
}

func (c rebound) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.pgConn.ExecContext(ctx, rebind(q), args)
}

func (c rebound) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.pgConn.QueryContext(ctx, rebind(q), args)
}
