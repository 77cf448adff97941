package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"idemlab/sim/store/pgsql"
)

// A COMMIT's answer can be lost after the commit was made durable: the
// database restarting (its sessions are ended between the two), or the
// network. Taken for a failure, such a commit is done twice: a consumer's
// work when the broker delivers its message again, an email the mailbox
// stored when its sender sends it again. So on PostgreSQL every writing
// transaction learns its id in its first statement (txStep), and a COMMIT
// that fails is settled by asking the database what became of that
// transaction (txid_status), on another connection, once it answers.

// What settle learnt of a COMMIT that failed: the database said the
// transaction did not commit, or did not say within settleWait
// (IsAnswered tells them apart).
var (
	errDidNotCommit  = errors.New("store: the transaction did not commit")
	errCommitUnknown = errors.New("whether it committed is not known")
)

const (
	// txStep is the transaction's id, the first column of every writing
	// transaction's first statement on PostgreSQL.
	txStep = `txid_current()`
	// settleWait bounds how long a failed COMMIT waits for the database to
	// say what became of it: longer than a restart of PostgreSQL takes.
	settleWait = 15 * time.Second
)

// settle is the outcome of the COMMIT of transaction xid that returned
// err: nil when the transaction committed after all; err marked
// errDidNotCommit when it did not, errCommitUnknown when that could not be
// learned within settleWait. A COMMIT the database refused itself (a
// deferred constraint, a serialization failure; not a shutdown, class 57,
// nor a lost connection, 08) rolled back: nothing to ask.
func (p *pgWrites) settle(xid int64, err error) error {
	if c := pgsql.Code(err); err == nil || xid == 0 || errors.Is(err, sql.ErrTxDone) ||
		c != "" && !strings.HasPrefix(c, "57") && !strings.HasPrefix(c, "08") {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	defer cancel()
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		var status sql.NullString
		qerr := p.s.mpool.QueryRow(ctx, `SELECT txid_status($1)`, xid).Scan(&status)
		switch {
		case qerr == nil && status.String == "committed":
			return nil
		case qerr == nil && status.String != "in progress":
			return fmt.Errorf("%w: %w", errDidNotCommit, err) // aborted, or too old to know: as good as aborted, long ago
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w: %w)", err, errCommitUnknown, errors.Join(qerr, ctx.Err()))
		case <-time.After(wait):
		}
	}
}
