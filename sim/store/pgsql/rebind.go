package pgsql

import (
	"context"
	"database/sql/driver"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Rebind turns SQLite's placeholders into PostgreSQL's: ?N is $N, and each
// bare ? the next number. Quoted text is left alone.
func Rebind(q string) string {
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

// Plain is SQLite's q with its numbered placeholders bare when they are
// ?1, ?2 … (or Fold's $1, $2 …) in order, each once: the driver binds a
// bare ? by its place, where it reads a numbered one's name, a string
// made on the heap, on every execution. Any other q is returned as it is.
func Plain(q string) string {
	if !strings.ContainsAny(q, "?$") {
		return q
	}
	u := unquoted(q)
	var b strings.Builder
	b.Grow(len(q))
	want := 1
	for i := 0; i < len(q); i++ {
		c := u[i]
		if c != '?' && c != '$' {
			b.WriteByte(q[i])
			continue
		}
		k, end := placeholderAt(u, i)
		switch {
		case end == i+1 && c == '$': // not a placeholder
			b.WriteByte(q[i])
			continue
		case k != want: // bare, repeated or out of order: numbered it stays
			return q
		}
		want++
		b.WriteByte('?')
		i = end - 1
	}
	return b.String()
}

// Connector is pgx's connector with the placeholders rebound: the
// store's statements are written in SQLite's.
type Connector struct{ driver.Connector }

// Connect opens a connection whose statements are rebound.
func (r Connector) Connect(ctx context.Context) (driver.Conn, error) {
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

// Pgx is the pgx connection under driverConn, a connection of a
// Connector's as sql.Conn.Raw hands it over; false for another's.
func Pgx(driverConn any) (*pgx.Conn, bool) {
	r, ok := driverConn.(rebound)
	if !ok {
		return nil, false
	}
	c, ok := r.pgConn.(interface{ Conn() *pgx.Conn })
	if !ok {
		return nil, false
	}
	return c.Conn(), true
}

func (c rebound) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.pgConn.PrepareContext(ctx, Rebind(q))
}

func (c rebound) Prepare(q string) (driver.Stmt, error) {
	return c.pgConn.PrepareContext(context.Background(), Rebind(q))
}

func (c rebound) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.pgConn.ExecContext(ctx, Rebind(q), args)
}

func (c rebound) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.pgConn.QueryContext(ctx, Rebind(q), args)
}
