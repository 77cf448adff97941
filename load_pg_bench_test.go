package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/sim"
	"idemlab/sim/pgtest"
)

// BenchmarkLoadPostgres measures the lab on PostgreSQL from another process,
// at 16 concurrent clients: floor-insert, a bare single-row INSERT
// transaction through pgx's pool into a table like the ledger's, in the
// same database; floor-noop, the replay's request to a no-op net/http
// server in a process of its own; then new charges (a fresh key each, under
// replay) and replays of one key, sent to one lab process, then dealt over
// two processes on the same database, each process with a lab of its own
// (SPEC: two processes on two labs at least as fast as one). Each reports
// its rate; charges their ratio to the bare insert ("of-insert"), replays
// theirs to the no-op server ("of-noop"), and the two processes' their
// ratio to one ("scale"). It needs a PostgreSQL ($IDEMLAB_TEST_POSTGRES) and
// asserts nothing about time:
//
//	go test -run '^$' -bench LoadPostgres -benchtime 3s .
//
// IDEMLAB_DEBUG_ADDR=127.0.0.1:6060 gives the first process that -debug
// address, for go tool pprof while it runs.
func BenchmarkLoadPostgres(b *testing.B) {
	db := pgtest.Database(b)
	l := &pgLoad{}
	args := append([]string{"-db", db, "-addr", "127.0.0.1:0"}, sharedParts(b)...) // two processes share Redis and NATS
	first := args
	if debug := os.Getenv(debugEnv); debug != "" { // the first process's -debug, to profile it
		first = append(slices.Clone(args), "-debug", debug)
	}
	l.procs = []*child{startChild(b, "lab", first...), startChild(b, "lab", args...)}
	l.noop = startChild(b, "noop")
	pool, err := pgxpool.New(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(context.Background(), `CREATE TABLE bare_payments (lab_id TEXT NOT NULL, n BIGSERIAL, order_id TEXT NOT NULL, amount BIGINT NOT NULL,
    idempotency_key TEXT, created_at TEXT NOT NULL, PRIMARY KEY (lab_id, n), UNIQUE (lab_id, idempotency_key))`); err != nil {
		b.Fatal(err)
	}
	l.pool = pool
	var backend int
	if err := pool.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&backend); err == nil {
		l.server = serverProcesses(backend) // nil when the database runs elsewhere
	}
	for range l.procs { // a lab for each process, under replay, with a charge to replay
		path, first := l.newLab(b)
		l.paths, l.replayed = append(l.paths, path), append(l.replayed, first)
	}

	var insertRate, noopRate, charges1, replays1 float64
	b.Run("floor-insert", func(b *testing.B) { insertRate = l.bench(b, 0, l.insert, "inserts/s") })
	b.Run("floor-noop", func(b *testing.B) { noopRate = l.bench(b, 0, l.noopRequest, "req/s") })
	b.Run("charges-1-process", func(b *testing.B) {
		charges1 = l.bench(b, 1, l.charge, "charges/s")
		b.ReportMetric(charges1/insertRate, "of-insert")
	})
	b.Run("charges-2-processes", func(b *testing.B) {
		rate := l.bench(b, 2, l.charge, "charges/s")
		b.ReportMetric(rate/insertRate, "of-insert")
		b.ReportMetric(rate/charges1, "scale")
	})
	b.Run("replays-1-process", func(b *testing.B) {
		replays1 = l.bench(b, 1, l.replay, "replays/s")
		b.ReportMetric(replays1/noopRate, "of-noop")
	})
	b.Run("replays-2-processes", func(b *testing.B) {
		rate := l.bench(b, 2, l.replay, "replays/s")
		b.ReportMetric(rate/noopRate, "of-noop")
		b.ReportMetric(rate/replays1, "scale")
	})
}

// newLab makes a lab under replay through the first process, and its
// charge that the replays repeat: the lab's API prefix and that answer.
func (l *pgLoad) newLab(b *testing.B) (path string, first []byte) {
	setup := &http.Client{}
	created := sendHonouring(setup, &l.refusals, "POST", l.procs[0].URL+"/api/v1/labs", nil)
	id, ok := labID(created)
	if !ok {
		b.Fatalf("create lab: %d %v %s", created.status, created.err, created.body)
	}
	path = "/api/v1/labs/" + id
	if a := send(context.Background(), setup, "PATCH", l.procs[0].URL+path+"/settings", []byte(`{"protection":"replay"}`)); a.status != http.StatusOK {
		b.Fatalf("settings: %d %v %s", a.status, a.err, a.body)
	}
	a := sendHonouring(setup, &l.refusals, "POST", l.procs[0].URL+path+"/charges", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if a.status != http.StatusCreated {
		b.Fatalf("the charge to replay: %d %v %s", a.status, a.err, a.body)
	}
	return path, a.body
}

// pgLoad is BenchmarkLoadPostgres's setting: two lab processes on one
// database, a lab under replay, and the bare pool.
type pgLoad struct {
	procs    []*child
	noop     *child
	paths    []string // the API prefix of each process's lab
	pool     *pgxpool.Pool
	server   func() []int // the database's processes, when they run on this machine
	seq      atomic.Int64
	refusals atomic.Int64
	replayed [][]byte // the answer each lab's replays repeat
}

func (l *pgLoad) insert(_ *http.Client, _ int, i int) error {
	n := strconv.Itoa(i)
	_, err := l.pool.Exec(context.Background(), `INSERT INTO bare_payments (lab_id, order_id, amount, idempotency_key, created_at) VALUES ($1, $2, $3, $4, $5)`,
		"bench", "order-"+n, 100, "key-"+n, time.Now().UTC().Format(time.RFC3339Nano))
	return err
}

// noopRequest is a replay's request, sent to the no-op server.
func (l *pgLoad) noopRequest(c *http.Client, _ int, _ int) error {
	a := send(context.Background(), c, "POST", l.noop.URL+"/", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if a.err != nil || a.status != http.StatusOK {
		return fmt.Errorf("no-op: %d %v", a.status, a.err)
	}
	return nil
}

func (l *pgLoad) charge(c *http.Client, p int, i int) error {
	n := strconv.Itoa(i)
	a := sendHonouring(c, &l.refusals, "POST", l.procs[p].URL+l.paths[p]+"/charges", sim.Charge{OrderID: "order-" + n, Amount: 100}.Body(), "Idempotency-Key", "load-"+n)
	if a.err != nil {
		return a.err
	}
	if a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "" {
		return fmt.Errorf("new charge %s: %d (replayed %q) %.200s", n, a.status, a.header.Get("Idempotent-Replayed"), a.body)
	}
	return nil
}

func (l *pgLoad) replay(c *http.Client, p int, _ int) error {
	a := sendHonouring(c, &l.refusals, "POST", l.procs[p].URL+l.paths[p]+"/charges", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if a.err != nil {
		return a.err
	}
	if a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "true" || string(a.body) != string(l.replayed[p]) {
		return fmt.Errorf("replay: %d (replayed %q) %.200s", a.status, a.header.Get("Idempotent-Replayed"), a.body)
	}
	return nil
}

// bench runs b.N requests from 16 clients, client w to process w mod procs
// (procs 0: a floor, which names no process), after a first request of
// each client outside the timer.
func (l *pgLoad) bench(b *testing.B, procs int, req func(*http.Client, int, int) error, unit string) float64 {
	clients := newClients(loadClients)
	defer closeClients(clients)
	proc := func(w int) int { return w % max(procs, 1) }
	for w, c := range clients {
		if err := req(c, proc(w), int(l.seq.Add(1))); err != nil {
			b.Fatal(err)
		}
	}
	refused := l.refusals.Load()
	sides := cpuSides{children: append(slices.Clone(l.procs), l.noop), db: l.server}
	before := sides.read()
	b.ResetTimer()
	t := drive(loadClients, count(b.N, &l.seq), func(w, i int) error { return req(clients[w], proc(w), i) })
	b.StopTimer()
	sides.report(b, before, sides.read(), b.N)
	t.refusals = l.refusals.Load() - refused
	return report(b, t, unit)
}
