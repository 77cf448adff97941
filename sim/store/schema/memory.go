package schema

import (
	"context"
	"database/sql"
	"errors"
	"sync"
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

// SQLiteMemory gives the in-memory database of db (one connection) the
// newest schema: a copy of the database fresh opens (an empty in-memory
// one, of one connection) migrated the first time in the process.
func SQLiteMemory(ctx context.Context, db *sql.DB, fresh func() (*sql.DB, error)) error {
	memTemplate.once.Do(func() { memTemplate.buf, memTemplate.err = memorySchema(context.WithoutCancel(ctx), fresh) })
	if memTemplate.err != nil {
		return memTemplate.err
	}
	return withRaw(ctx, db, func(c serialized) error { return c.Deserialize(memTemplate.buf) })
}

// memorySchema migrates a fresh in-memory database and returns its bytes.
func memorySchema(ctx context.Context, fresh func() (*sql.DB, error)) ([]byte, error) {
	db, err := fresh()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := SQLite(ctx, db); err != nil {
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
			return errors.New("schema: the SQLite driver cannot copy a database")
		}
		return fn(c)
	})
}
