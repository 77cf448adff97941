package pgsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// What Settle learnt of a COMMIT that failed: the database said the
// transaction did not commit, or did not say within settleWait.
var (
	ErrDidNotCommit  = errors.New("store: the transaction did not commit")
	ErrCommitUnknown = errors.New("whether it committed is not known")
)

// settleWait bounds how long a failed COMMIT waits for the database to
// say what became of it: longer than a restart of PostgreSQL takes.
const settleWait = 15 * time.Second

// Settle is the outcome of the COMMIT of transaction xid that returned
// err, asked of the database through pool (not the transaction's
// connection, which the failure may have ended): nil when the transaction
// committed after all; err marked ErrDidNotCommit when it did not,
// ErrCommitUnknown when that could not be learned within settleWait. A
// COMMIT the database refused itself (a deferred constraint, a
// serialization failure; not a shutdown, class 57, nor a lost connection,
// 08) rolled back: nothing to ask.
func Settle(pool *pgxpool.Pool, xid int64, err error) error {
	if c := Code(err); err == nil || xid == 0 || errors.Is(err, sql.ErrTxDone) ||
		c != "" && !strings.HasPrefix(c, "57") && !strings.HasPrefix(c, "08") {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	defer cancel()
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		var status sql.NullString
		qerr := pool.QueryRow(ctx, `SELECT txid_status($1)`, xid).Scan(&status)
		switch {
		case qerr == nil && status.String == "committed":
			return nil
		case qerr == nil && status.String != "in progress":
			return fmt.Errorf("%w: %w", ErrDidNotCommit, err) // aborted, or too old to know: as good as aborted, long ago
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w: %w)", err, ErrCommitUnknown, errors.Join(qerr, ctx.Err()))
		case <-time.After(wait):
		}
	}
}
