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
	"time"

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

// The advisory locks of the lab's processes on one database.
const (
	// writeLock is taken first by every writing transaction of every
	// process: one writer at a time on the shared ledger, as on SQLite, so
	// that a lab's numbering (its payments, attempts, emails) never
	// collides across processes. Each process still commits in groups.
	writeLock = 7_347_120_425
	// migrateLock: processes starting together apply the schema once.
	migrateLock = 7_347_120_426
	// processLock is held shared by every running process for its life. A
	// process that starts and gets it exclusively is alone: it mends what
	// the last run left (attempts never ended, claims never released)
	// before it lets others in; one that finds others running mends nothing
	// of theirs.
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
	owner, err := db.Conn(ctx)
	var alone bool
	if err == nil {
		err = owner.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, processLock).Scan(&alone)
	}
	if err != nil {
		if owner != nil {
			owner.Close()
		}
		db.Close()
		pool.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	s := &Store{w: db, r: db, pool: pool, owner: owner, alone: alone}
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
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock)
	_, err = conn.ExecContext(ctx, schemaPG)
	return err
}

// isolated runs fn in a transaction of its own at the isolation level,
// outside the writer's group commits (whose transactions take the write
// lock first: fn takes it when it means to write, with q.lock), and
// commits it when fn returns nil; when fn fails or panics, none of its
// writes remain. PostgreSQL only.
func (s *Store) isolated(ctx context.Context, level Isolation, fn func(*sql.Tx) error) error {
	opts := &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	if level == IsolationSerializable {
		opts.Isolation = sql.LevelSerializable
	}
	tx, err := s.w.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after a commit, a no-op
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// postgres reports whether the store is PostgreSQL's.
func (s *Store) postgres() bool { return s.pool != nil }

// IsPostgres reports whether the lab runs on PostgreSQL.
func (e *Engine) IsPostgres() bool { return e.store.postgres() }

// PostgresOnly is the rule a setting or a lesson breaks that needs the lab
// on PostgreSQL.
const PostgresOnly = "postgres-only"

// checkStore refuses settings the lab's database cannot give: the
// serializable check-then-insert is PostgreSQL's.
func (e *Engine) checkStore(s Settings) error {
	if s.Isolation != IsolationReadCommitted && !e.store.postgres() {
		return Invalid(Broke("isolation", PostgresOnly))
	}
	return nil
}

// join lets other processes in, once the process has mended what it was
// alone to mend: it holds the process lock shared from now on. A process
// that was not alone waits here while one that is mends.
func (s *Store) join(ctx context.Context) error {
	if !s.postgres() {
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

// lead reports whether this process is the one that runs what must run
// once per database (always, on SQLite), taking the lead if no one has it.
func (s *Store) lead(ctx context.Context) bool {
	if !s.postgres() || s.leader.Load() {
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

// measureSkew reads how far the database's clock is from this process's,
// so that expiry and lock timeouts go by the database's clock, the one all
// processes share.
func (s *Store) measureSkew(ctx context.Context) error {
	if !s.postgres() {
		return nil
	}
	var db int64
	t0 := time.Now()
	if err := s.pool.QueryRow(ctx, `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`).Scan(&db); err != nil {
		return fmt.Errorf("store: read the database's clock: %w", err)
	}
	t1 := time.Now()
	mid := t0.Add(t1.Sub(t0) / 2)
	s.skew.Store(int64(time.UnixMicro(db).Sub(mid)))
	return nil
}

// clock is now by the database's clock: the process's, moved by the skew
// last measured (none on SQLite, whose clock is the process's).
func (s *Store) clock(now func() time.Time) func() time.Time {
	if !s.postgres() {
		return now
	}
	return func() time.Time { return now().Add(time.Duration(s.skew.Load())) }
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
