package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"idemlab/sim/clock"
	"idemlab/sim/store/member"
	"idemlab/sim/store/pgsql"
	"idemlab/sim/store/schema"
)

// PostgreSQL: the same store on a database many processes share. The SQL of
// the lab is written once, with SQLite's placeholders (?, ?1); a connector
// between database/sql and pgx's pool turns them into PostgreSQL's ($1) as
// each statement is prepared (rebind.go).

// IsPostgres reports whether a -db value names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Locks of the processes on one database. Which processes run, and which
// leads, is not a lock's (a restart of PostgreSQL drops every session's):
// it is the leases' (lease.go). Writes take no lock of the whole database:
// each writing transaction runs on a connection of its own, and one that
// numbers a lab's rows (its payments, attempts, deliveries, emails) takes
// that lab's lock first (WriteLab, pgwrite.go), so that writes to two labs
// never wait on each other. Migrations take their own (schema).

func openPostgres(ctx context.Context, dsn string, m *member.Member) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	cfg.MaxConns = max(cfg.MaxConns, 16) // a lab written to holds two: its batch, and the next (writer.start)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	// The lease's renewals must not wait for a connection behind a storm
	// of writes (which the lease licenses): they have connections of their
	// own, as the settling of a COMMIT whose answer was lost has.
	mcfg := cfg.Copy()
	mcfg.MaxConns, mcfg.MinConns = 2, 0
	mpool, err := pgxpool.NewWithConfig(ctx, mcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	db := sql.OpenDB(pgsql.Connector{Connector: stdlib.GetPoolConnector(pool)})
	db.SetMaxOpenConns(int(cfg.MaxConns))
	db.SetMaxIdleConns(int(cfg.MaxConns))
	s := &Store{w: db, r: db, pool: pool, mpool: mpool, m: m}
	if err := s.startPostgres(ctx); err != nil {
		db.Close()
		pool.Close()
		mpool.Close()
		return nil, err
	}
	return s, nil
}

// startPostgres migrates and prepares the first statements of the writing
// transactions: the lease step, and the write lock.
func (s *Store) startPostgres(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("store: connect: %w", err)
	}
	if err := schema.Postgres(ctx, s.w); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// Isolated runs fn in a transaction of its own at the isolation level,
// and commits it when fn returns nil; when fn fails or panics, none of its
// writes remain. Its first statement is the lease step, before the
// transaction's snapshot could grow old: a process without a current lease
// runs none. (fn takes its lab's lock with Tx.LockKey when it means to
// number a row.) PostgreSQL only.
func (s *Store) Isolated(ctx context.Context, serializable bool, fn func(*Tx) error) error {
	opts := &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	if serializable {
		opts.Isolation = sql.LevelSerializable
	}
	tx, xid, err := begin(ctx, s.w, opts, s.pg.holdStep, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after a commit, a no-op
	if err := fn(&Tx{ctx: ctx, tx: tx}); err != nil {
		return err
	}
	_, err = tx.(*pgsql.Tx).Commit(ctx, nil)
	return s.pg.settle(xid, err)
}

// MeasureSkew reads how far the database's clock is from this process's,
// so that expiry and lock timeouts go by the database's clock, the one all
// processes share; a reading within the noise of the one in use leaves it
// (clock.Skew). Nothing to measure on SQLite.
func (s *Store) MeasureSkew(ctx context.Context, now func() time.Time) error {
	if !s.Postgres() {
		return nil
	}
	var db int64
	t0 := now()
	if err := s.mpool.QueryRow(ctx, `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`).Scan(&db); err != nil {
		return fmt.Errorf("store: read the database's clock: %w", err)
	}
	s.skew.Read(t0, now(), time.UnixMicro(db))
	return nil
}

// Clock is c moved to the database's clock by the skew last measured
// (MeasureSkew): the time every process on the database agrees on. On
// SQLite, whose clock is the process's, it is c itself.
func (s *Store) Clock(c clock.Clock) clock.Clock {
	if !s.Postgres() {
		return c
	}
	return s.skew.Moved(c)
}

// Pool is PostgreSQL's connection pool, for what database/sql cannot do
// (LISTEN, NOTIFY); nil on SQLite.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }
