// Package cluster makes several processes on one PostgreSQL database one
// lab: what one process does, the others hear of. Each event of a lab goes
// out on the channel idemlab (NOTIFY) after its transaction commits, small
// (an operation without its attempts); a process that hears it brings what
// it keeps of the lab up to date and passes the event to its own
// subscribers, whose pages re-read the lab from the database. On SQLite
// there is one process, and none of this runs.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/outage"
	"idemlab/sim/store"
)

// channel is the NOTIFY channel of the lab's events.
const channel = "idemlab"

// notifyMax is the most a notice may weigh: PostgreSQL refuses a payload
// of 8000 bytes or more. A bigger event goes out bare (its lab and kind);
// the pages that hear it re-read the lab anyway.
const notifyMax = 7000

// notifyBatch is how many notices go out in one statement at most.
const notifyBatch = 64

// outgoing is how many events wait to go out at most: past it the others
// hear "start over" instead of the events lost.
const outgoing = 1024

// notice is an event on the wire, and the process it came from.
type notice struct {
	From string    `json:"from"`
	Ev   sim.Event `json:"ev"`
}

// Config is what a Cluster depends on.
type Config struct {
	Store *store.Store
	Bus   *events.Bus
	Clock clock.Clock
	Log   *slog.Logger
	DB    *outage.Watch // the database's outages, logged once each; nil: each failure logged
	// Heard brings what this process keeps up to date with an event of
	// another, before the event goes to the bus's subscribers.
	Heard func(ctx context.Context, ev sim.Event)
}

// Cluster is a process's part in the others' live updates.
type Cluster struct {
	Config
	id  string // this process, to know its own notices
	sub *events.Sub

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start listens on the channel (before it returns: nothing another process
// does after this one has started goes unheard) and starts the goroutines
// that hear and send notices. On SQLite it returns nil: there is nobody
// else to hear.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if !cfg.Store.Postgres() {
		return nil, nil
	}
	c := &Cluster{Config: cfg, id: sim.NewToken()}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	pg := cfg.Store.Pool().Config().ConnConfig.Copy()
	conn, err := listenOn(ctx, pg)
	if err != nil {
		c.cancel()
		return nil, err
	}
	c.sub = cfg.Bus.Subscribe(outgoing)
	c.spawn(func() { c.listen(conn, pg) })
	c.spawn(c.send)
	return c, nil
}

// Close stops hearing and sending; nil closes nothing.
func (c *Cluster) Close() {
	if c == nil {
		return
	}
	c.cancel()
	c.sub.Close()
	c.wg.Wait()
}

func (c *Cluster) spawn(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// listenOn opens a connection of its own that listens on the channel.
func listenOn(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+channel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// listen hears the other processes' notices until the cluster closes. When
// its connection breaks it connects again, and starts over: a change may
// have passed unheard meanwhile.
func (c *Cluster) listen(conn *pgx.Conn, cfg *pgx.ConnConfig) {
	for {
		err := c.hear(conn)
		conn.Close(context.Background())
		if c.ctx.Err() != nil {
			return
		}
		c.Log.Warn("live updates from other processes: connection lost", "err", err)
		for {
			if clock.Sleep(c.ctx, c.Clock, time.Second) != nil {
				return
			}
			if conn, err = listenOn(c.ctx, cfg); err == nil {
				break
			}
		}
		c.heard(sim.Event{Kind: sim.EventStartOver})
	}
}

// hear takes the notices of one connection until it fails.
func (c *Cluster) hear(conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(c.ctx)
		if err != nil {
			return err
		}
		var msg notice
		if err := json.Unmarshal([]byte(n.Payload), &msg); err != nil {
			c.Log.Warn("live updates from other processes: unreadable notice", "err", err)
			continue
		}
		if msg.From != c.id {
			c.heard(msg.Ev)
		}
	}
}

// heard brings this process up to date with another's event and passes it
// on to this process's subscribers.
func (c *Cluster) heard(ev sim.Event) {
	c.Heard(c.ctx, ev)
	ev.Remote = true
	c.Bus.Publish(ev)
}

// send sends this process's events to the others, as many as wait at once
// in one statement, in order. Events of other processes are not sent back;
// when the bus says events were lost, the others are told to start over.
func (c *Cluster) send() {
	batch := make([]string, 0, notifyBatch)
	for {
		batch = batch[:0]
		ev, ok := <-c.sub.Events()
		if !ok {
			return
		}
		batch = c.add(batch, ev)
	more:
		for len(batch) < notifyBatch {
			select {
			case ev, ok := <-c.sub.Events():
				if !ok {
					break more
				}
				batch = c.add(batch, ev)
			default:
				break more
			}
		}
		if len(batch) == 0 {
			continue
		}
		_, err := c.Store.Pool().Exec(c.ctx, `SELECT pg_notify('`+channel+`', p) FROM unnest($1::text[]) WITH ORDINALITY AS n(p, i) ORDER BY i`, batch)
		switch {
		case err == nil, errors.Is(err, context.Canceled):
		case store.IsUnavailable(err) && c.DB != nil: // once per outage, not per event
			c.DB.Failed(err, "live updates to other processes wait until it does")
		default:
			c.Log.Warn("live updates to other processes", "err", err)
		}
	}
}

// add appends the notice of a local event to batch.
func (c *Cluster) add(batch []string, ev sim.Event) []string {
	if ev.Remote {
		return batch
	}
	if op := ev.Operation; op != nil && op.Attempts != nil {
		bare := *op
		bare.Attempts = nil
		ev.Operation = &bare
	}
	b, err := json.Marshal(notice{From: c.id, Ev: ev})
	if err != nil || len(b) > notifyMax {
		b, _ = json.Marshal(notice{From: c.id, Ev: sim.Event{Lab: ev.Lab, Kind: ev.Kind, At: ev.At}})
	}
	return append(batch, string(b))
}
