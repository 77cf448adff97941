package pgsql

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Code is the SQLSTATE of a PostgreSQL error, or "".
func Code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Broken reports whether err is a connection that broke under a statement.
func Broken(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		strings.Contains(err.Error(), "conn closed")
}

// Ended reports whether err is a PostgreSQL connection that the server
// ended (a restart, an administrator) or that broke, rather than the
// database refusing what was asked, or not answering at all.
func Ended(err error) bool {
	switch Code(err) {
	case "57P01", "57P02": // admin_shutdown, crash_shutdown
		return true
	case "":
		var ce *pgconn.ConnectError
		return !errors.As(err, &ce) && !pgconn.Timeout(err) &&
			(Broken(err) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
	}
	return false
}
