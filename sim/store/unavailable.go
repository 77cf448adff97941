package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "modernc.org/sqlite/lib"

	"idemlab/sim/store/pgsql"
)

// IsUnavailable reports whether err says the database could not do the
// work now (a part of the lab that is down, not a mistake in it):
// SQLite busy, locked, full, read-only or failing to read or write its
// file; PostgreSQL unreachable, shutting down, out of resources, or its
// connection lost. The work was not done, or, for a connection lost while
// committing, is not known to be (IsAnswered tells). A write refused for
// want of a lease (IsLeaseLost) is one too: this process cannot write now.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if IsLeaseLost(err) {
		return true
	}
	switch sqliteCode(err) & 0xff { // the primary result code
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR,
		sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	if c := pgsql.Code(err); c != "" {
		// Class 08 connection exception, 53 insufficient resources, 57P
		// operator intervention (shutdown, cannot connect now), 58 system
		// error (I/O).
		return strings.HasPrefix(c, "08") || strings.HasPrefix(c, "53") || strings.HasPrefix(c, "57P") || strings.HasPrefix(c, "58")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	// A connection closed under a transaction (sql.ErrConnDone): its
	// first statement to meet the break closed it, the next ones find it so.
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || pgsql.Broken(err) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, context.DeadlineExceeded)
}

// IsAnswered reports whether err came from the database's own answer (an
// error it raised, SQLite's or PostgreSQL's, or its word, asked since, that
// the transaction did not commit), rather than from a connection that
// stopped answering: a transaction whose COMMIT failed so did not commit;
// one whose COMMIT went unanswered, and whose fate is not known, may have.
func IsAnswered(err error) bool {
	if errors.Is(err, pgsql.ErrCommitUnknown) {
		return false
	}
	return errors.Is(err, pgsql.ErrDidNotCommit) || sqliteCode(err) != 0 || pgsql.Code(err) != ""
}
