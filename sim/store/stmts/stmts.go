// Package stmts keeps SQLite's compiled statements by their text: the
// readers' pool's (Cache), and those of the writer's connection, on which
// the writing transactions run (Raw, WriteTx).
package stmts

import (
	"context"
	"database/sql"
	"sync"

	"idemlab/sim/store/pgsql"
)

// MaxCached bounds the statements a cache keeps: the lab's statements are
// a few dozen fixed texts; a text built at run time past the bound runs
// compiled each time, as it would without the cache.
const MaxCached = 256

// Cache keeps SQLite's compiled statements of one connection pool by
// their text: SQLite compiles a statement anew each time it runs
// otherwise, and compiling a small statement costs more than running it.
// (PostgreSQL's driver caches its prepared statements itself.) A nil
// cache keeps nothing.
type Cache struct {
	db     *sql.DB
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	wanted map[string]bool // met in a transaction, to prepare after its commit
	closed bool
}

// New is an empty cache of db's statements.
func New(db *sql.DB) *Cache {
	return &Cache{db: db, stmts: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// Cached returns q's statement if it is prepared; if not, it notes q for
// prepareWanted.
func (c *Cache) Cached(q string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stmts[q]
	if st == nil && !c.closed && len(c.stmts)+len(c.wanted) < MaxCached {
		c.wanted[q] = true
	}
	return st
}

// Get returns q's statement, preparing it now if needed; nil when it cannot
// be cached (the caller runs q as it is, and meets its error, if any).
// Not for a transaction's statements: preparing takes a connection of the
// pool, which on the writer is the transaction's own.
func (c *Cache) Get(ctx context.Context, q string) *sql.Stmt {
	if st := c.Cached(q); st != nil || c == nil {
		return st
	}
	c.PrepareWanted(ctx)
	return c.Cached(q)
}

// PrepareWanted prepares the statements noted since the last call, outside
// the cache's lock. The writer calls it between its transactions.
func (c *Cache) PrepareWanted(ctx context.Context) {
	if c == nil {
		return
	}
	c.mu.Lock()
	qs := make([]string, 0, len(c.wanted))
	for q := range c.wanted {
		qs = append(qs, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range qs {
		st, err := c.db.PrepareContext(ctx, pgsql.Plain(q)) // bound by place, not by name
		if err != nil {
			continue // it runs unprepared, and says its error there
		}
		c.mu.Lock()
		spare := c.stmts[q] != nil || c.closed
		if !spare {
			c.stmts[q] = st
		}
		c.mu.Unlock()
		if spare {
			st.Close()
		}
	}
}

// Close closes the cached statements.
func (c *Cache) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.closed = true
	stmts := c.stmts
	c.stmts = map[string]*sql.Stmt{}
	c.mu.Unlock()
	for _, st := range stmts {
		st.Close()
	}
}

// Len is how many statements the cache holds or has noted.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.stmts) + len(c.wanted)
}
