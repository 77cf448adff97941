package web_test

// Benchmarks of the charge endpoint, against a bare SQLite insert as the
// baseline. They measure; they assert nothing about time. Compare medians and
// ratios from the same run (benchstat), never single absolute times:
//
//	go test -run '^$' -bench 'BareInsert|Charge' -count 8 -benchtime 2000x ./web/ | tee bench.txt
//	benchstat bench.txt

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim"
)

// benchDSN is the lab's writer DSN (sim.Open): WAL, synchronous=NORMAL,
// immediate transactions.
const benchDSN = "?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"

// BenchmarkBareInsert is the floor under every charge: one single-row INSERT
// transaction (BEGIN; INSERT; COMMIT) into a plain payments table (the
// ledger's columns, its UNIQUE key of the payments that have one, as
// migration 15 made the ledger's, and its key index, no triggers, no
// foreign key), on a file database opened as the lab opens it, from one goroutine,
// no HTTP.
func BenchmarkBareInsert(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bare.db")
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+path+benchDSN)
	if err != nil {
		b.Fatalf("open: %v", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	b.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, `CREATE TABLE payments (
    id INTEGER PRIMARY KEY, lab_id TEXT NOT NULL, order_id TEXT NOT NULL, amount INTEGER NOT NULL CHECK (amount > 0),
    idempotency_key TEXT, dedup_key TEXT, created_at TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS payments_dedup ON payments (lab_id, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX payments_lab_key ON payments (lab_id, idempotency_key)`); err != nil {
		b.Fatalf("create: %v", err)
	}
	const insert = `INSERT INTO payments (lab_id, order_id, amount, idempotency_key, dedup_key, created_at) VALUES (?, ?, ?, ?, ?, ?)`
	one := func(i int) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatalf("begin: %v", err)
		}
		n := strconv.Itoa(i)
		if _, err := tx.ExecContext(ctx, insert, "bench", "order-"+n, 100, "key-"+n, nil,
			time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
			b.Fatalf("insert: %v", err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatalf("commit: %v", err)
		}
	}
	one(-1) // warm the connection
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		one(i)
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
}

// BenchmarkCharge sends new charges (a fresh key and order id each) to a
// file-backed lab over loopback HTTP, under each protection: one client
// goroutine on one keep-alive connection.
func BenchmarkCharge(b *testing.B) {
	for _, p := range []struct{ name, settings string }{
		{"none", `{"protection":"none"}`},
		{"check-then-insert", `{"protection":"check-then-insert","check_gap_ms":0}`},
		{"unique", `{"protection":"unique"}`},
		{"on-conflict", `{"protection":"on-conflict"}`},
		{"replay", `{"protection":"replay"}`},
	} {
		b.Run(p.name, func(b *testing.B) {
			c := newChargeClient(b, p.settings)
			c.charge(http.StatusCreated, "warm", false) // connection up, lab cached
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c.charge(http.StatusCreated, "n"+strconv.Itoa(i), false)
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
			c.done(int64(b.N) + 1)
		})
	}
}

// BenchmarkChargeReplayed retries one key that has already been charged,
// under replay: every request takes the replayed-answer path.
func BenchmarkChargeReplayed(b *testing.B) {
	c := newChargeClient(b, `{"protection":"replay"}`)
	c.charge(http.StatusCreated, "once", false)
	c.charge(http.StatusCreated, "once", true) // the first replay, outside the timer
	b.ReportAllocs()
	for b.Loop() {
		c.charge(http.StatusCreated, "once", true)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
	c.done(1)
}

// chargeClient posts charges to one lab as lean as net/http allows, so the
// client's own cost is small and the same under every protection.
type chargeClient struct {
	b      *testing.B
	s      *testServer
	prefix string
	url    string
	ctx    context.Context
	dialed int // connections not taken from the idle pool
}

func newChargeClient(b *testing.B, settings string, opts ...func(*serverOpts)) *chargeClient {
	b.Helper()
	s := startServer(b, append([]func(*serverOpts){withDB(filepath.Join(b.TempDir(), "lab.db"))}, opts...)...)
	prefix := s.newLab(settings)
	c := &chargeClient{b: b, s: s, prefix: prefix, url: s.URL + prefix + "/charges"}
	c.ctx = httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(ci httptrace.GotConnInfo) {
			if !ci.Reused {
				c.dialed++
			}
		},
	})
	return c
}

// charge posts one charge with order id and key id, and fails the benchmark
// unless the answer has the status (and, when replayed is set, is marked
// Idempotent-Replayed).
func (c *chargeClient) charge(status int, id string, replayed bool) {
	if err := c.send(c.ctx, status, id, replayed); err != nil {
		c.b.Fatal(err)
	}
}

// post is charge without the connection count, for RunParallel's goroutines
// (which may not call Fatal).
func (c *chargeClient) post(status int, id string, replayed bool) {
	if err := c.send(context.Background(), status, id, replayed); err != nil {
		c.b.Error(err)
	}
}

func (c *chargeClient) send(ctx context.Context, status int, id string, replayed bool) error {
	body := sim.Charge{OrderID: "order-" + id, Amount: 100}.Body()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("new request: %w", err)
	}
	req.Header["Content-Type"] = []string{"application/json"}
	req.Header["Idempotency-Key"] = []string{"key-" + id}
	resp, err := c.s.client.Do(req)
	if err != nil {
		return fmt.Errorf("charge %s: %w", id, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("charge %s: read body: %w", id, err)
	case resp.StatusCode != status:
		return fmt.Errorf("charge %s: status %d, want %d", id, resp.StatusCode, status)
	case (resp.Header.Get("Idempotent-Replayed") == "true") != replayed:
		return fmt.Errorf("charge %s: replayed %q, want %v", id, resp.Header.Get("Idempotent-Replayed"), replayed)
	}
	return nil
}

// done checks, outside the timer, that every request went over one
// connection and that the ledger holds the expected number of payments.
func (c *chargeClient) done(payments int64) {
	c.b.Helper()
	if c.dialed > 1 { // 0 when the connection that created the lab was reused
		c.b.Fatalf("charges used %d new connections, want at most 1 kept alive", c.dialed)
	}
	if got := c.s.ledger(c.prefix).Count; got != payments {
		c.b.Fatalf("ledger holds %d payments, want %d", got, payments)
	}
}

// BenchmarkChargeParallel is BenchmarkCharge with 8 clients at once (4 per
// core): the rate a server is judged by. HTTP work spreads over both cores
// while writes queue for the one writer connection.
func BenchmarkChargeParallel(b *testing.B) {
	for _, p := range []struct{ name, settings string }{
		{"none", `{"protection":"none"}`},
		{"replay", `{"protection":"replay"}`},
	} {
		b.Run(p.name, func(b *testing.B) {
			c := newChargeClient(b, p.settings)
			c.charge(http.StatusCreated, "warm", false)
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.post(http.StatusCreated, "p"+strconv.FormatInt(next.Add(1), 10), false)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
			if got := c.s.ledger(c.prefix).Count; got != int64(b.N)+1 {
				b.Fatalf("ledger holds %d payments, want %d", got, b.N+1)
			}
		})
	}
}

// BenchmarkChargeReplayedParallel is BenchmarkChargeReplayed with 8 clients.
func BenchmarkChargeReplayedParallel(b *testing.B) {
	c := newChargeClient(b, `{"protection":"replay"}`)
	c.charge(http.StatusCreated, "once", false)
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.post(http.StatusCreated, "once", true)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
}
