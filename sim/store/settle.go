package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A COMMIT's answer can be lost after the commit was made durable: the
// database restarting (its sessions are ended between the two), or the
// network. Taken for a failure, such a commit is done twice: a consumer's
// work when the broker delivers its message again, an email the mailbox
// stored when its sender sends it again. So on PostgreSQL every writing
// transaction learns its id in its first statement (txStep), and a COMMIT
// that fails is settled by asking the database what became of that
// transaction (txid_status), on another connection, once it answers.

// txStep is the transaction's id, the first column of every writing
// transaction's first statement on PostgreSQL.
const txStep = `txid_current()`

// settleWait bounds how long a failed COMMIT waits for the database to
// say what became of it: longer than a restart of PostgreSQL takes.
const settleWait = 15 * time.Second

// settle is the outcome of the COMMIT of transaction xid that returned
// err: nil when the transaction committed after all, err when it did not
// or when that could not be learned within settleWait.
func (p *pgWrites) settle(xid int64, err error) error { return settle(p.s.mpool, xid, err) }

func settle(pool *pgxpool.Pool, xid int64, err error) error {
	if err == nil || xid == 0 || refused(err) {
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
			return err // aborted, or too old to know: as good as aborted, long ago
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (whether it committed is not known: %w)", err, errors.Join(qerr, ctx.Err()))
		case <-time.After(wait):
		}
	}
}

// refused reports whether err is the database refusing the COMMIT
// itself (a deferred constraint, a serialization failure): the
// transaction rolled back. Admin shutdowns (57) and lost connections
// (08) are not refusals: what became of the transaction is not known.
func refused(err error) bool {
	c := pgCode(err)
	return errors.Is(err, sql.ErrTxDone) || c != "" && !strings.HasPrefix(c, "57") && !strings.HasPrefix(c, "08")
}
