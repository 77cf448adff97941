package main

// BenchmarkLoad drives the lab as a client program does: the lab runs in a
// process of its own (this test binary run again as a child, see
// TestBenchChild) and 16 keep-alive clients send it requests over loopback.
// Two floors are measured in the same run, so the figures that matter are
// ratios, not absolute times (the machine is small and shared): see
// docs/load.md. Nothing here asserts anything about time.
//
//	go test -run '^$' -bench Load -benchtime 3s .
//
// IDEMLAB_PROFILE=/tmp/cpu.pprof saves a CPU profile of the lab child under
// the charge load (IDEMLAB_PROFILE_SECONDS long, 10 by default; under the
// replays' load with IDEMLAB_PROFILE_KIND=replays);
// IDEMLAB_DEBUG_ADDR=127.0.0.1:6060 gives the child's -debug endpoints a
// fixed address, to profile it by hand while the benchmark runs.

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim"
)

const (
	profileEnv  = "IDEMLAB_PROFILE"    // save a CPU profile of the lab under the charge load to this file
	debugEnv    = "IDEMLAB_DEBUG_ADDR" // the lab child's -debug address; a free loopback port by default
	loadClients = 16                   // concurrent clients of every load benchmark
)

// BenchmarkLoad measures, at 16 concurrent clients: floor-insert, a bare
// single-row SQLite insert transaction on a file database opened as the lab
// opens its own; floor-noop, a request to a no-op net/http server in a
// process of its own; charges, new charges (a fresh Idempotency-Key each)
// under replay to the lab in its own process, on a file database; replays,
// the same key again. charges and replays report their rate as a ratio to
// the floor measured just before them (targets: 0.40 and 0.60) and count
// every wrong answer in "errors" (must be 0). interleaved runs the four in
// turn, 100 ms each, round after round, so that the machine's drift hits
// all four alike, and reports the same ratios from its totals.
func BenchmarkLoad(b *testing.B) {
	l := newLoad(b)
	if path := os.Getenv(profileEnv); path != "" {
		profileCharges(b, l, path)
	}
	var insertRate, noopRate float64
	b.Run("floor-insert", func(b *testing.B) {
		insertRate = l.bench(b, false, l.insert, "inserts/s")
	})
	b.Run("floor-noop", func(b *testing.B) {
		noopRate = l.bench(b, true, l.noopRequest, "req/s")
	})
	b.Run("charges", func(b *testing.B) {
		if rate := l.bench(b, true, l.charge, "charges/s"); insertRate > 0 {
			b.ReportMetric(rate/insertRate, "of-insert")
		}
	})
	b.Run("replays", func(b *testing.B) {
		if rate := l.bench(b, true, l.replay, "replays/s"); noopRate > 0 {
			b.ReportMetric(rate/noopRate, "of-noop")
		}
	})
	b.Run("interleaved", l.interleaved)
}

// load is BenchmarkLoad's setting: the two children, a lab under replay in
// the lab child, the bare database, and what each kind of request is.
type load struct {
	lab, noop *child
	api       string // the lab's API prefix, with its URL
	db        *sql.DB
	seq       atomic.Int64 // every new charge's key and order are unique across runs
	refusals  atomic.Int64
	replayed  []byte // the answer every replay must repeat
}

func newLoad(b *testing.B) *load {
	dir := b.TempDir()
	debug := os.Getenv(debugEnv)
	if debug == "" {
		debug = "127.0.0.1:0"
	}
	l := &load{lab: startChild(b, "lab", "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "lab.db"), "-debug", debug),
		noop: startChild(b, "noop"), db: bareDB(b, filepath.Join(dir, "bare.db"))}
	b.Logf("lab child at %s, its pprof at %s/debug/pprof/", l.lab.URL, l.lab.Debug)
	setup := &http.Client{Transport: &http.Transport{}}
	defer setup.CloseIdleConnections()
	created := sendHonouring(setup, &l.refusals, "POST", l.lab.URL+"/api/v1/labs", nil)
	id, ok := labID(created)
	if !ok {
		b.Fatalf("create lab: %d %v %s", created.status, created.err, created.body)
	}
	l.api = l.lab.URL + "/api/v1/labs/" + id
	if a := send(context.Background(), setup, "PATCH", l.api+"/settings", []byte(`{"protection":"replay"}`)); a.status != http.StatusOK {
		b.Fatalf("settings: %d %v %s", a.status, a.err, a.body)
	}
	first := sendHonouring(setup, &l.refusals, "POST", l.api+"/charges", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if first.status != http.StatusCreated {
		b.Fatalf("the charge to replay: %d %v %s", first.status, first.err, first.body)
	}
	l.replayed = first.body
	return l
}

// replayBody is the body of the charge that every replay repeats.
const replayBody = `{"order_id":"order-replayed","amount":100}`

func (l *load) insert(_ *http.Client, i int) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	n := strconv.Itoa(i)
	if _, err := tx.Exec(`INSERT INTO payments (lab_id, order_id, amount, idempotency_key, dedup_key, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		"bench", "order-"+n, 100, "key-"+n, nil, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// noopRequest is a replay's request, sent to the no-op server.
func (l *load) noopRequest(c *http.Client, _ int) error {
	a := send(context.Background(), c, "POST", l.noop.URL+"/", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if a.err != nil || a.status != http.StatusOK {
		return fmt.Errorf("no-op: %d %v", a.status, a.err)
	}
	return nil
}

func (l *load) charge(c *http.Client, i int) error {
	n := strconv.Itoa(i)
	a := sendHonouring(c, &l.refusals, "POST", l.api+"/charges", sim.Charge{OrderID: "order-" + n, Amount: 100}.Body(), "Idempotency-Key", "load-"+n)
	switch {
	case a.err != nil:
		return a.err
	case a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "":
		return fmt.Errorf("new charge %s: %d (replayed %q) %.200s", n, a.status, a.header.Get("Idempotent-Replayed"), a.body)
	}
	return nil
}

func (l *load) replay(c *http.Client, _ int) error {
	a := sendHonouring(c, &l.refusals, "POST", l.api+"/charges", []byte(replayBody), "Idempotency-Key", "load-replayed")
	switch {
	case a.err != nil:
		return a.err
	case a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(a.body, l.replayed):
		return fmt.Errorf("replay: %d (replayed %q) %.200s, want 201 replayed %s", a.status, a.header.Get("Idempotent-Replayed"), a.body, l.replayed)
	}
	return nil
}

// bareDB is a file database with a plain payments table (the ledger's
// columns, its UNIQUE key of the payments that have one, as migration 15
// made the ledger's, and its key index; no triggers, no foreign key),
// opened as the lab opens its writer (sim/store.go: WAL, synchronous=NORMAL,
// busy_timeout, immediate transactions, one connection).
func bareDB(b *testing.B, path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS payments (
    id INTEGER PRIMARY KEY, lab_id TEXT NOT NULL, order_id TEXT NOT NULL, amount INTEGER NOT NULL CHECK (amount > 0),
    idempotency_key TEXT, dedup_key TEXT, created_at TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS payments_dedup ON payments (lab_id, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS payments_lab_key ON payments (lab_id, idempotency_key)`); err != nil {
		b.Fatal(err)
	}
	return db
}

// profileCharges saves a CPU profile of the lab child, taken through its
// -debug endpoint while 16 clients send it new charges.
func profileCharges(b *testing.B, l *load, path string) {
	seconds := 10
	if s, err := strconv.Atoi(os.Getenv("IDEMLAB_PROFILE_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	clients := newClients(loadClients)
	defer closeClients(clients)
	profiled := make(chan answer, 1)
	var over atomic.Bool
	go func() {
		pc := &http.Client{Transport: &http.Transport{}, Timeout: time.Duration(seconds+60) * time.Second}
		defer pc.CloseIdleConnections()
		profiled <- send(context.Background(), pc, "GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", l.lab.Debug, seconds), nil)
		over.Store(true)
	}()
	req := l.charge
	if os.Getenv("IDEMLAB_PROFILE_KIND") == "replays" { // the replays' profile instead
		req = l.replay
	}
	t := drive(loadClients, func() (int, bool) { return int(l.seq.Add(1)), !over.Load() }, func(w, i int) error { return req(clients[w], i) })
	prof := <-profiled
	if prof.err != nil || prof.status != http.StatusOK {
		b.Fatalf("CPU profile: %d %v %s", prof.status, prof.err, prof.body)
	}
	if err := os.WriteFile(path, prof.body, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("CPU profile of the lab under %d charges from %d clients (%d errors): go tool pprof -top %s", len(t.latency), loadClients, t.errors, path)
}
