package store

import "idemlab/sim/store/pgsql"

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

// settle is what became of the COMMIT of transaction xid that returned
// err (pgsql.Settle), asked on the membership's own connections.
func (p *pgWrites) settle(xid int64, err error) error { return pgsql.Settle(p.s.mpool, xid, err) }
