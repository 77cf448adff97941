package stmts

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
)

// Row is the one row a statement run through Raw answered, or its error,
// read as a *sql.Row is read.
type Row struct {
	vals []driver.Value
	buf  [4]driver.Value // vals, when they fit
	err  error
}

// Scan copies the row's columns into dest, as *sql.Row's Scan does for the
// kinds a ledger's rows hold (SQLite's integers, reals, text, blobs and
// NULL) into integers, floats, strings, byte slices, booleans, any, and
// sql.Scanners (sql.NullString and its kin). It returns sql.ErrNoRows when
// there was no row.
func (r *Row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if len(dest) != len(r.vals) {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", len(r.vals), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, r.vals[i]); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d: %w", i, err)
		}
	}
	return nil
}

// Err is the row's error, as *sql.Row's Err.
func (r *Row) Err() error { return r.err }

// ints is the row as integers, each column one.
func (r *Row) ints() ([]int64, error) {
	ns := make([]int64, len(r.vals))
	dest := make([]any, len(ns))
	for i := range ns {
		dest[i] = &ns[i]
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	return ns, nil
}

// assign stores src, a value SQLite's driver answers, in dest. A blob is
// the reader's own as it comes: the driver copies each into a new slice
// (TestRowBytesAreTheReadersOwn).
func assign(dest any, src driver.Value) error {
	if s, ok := dest.(sql.Scanner); ok {
		return s.Scan(src)
	}
	switch d := dest.(type) {
	case *any:
		*d = src
		return nil
	case *[]byte:
		switch v := src.(type) {
		case nil:
			*d = nil
			return nil
		case []byte:
			*d = v
			return nil
		case string:
			*d = []byte(v)
			return nil
		}
	case *string:
		switch v := src.(type) {
		case string:
			*d = v
			return nil
		case []byte:
			*d = string(v)
			return nil
		case int64:
			*d = strconv.FormatInt(v, 10)
			return nil
		}
	case *int64:
		if v, ok := src.(int64); ok {
			*d = v
			return nil
		}
	case *int:
		if v, ok := src.(int64); ok && int64(int(v)) == v {
			*d = int(v)
			return nil
		}
	case *float64:
		switch v := src.(type) {
		case float64:
			*d = v
			return nil
		case int64:
			*d = float64(v)
			return nil
		}
	case *bool:
		switch v := src.(type) {
		case bool:
			*d = v
			return nil
		case int64:
			if v == 0 || v == 1 {
				*d = v == 1
				return nil
			}
		}
	}
	if src == nil {
		return fmt.Errorf("converting NULL to %T is unsupported", dest)
	}
	return fmt.Errorf("unsupported Scan, storing driver.Value type %T into type %T", src, dest)
}
