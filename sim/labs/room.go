package labs

import (
	"context"
	"time"

	"idemlab/sim/store"
)

// Room is one mechanism's part in a lab's life: the ledger, the client's
// history, the idempotency records, the lesson, the email's path, the
// key-value store. A new mechanism is one more Room given to the registry,
// not more steps in every place a lab changes.
type Room interface {
	// Init makes what the room keeps of a new lab, in its creating
	// transaction.
	Init(ctx context.Context, tx *store.Tx, lab string) error
	// Reset empties what the room holds of the lab, in the reset's
	// transaction: the lab then starts again from its settings.
	Reset(ctx context.Context, tx *store.Tx, lab string) error
	// PurgeStatements delete what the room holds of a lab being removed:
	// DELETEs of ?1 = lab, ?2 = at most this many rows (nil: it holds no
	// rows). The registry runs every room's in order, in transactions of
	// a chunk of rows in all (store.DeleteChunks): a small lab goes in one,
	// and removing a big lab never holds the writer long.
	PurgeStatements() []string
	// Close lets go of what the room keeps of the lab outside the
	// database (memory, a broker's consumer, keys in another store), for
	// the reason why; it runs after the transaction that caused it.
	Close(ctx context.Context, lab string, why Closing)
}

// Halter is a room with work in a lab that holds the lab's locks while a
// person thinks (a stepped race's open transactions): a reset halts it
// first, so that it does not wait for that work's end. (A removal's
// transaction takes none of those locks; Close follows it.)
type Halter interface {
	Halt(ctx context.Context, lab string, why Closing)
}

// Closing is why a room lets go of a lab.
type Closing int

// The reasons a room lets go of a lab.
const (
	Emptied Closing = iota // the lab was reset: it starts again from its settings
	Evicted                // the lab left this process's memory, idle
	Removed                // the lab is gone with everything in it
	Stale                  // what this process keeps of the lab may be out of date: it lets go of its memory only
)

// Sweeper is a room with housekeeping of its own (expired records, old
// results), run by the registry's janitor in the one process that leads.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time) error
}

// Tables is a Room whose parts are rows only: its reset deletes (or zeroes)
// them, and its removal deletes them (Purges).
type Tables struct {
	Store  *store.Store
	Resets []string // statements of ?1 = lab
	Purges []string // statements of ?1 = lab, ?2 = at most this many rows
	Inits  []string // statements of ?1 = lab
}

// Init runs the table's creating statements.
func (t Tables) Init(_ context.Context, tx *store.Tx, lab string) error { return run(tx, t.Inits, lab) }

// Reset runs the table's reset statements.
func (t Tables) Reset(_ context.Context, tx *store.Tx, lab string) error {
	return run(tx, t.Resets, lab)
}

// PurgeStatements are the table's purge statements.
func (t Tables) PurgeStatements() []string { return t.Purges }

// Close has nothing to let go: the rows are the room.
func (Tables) Close(context.Context, string, Closing) {}

func run(tx *store.Tx, statements []string, lab string) error {
	for _, q := range statements {
		if _, err := tx.Exec(q, lab); err != nil {
			return err
		}
	}
	return nil
}
