// Package wal copies a SQLite database's write-ahead log into the database
// beside its writer instead of inside it.
//
// By default SQLite checkpoints in the COMMIT that takes the log past a
// thousand pages: that transaction copies the pages into the database and
// waits for two fsyncs, milliseconds during which no other transaction
// commits. Here the writer's connection never checkpoints
// (wal_autocheckpoint 0): a Checkpointer, on a connection of its own,
// copies what has committed while the writer goes on (PASSIVE), at most
// once an interval and only after a commit.
//
// A log starts again from its beginning only when a writing transaction
// begins with all of it copied, which a writer busy with one batch after
// another never finds. So once the log is past its bound, the Checkpointer
// holds the writer's turn between two batches and copies the few frames
// committed meanwhile; the writer's next transaction writes the log from
// its start, and the file stays the bound's size.
package wal

import (
	"context"
	"database/sql"
	"time"
)

// Hold takes the writer's turn between two of its transactions and returns
// what gives it back; false when stop closed first.
type Hold func(stop <-chan struct{}) (release func(), ok bool)

// Checkpointer copies a database's log into it, on a goroutine of its own.
type Checkpointer struct {
	db    *sql.DB // its own connection
	hold  Hold
	every time.Duration
	bound int // pages of log after which the log starts again

	wrote chan struct{} // a commit since the last round
	stop  chan struct{}
	done  chan struct{}
}

// Start starts checkpointing the database db is one connection to, at
// most once every interval, and restarting the log once it has bound
// pages. The Checkpointer owns db: Close closes it.
func Start(db *sql.DB, hold Hold, every time.Duration, bound int) *Checkpointer {
	c := &Checkpointer{db: db, hold: hold, every: every, bound: bound,
		wrote: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// Wrote tells the Checkpointer that a transaction committed. It never
// waits.
func (c *Checkpointer) Wrote() {
	select {
	case c.wrote <- struct{}{}:
	default:
	}
}

// Close stops the Checkpointer, waits for its round to end, and closes its
// connection.
func (c *Checkpointer) Close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}

func (c *Checkpointer) run() {
	defer close(c.done)
	pause := time.NewTimer(c.every)
	for {
		select {
		case <-c.wrote:
		case <-c.stop:
			return
		}
		c.Round()
		pause.Reset(c.every)
		select {
		case <-pause.C:
		case <-c.stop:
			return
		}
	}
}

// Round copies what has committed into the database and, when the log is
// past its bound, copies the rest with the writer's turn held so that the
// next transaction starts the log again. It reports the log's pages and how
// many of them are copied, as SQLite counted them last. A failed round
// (the database busy or gone) is tried again after the next commit.
func (c *Checkpointer) Round() (log, copied int, err error) {
	if log, copied, err = c.checkpoint("PASSIVE"); err != nil || log < c.bound {
		return log, copied, err
	}
	release, ok := c.hold(c.stop)
	if !ok {
		return log, copied, nil
	}
	defer release()
	mode := "PASSIVE"
	if log >= 4*c.bound { // readers kept the log from starting again: wait them out
		mode = "RESTART"
	}
	return c.checkpoint(mode)
}

// checkpoint runs one checkpoint of mode on the Checkpointer's connection.
func (c *Checkpointer) checkpoint(mode string) (log, copied int, err error) {
	var busy int
	err = c.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &log, &copied)
	return log, copied, err
}
