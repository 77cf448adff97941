package sim

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Several processes on one PostgreSQL database serve the same labs. What
// one process does, the others hear of: each event of a lab goes out on the
// channel idemlab (NOTIFY) after its transaction commits, small (an
// operation without its attempts); a process that hears it reloads what it
// keeps of the lab (its settings and lesson, its finished records) and
// tells its observers, whose pages re-read the lab from the database. On
// SQLite there is one process, and none of this runs.

// channel is the NOTIFY channel of the lab's events.
const channel = "idemlab"

// notifyMax is the most a notice may weigh: PostgreSQL refuses a payload
// of 8000 bytes or more. A bigger event goes out bare (its lab and kind);
// the pages that hear it re-read the lab anyway.
const notifyMax = 7000

// notifyBatch is how many notices go out in one statement at most.
const notifyBatch = 64

// notice is an event on the wire, and the process it came from.
type notice struct {
	From string `json:"from"`
	Ev   Event  `json:"ev"`
}

// cluster is a process's part in the others' live updates.
type cluster struct {
	id  string      // this process, to know its own notices
	out chan []byte // notices to send, in order
}

// startCluster listens on the channel (before NewEngine returns: nothing
// another process does after this one has started goes unheard) and starts
// the goroutines that hear and send notices.
func (e *Engine) startCluster(ctx context.Context) error {
	if !e.store.postgres() {
		return nil
	}
	e.cluster = &cluster{id: newToken(), out: make(chan []byte, 1024)}
	cfg := e.store.pool.Config().ConnConfig.Copy()
	conn, err := e.listenOn(ctx, cfg)
	if err != nil {
		return err
	}
	e.spawn(func() { e.listen(conn, cfg) })
	e.spawn(e.notifier)
	return nil
}

// listenOn opens a connection of its own that listens on the channel.
func (e *Engine) listenOn(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
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

// listen hears the other processes' notices until the engine closes. When
// its connection breaks it connects again, and reloads every lab it keeps:
// a change may have passed unheard meanwhile.
func (e *Engine) listen(conn *pgx.Conn, cfg *pgx.ConnConfig) {
	for {
		err := e.hear(conn)
		conn.Close(context.Background())
		if e.ctx.Err() != nil {
			return
		}
		e.log.Warn("live updates from other processes: connection lost", "err", err)
		for {
			select {
			case <-e.ctx.Done():
				return
			case <-time.After(time.Second):
			}
			if conn, err = e.listenOn(e.ctx, cfg); err == nil {
				break
			}
		}
		e.reloadAll(e.ctx)
	}
}

// hear takes the notices of one connection until it fails.
func (e *Engine) hear(conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(e.ctx)
		if err != nil {
			return err
		}
		var msg notice
		if err := json.Unmarshal([]byte(n.Payload), &msg); err != nil {
			e.log.Warn("live updates from other processes: unreadable notice", "err", err)
			continue
		}
		if msg.From != e.cluster.id {
			e.heard(e.ctx, msg.Ev)
		}
	}
}

// heard brings what this process keeps of a lab up to date with what
// another did, then tells the observers.
func (e *Engine) heard(ctx context.Context, ev Event) {
	switch ev.Kind {
	case EventSettings, EventLesson, EventClock:
		e.reload(ctx, ev.Lab)
	case EventReset:
		e.reload(ctx, ev.Lab)
		e.forgetRecords(ctx, ev.Lab)
	case EventGone:
		e.drop(ev.Lab)
		e.stopConsumers([]string{ev.Lab})
	case EventCharge:
		if e.broker != nil {
			e.WakeRelay() // a message may wait in the outbox
		}
	}
	e.tell(ev)
}

// reload reads a lab this process keeps in memory afresh.
func (e *Engine) reload(ctx context.Context, id string) {
	e.labs.mu.Lock()
	l, ok := e.labs.m[id]
	e.labs.mu.Unlock()
	if !ok {
		return // read when next used
	}
	st, err := loadState(ctx, e.store.r, id)
	switch {
	case ErrorCode(err) == ENotFound || err == nil && st.kind == kindDoomed:
		e.drop(id)
	case err != nil:
		if ctx.Err() == nil {
			e.log.Warn("reload a lab", "lab", id, "err", err)
		}
	default:
		l.publish(st)
	}
}

// reloadAll reads every lab this process keeps afresh.
func (e *Engine) reloadAll(ctx context.Context) {
	e.labs.mu.Lock()
	ids := make([]string, 0, len(e.labs.m))
	for id := range e.labs.m {
		ids = append(ids, id)
	}
	e.labs.mu.Unlock()
	for _, id := range ids {
		e.reload(ctx, id)
	}
}

// announce sends an event of this process to the others, without blocking:
// when the notices back up, the event is not sent (the next one of the lab
// has the pages re-read it all the same).
func (c *cluster) announce(ev Event) {
	if op := ev.Operation; op != nil && op.Attempts != nil {
		bare := *op
		bare.Attempts = nil
		ev.Operation = &bare
	}
	b, err := json.Marshal(notice{From: c.id, Ev: ev})
	if err != nil || len(b) > notifyMax {
		b, _ = json.Marshal(notice{From: c.id, Ev: Event{Lab: ev.Lab, Kind: ev.Kind, At: ev.At}})
	}
	select {
	case c.out <- b:
	default:
	}
}

// notifier sends the announced events, as many as wait at once in one
// statement, in order.
func (e *Engine) notifier() {
	batch := make([]string, 0, notifyBatch)
	for {
		select {
		case <-e.ctx.Done():
			return
		case b := <-e.cluster.out:
			batch = append(batch[:0], string(b))
		}
	more:
		for len(batch) < notifyBatch {
			select {
			case b := <-e.cluster.out:
				batch = append(batch, string(b))
			default:
				break more
			}
		}
		_, err := e.store.pool.Exec(e.ctx, `SELECT pg_notify('`+channel+`', p) FROM unnest($1::text[]) WITH ORDINALITY AS n(p, i) ORDER BY i`, batch)
		if err != nil && !errors.Is(err, context.Canceled) {
			e.log.Warn("live updates to other processes", "err", err)
		}
	}
}
