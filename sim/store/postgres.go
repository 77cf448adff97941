package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"idemlab/sim/clock"
)

// PostgreSQL: the same store on a database many processes share. The SQL of
// the lab is written once, with SQLite's placeholders (?, ?1); a connector
// between database/sql and pgx's pool turns them into PostgreSQL's ($1) as
// each statement is prepared (rebind.go).

// IsPostgres reports whether a -db value names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// The advisory locks of the lab's processes on one database. Writes take
// no lock of the whole database: each writing transaction runs on a
// connection of its own, and one that numbers a lab's rows (its payments,
// attempts, deliveries, emails) takes that lab's lock first (WriteLab), so
// that writes to two labs never wait on each other.
const (
	// migrateLock: processes starting together migrate once.
	migrateLock = 7_347_120_426
	// processLock is held shared by every running process for its life. A
	// process that starts and gets it exclusively is alone: it mends what
	// the last run left before it lets others in (Join); one that finds
	// others running mends nothing of theirs.
	processLock = 7_347_120_427
	// leaderLock is held by one process at a time, for its life: the one
	// that publishes the outbox and expires records, labs and comparisons,
	// so that each happens once. When it dies, its session ends, and the
	// next process that asks takes it over.
	leaderLock = 7_347_120_428
)

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	cfg.MaxConns = max(cfg.MaxConns, 8)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	db := sql.OpenDB(rebinder{stdlib.GetPoolConnector(pool)})
	db.SetMaxOpenConns(int(cfg.MaxConns))
	db.SetMaxIdleConns(int(cfg.MaxConns))
	s := &Store{w: db, r: db, pool: pool}
	if err := s.startPostgres(ctx); err != nil {
		db.Close()
		pool.Close()
		return nil, err
	}
	return s, nil
}

// startPostgres migrates, prepares the write lock and takes the process's
// session: alone when it gets the process lock exclusively.
func (s *Store) startPostgres(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("store: connect: %w", err)
	}
	if err := migratePostgres(ctx, s.w); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	lock, err := s.w.PrepareContext(ctx, sqlKeyLock)
	if err != nil {
		return fmt.Errorf("store: prepare the key lock: %w", err)
	}
	s.lock = lock
	if s.owner, err = s.w.Conn(ctx); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := s.owner.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, processLock).Scan(&s.alone); err != nil {
		s.owner.Close()
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// Isolated runs fn in a transaction of its own at the isolation level
// (fn takes its lab's lock with Tx.LockKey when it means to number a row),
// and commits it when fn returns nil; when fn fails or panics, none of its
// writes remain. PostgreSQL only.
func (s *Store) Isolated(ctx context.Context, serializable bool, fn func(*Tx) error) error {
	opts := &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	if serializable {
		opts.Isolation = sql.LevelSerializable
	}
	tx, err := s.w.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after a commit, a no-op
	if err := fn(&Tx{ctx: ctx, tx: tx, lock: s.lock}); err != nil {
		return err
	}
	return tx.Commit()
}

// Join lets other processes in, once this one has mended what it was
// alone to mend: it holds the process lock shared from now on. A process
// that was not alone waits here while one that is mends.
func (s *Store) Join(ctx context.Context) error {
	if !s.Postgres() {
		return nil
	}
	s.ownerMu.Lock()
	defer s.ownerMu.Unlock()
	if _, err := s.owner.ExecContext(ctx, `SELECT pg_advisory_lock_shared($1)`, processLock); err != nil {
		return fmt.Errorf("store: join: %w", err)
	}
	if s.alone {
		if _, err := s.owner.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, processLock); err != nil {
			return fmt.Errorf("store: join: %w", err)
		}
	}
	return nil
}

// Lead reports whether this process is the one that runs what must run
// once per database (always, on SQLite), taking the lead if no one has it.
func (s *Store) Lead(ctx context.Context) bool {
	if !s.Postgres() || s.leader.Load() {
		return true
	}
	s.ownerMu.Lock()
	defer s.ownerMu.Unlock()
	var got bool
	if err := s.owner.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, leaderLock).Scan(&got); err != nil {
		return false
	}
	s.leader.Store(got)
	return got
}

// MeasureSkew reads how far the database's clock is from this process's,
// so that expiry and lock timeouts go by the database's clock, the one all
// processes share. Nothing to measure on SQLite.
func (s *Store) MeasureSkew(ctx context.Context, now func() time.Time) error {
	if !s.Postgres() {
		return nil
	}
	var db int64
	t0 := now()
	if err := s.pool.QueryRow(ctx, `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`).Scan(&db); err != nil {
		return fmt.Errorf("store: read the database's clock: %w", err)
	}
	t1 := now()
	mid := t0.Add(t1.Sub(t0) / 2)
	s.skew.Store(int64(time.UnixMicro(db).Sub(mid)))
	return nil
}

// Clock is c moved to the database's clock by the skew last measured
// (MeasureSkew): the time every process on the database agrees on. On
// SQLite, whose clock is the process's, it is c itself.
func (s *Store) Clock(c clock.Clock) clock.Clock {
	if !s.Postgres() {
		return c
	}
	return skewed{c, &s.skew}
}

// skewed is a clock moved by a skew measured now and then.
type skewed struct {
	clock.Clock
	skew *atomic.Int64
}

func (c skewed) Now() time.Time { return c.Clock.Now().Add(time.Duration(c.skew.Load())) }

// Pool is PostgreSQL's connection pool, for what database/sql cannot do
// (LISTEN, NOTIFY); nil on SQLite.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// pgCode is the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
