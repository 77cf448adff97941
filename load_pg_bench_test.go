package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/sim"
	"idemlab/sim/pgtest"
)

// BenchmarkLoadPostgres measures the lab on PostgreSQL from another process,
// at 16 concurrent clients: floor-insert, a bare single-row INSERT through
// pgx's pool into a table like the ledger's, in the same database; then new
// charges (a fresh key each, under replay) and replays of one key, sent to
// one lab process, then dealt over two processes on the same database.
// Each reports its rate; charges and replays over two processes report
// their ratio to one ("scale"), and charges their ratio to the bare insert.
// It needs a PostgreSQL ($IDEMLAB_TEST_POSTGRES) and asserts nothing about
// time:
//
//	go test -run '^$' -bench LoadPostgres -benchtime 3s .
func BenchmarkLoadPostgres(b *testing.B) {
	db := pgtest.Database(b)
	l := &pgLoad{}
	args := append([]string{"-db", db, "-addr", "127.0.0.1:0"}, sharedParts(b)...) // two processes share Redis and NATS
	l.procs = []*child{startChild(b, "lab", args...), startChild(b, "lab", args...)}
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
	setup := &http.Client{}
	created := sendHonouring(setup, &l.refusals, "POST", l.procs[0].URL+"/api/v1/labs", nil)
	id, ok := labID(created)
	if !ok {
		b.Fatalf("create lab: %d %v %s", created.status, created.err, created.body)
	}
	l.path = "/api/v1/labs/" + id
	if a := send(context.Background(), setup, "PATCH", l.procs[0].URL+l.path+"/settings", []byte(`{"protection":"replay"}`)); a.status != http.StatusOK {
		b.Fatalf("settings: %d %v %s", a.status, a.err, a.body)
	}
	first := sendHonouring(setup, &l.refusals, "POST", l.procs[0].URL+l.path+"/charges", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if first.status != http.StatusCreated {
		b.Fatalf("the charge to replay: %d %v %s", first.status, first.err, first.body)
	}
	l.replayed = first.body

	var insertRate, charges1, replays1 float64
	b.Run("floor-insert", func(b *testing.B) { insertRate = l.bench(b, 0, l.insert, "inserts/s") })
	b.Run("charges-1-process", func(b *testing.B) {
		charges1 = l.bench(b, 1, l.charge, "charges/s")
		b.ReportMetric(charges1/insertRate, "of-insert")
	})
	b.Run("charges-2-processes", func(b *testing.B) {
		rate := l.bench(b, 2, l.charge, "charges/s")
		b.ReportMetric(rate/insertRate, "of-insert")
		b.ReportMetric(rate/charges1, "scale")
	})
	b.Run("replays-1-process", func(b *testing.B) { replays1 = l.bench(b, 1, l.replay, "replays/s") })
	b.Run("replays-2-processes", func(b *testing.B) {
		b.ReportMetric(l.bench(b, 2, l.replay, "replays/s")/replays1, "scale")
	})
}

// pgLoad is BenchmarkLoadPostgres's setting: two lab processes on one
// database, a lab under replay, and the bare pool.
type pgLoad struct {
	procs    []*child
	path     string // the lab's API prefix
	pool     *pgxpool.Pool
	seq      atomic.Int64
	refusals atomic.Int64
	replayed []byte
}

func (l *pgLoad) insert(_ *http.Client, _ string, i int) error {
	n := strconv.Itoa(i)
	_, err := l.pool.Exec(context.Background(), `INSERT INTO bare_payments (lab_id, order_id, amount, idempotency_key, created_at) VALUES ($1, $2, $3, $4, $5)`,
		"bench", "order-"+n, 100, "key-"+n, time.Now().UTC().Format(time.RFC3339Nano))
	return err
}

func (l *pgLoad) charge(c *http.Client, base string, i int) error {
	n := strconv.Itoa(i)
	a := sendHonouring(c, &l.refusals, "POST", base+l.path+"/charges", sim.Charge{OrderID: "order-" + n, Amount: 100}.Body(), "Idempotency-Key", "load-"+n)
	if a.err != nil {
		return a.err
	}
	if a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "" {
		return fmt.Errorf("new charge %s: %d (replayed %q) %.200s", n, a.status, a.header.Get("Idempotent-Replayed"), a.body)
	}
	return nil
}

func (l *pgLoad) replay(c *http.Client, base string, _ int) error {
	a := sendHonouring(c, &l.refusals, "POST", base+l.path+"/charges", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if a.err != nil {
		return a.err
	}
	if a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "true" || string(a.body) != string(l.replayed) {
		return fmt.Errorf("replay: %d (replayed %q) %.200s", a.status, a.header.Get("Idempotent-Replayed"), a.body)
	}
	return nil
}

// bench runs b.N requests from 16 clients, client w to process w mod procs
// (procs 0: the bare pool), after a first request of each client outside
// the timer.
func (l *pgLoad) bench(b *testing.B, procs int, req func(*http.Client, string, int) error, unit string) float64 {
	clients := newClients(loadClients)
	defer closeClients(clients)
	base := func(w int) string {
		if procs == 0 {
			return ""
		}
		return l.procs[w%procs].URL
	}
	for w, c := range clients {
		if err := req(c, base(w), int(l.seq.Add(1))); err != nil {
			b.Fatal(err)
		}
	}
	refused := l.refusals.Load()
	b.ResetTimer()
	t := drive(loadClients, count(b.N, &l.seq), func(w, i int) error { return req(clients[w], base(w), i) })
	b.StopTimer()
	t.refusals = l.refusals.Load() - refused
	return report(b, t, unit)
}
