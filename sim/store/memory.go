package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"idemlab/sim/store/schema"
)

// A new in-memory database starts from a copy of one migrated the first
// time in the process, instead of compiling every migration again: the
// schema is the same for all of them, and a test suite opens hundreds.
var memTemplate struct {
	once sync.Once
	buf  []byte
	err  error
}

// serialized is what the driver's connection offers for copying a whole
// database.
type serialized interface {
	Serialize() ([]byte, error)
	Deserialize([]byte) error
}

// migrateMemory gives the in-memory database of db (one connection) the
// newest schema.
func migrateMemory(ctx context.Context, db *sql.DB) error {
	memTemplate.once.Do(func() { memTemplate.buf, memTemplate.err = memorySchema(context.WithoutCancel(ctx)) })
	if memTemplate.err != nil {
		return memTemplate.err
	}
	return withRaw(ctx, db, func(c serialized) error { return c.Deserialize(memTemplate.buf) })
}

// memorySchema migrates a fresh in-memory database and returns its bytes.
func memorySchema(ctx context.Context) ([]byte, error) {
	db, err := sql.Open("sqlite", "file::memory:?"+sqlitePragmas)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	keepOpen(db, 1)
	if err := schema.SQLite(ctx, db); err != nil {
		return nil, err
	}
	var buf []byte
	err = withRaw(ctx, db, func(c serialized) error {
		var err error
		buf, err = c.Serialize()
		return err
	})
	return buf, err
}

// withRaw runs fn on the driver's connection of db.
func withRaw(ctx context.Context, db *sql.DB, fn func(serialized) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(serialized)
		if !ok {
			return errors.New("store: the SQLite driver cannot copy a database")
		}
		return fn(c)
	})
}
