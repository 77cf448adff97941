package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"idemlab/sim/pgtest"
)

// TestCommitWhoseAnswerIsLost cuts the connection after the server has
// the COMMIT and before its answer reaches the store: the write must be
// known as done (nil), not reported failed, and it is in the database
// once. Then the same cut on a transaction the database refuses at
// COMMIT (a deferred constraint) must stay a failure.
func TestCommitWhoseAnswerIsLost(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	db := admin(t, dsn)
	if _, err := db.Exec(`CREATE TABLE probe (id INT PRIMARY KEY,
		other INT UNIQUE DEFERRABLE INITIALLY DEFERRED)`); err != nil {
		t.Fatal(err)
	}
	p := newCutProxy(t, dsn)
	s := openSteady(t, p.url)
	ctx := context.Background()

	for name, write := range map[string]func(func(*Tx) error) error{
		"Write":    func(fn func(*Tx) error) error { return s.Write(ctx, fn) },
		"WriteLab": func(fn func(*Tx) error) error { return s.WriteLab(ctx, "lab-a", fn) },
		"Isolated": func(fn func(*Tx) error) error { return s.Isolated(ctx, true, fn) },
	} {
		id := len(name)*10 + int(name[0])
		cuts := p.arm()
		err := write(func(tx *Tx) error {
			_, err := tx.Exec(`INSERT INTO probe (id) VALUES (?)`, id)
			return err
		})
		if p.cuts() != cuts+1 {
			t.Fatalf("%s: the proxy cut no COMMIT; the test proves nothing", name)
		}
		if err != nil {
			t.Errorf("%s: a COMMIT that committed, its answer lost, returned %v; want nil", name, err)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM probe WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d rows (%v), want 1", name, n, err)
		}
	}

	// A lab's batch sends its held writes with its COMMIT (pgsql.Tx.Commit):
	// the answers of both lost, the batch is settled, not run again.
	cuts := p.arm()
	if err := s.WriteLab(ctx, "lab-b", func(tx *Tx) error { return tx.Later(`INSERT INTO probe (id) VALUES (?1)`, 5) }); err != nil {
		t.Errorf("WriteLab, held: a COMMIT that committed, its answer lost, returned %v; want nil", err)
	}
	if p.cuts() != cuts+1 {
		t.Fatal("WriteLab, held: the proxy cut no COMMIT")
	}
	var held int
	if err := db.QueryRow(`SELECT count(*) FROM probe WHERE id = 5`).Scan(&held); err != nil || held != 1 {
		t.Errorf("WriteLab, held: %d rows (%v), want 1", held, err)
	}

	if _, err := db.Exec(`INSERT INTO probe (id, other) VALUES (1, 1)`); err != nil {
		t.Fatal(err)
	}
	cuts = p.arm()
	err := s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(`INSERT INTO probe (id, other) VALUES (2, 1)`)
		return err
	})
	if p.cuts() != cuts+1 {
		t.Fatal("the proxy cut no COMMIT")
	}
	if err == nil || !IsAnswered(err) {
		t.Errorf("a COMMIT the database refused, its answer lost, returned %v; want an error known not to have committed (IsAnswered)", err)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM probe WHERE id = 2`).Scan(&n)
	if n != 0 {
		t.Errorf("the refused transaction's row is there %d times", n)
	}
}

// cutProxy passes a PostgreSQL connection through, and once armed cuts
// the next connection that runs a COMMIT (commits): the COMMIT reaches the server,
// which has time to do it, and nothing it answers reaches the client.
type cutProxy struct {
	url   string
	armed atomic.Bool
	n     atomic.Int64
}

func newCutProxy(t *testing.T, dsn string) *cutProxy {
	t.Helper()
	p := &cutProxy{}
	p.url = pgProxy(t, dsn, p.serve)
	return p
}

// pgProxy listens on loopback for PostgreSQL's clients and hands each
// connection to serve, with the server's address; it returns dsn with the
// proxy's address instead.
func pgProxy(t *testing.T, dsn string, serve func(c net.Conn, target string)) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	target := u.Host
	u.Host = ln.Addr().String()
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { serve(c, target) })
		}
	})
	return u.String()
}

func (p *cutProxy) arm() int64  { p.armed.Store(true); return p.n.Load() }
func (p *cutProxy) cuts() int64 { return p.n.Load() }
func (p *cutProxy) serve(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	var cut atomic.Bool
	answered := make(chan struct{}) // the server answered what came after the cut
	go func() {                     // the server's answers, until the cut
		defer c.Close() // the server closed: so does the client's side
		buf := make([]byte, 32<<10)
		for {
			n, err := s.Read(buf)
			switch {
			case n > 0 && cut.Load():
				p.n.Add(1) // before the client's side closes: its write may return at once
				close(answered)
				return
			case n > 0:
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if commits(buf[:n]) && p.armed.CompareAndSwap(true, false) {
				cut.Store(true)
				s.Write(buf[:n])
				<-answered // the server committed (or refused), and its answer goes nowhere
				return
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// commits reports whether what the client sent runs a COMMIT: a
// transaction ends with its last statements and COMMIT in one pipeline
// (pgsql.Tx.Commit), where pgx runs the COMMIT as a statement it prepared on
// the connection before (in a round trip of its own, the first time) and
// binds by its name, the way pgx names its cached statements
// (stmtcache.StatementName). A Bind names it after the (empty) portal's
// name; its Parse names it before its text.
func commits(b []byte) bool {
	digest := sha256.Sum256([]byte("COMMIT"))
	name := []byte("\x00stmtcache_" + hex.EncodeToString(digest[:24]) + "\x00")
	for i := bytes.Index(b, name); i >= 0; {
		if !bytes.HasPrefix(b[i+len(name):], []byte("COMMIT")) {
			return true
		}
		next := bytes.Index(b[i+1:], name)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// A restart of PostgreSQL ends every session, the pool's idle
// connections among them; each fails at its first use. Writes just after
// it still succeed: nothing of a transaction has run when its first
// statement meets an ended connection, so it begins again on another.
func TestWritesAfterEverySessionEnded(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	db := admin(t, dsn)
	if _, err := db.Exec(`CREATE TABLE probe (id INT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	s := openSteady(t, dsn)
	ctx := context.Background()
	var id atomic.Int64
	insert := func(tx *Tx) error {
		_, err := tx.Exec(`INSERT INTO probe (id) VALUES (?)`, id.Add(1))
		return err
	}
	fill := func() { // every connection of the pool in use at once, then idle
		var inside, wg sync.WaitGroup
		inside.Add(8)
		for i := range 8 {
			wg.Go(func() {
				var once sync.Once
				defer once.Do(inside.Done) // a write that failed holds no one up
				if err := s.WriteLab(ctx, fmt.Sprint("lab-", i), func(tx *Tx) error {
					if err := insert(tx); err != nil {
						return err
					}
					once.Do(inside.Done)
					inside.Wait() // each holds its connection until all eight hold one
					return nil
				}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	for round := range 3 {
		fill()
		endSessions(t, db)
		for name, write := range map[string]func() error{
			"Write":    func() error { return s.Write(ctx, insert) },
			"WriteLab": func() error { return s.WriteLab(ctx, "lab-0", insert) },
			"Isolated": func() error { return s.Isolated(ctx, false, insert) },
		} {
			if err := write(); err != nil {
				t.Errorf("round %d: %s just after every session ended: %v", round, name, err)
			}
		}
	}
}
