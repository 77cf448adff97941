// Package cluster makes several processes on one PostgreSQL database one
// lab: what one process does, the others hear of, on the channel idemlab
// (NOTIFY). What makes the others' memory stale (a reset, new settings, a
// moved clock) is told inside the transaction that makes it (Tx.Notify),
// so it reaches them if, and as soon as, that transaction commits; the
// live events (charges, attempts, …) go out after their commit, small (an
// operation without its attempts), since the pages that hear them re-read
// the lab from the database anyway. A process that hears a notice brings
// what it keeps of the lab up to date and passes the event to its own
// subscribers. A process that may have missed a notice (its listening
// connection broke, a notice it could not read, another process that lost
// events on their way out) drops everything it keeps of the labs and reads
// it afresh. On SQLite there is one process, and none of this runs.
package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
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

// listenerName is the application_name of the listening connection, as
// pg_stat_activity shows it.
const listenerName = "idemlab listener"

// notifyMax is the most a notice may weigh: PostgreSQL refuses a payload
// of 8000 bytes or more. A bigger event goes out bare (its lab and kind);
// the pages that hear it re-read the lab anyway.
const notifyMax = 7000

// notice is an event on the wire, and the process it came from; or
// several, in order (Evs: the live events sent together, as many as a
// notice may weigh); or a process's hello, when it starts listening,
// which carries no event.
type notice struct {
	From  string      `json:"from"`
	N     int64       `json:"n,omitempty"`    // Ev's number, when it was told inside its transaction: to acknowledge (spread.go)
	Beat  int64       `json:"beat,omitempty"` // a beat (spread.go)
	Ack   *ack        `json:"ack,omitempty"`  // an acknowledgement (spread.go)
	Ev    *sim.Event  `json:"ev,omitempty"`
	Evs   []sim.Event `json:"evs,omitempty"`
	Hello bool        `json:"hello,omitempty"`
}

// Config is what a Cluster depends on.
type Config struct {
	Store *store.Store
	Bus   *events.Bus
	Clock clock.Clock
	Log   *slog.Logger
	DB    *outage.Watch // the database's outages, logged once each; nil: each failure logged
	// Heard brings what this process keeps up to date with an event of
	// another, before the event goes to the bus's subscribers; an event of
	// kind sim.EventStartOver means: drop everything kept, read it afresh.
	// An error (the database did not answer) means it could not: this
	// process trusts nothing it keeps until a start-over succeeds.
	Heard func(ctx context.Context, ev sim.Event) error
	// Gather is how long the first live event to go out waits for others
	// to go with it (send); 0: gatherFor.
	Gather time.Duration
}

// Cluster is a process's part in the others' live updates.
type Cluster struct {
	Config
	id  string      // this process, to know its own notices
	own string      // how each of its own notices begins (encode)
	sub *events.Sub // this process's events, on their way out
	// others is whether another process listens, or has: this process's
	// live events go out only then (send). It is known at the start (the
	// listeners on the database) and from any notice of another heard,
	// such as the hello each process sends when it starts listening.
	others atomic.Bool

	in *inbox     // what the listener heard, until it is brought in (take)
	co *coherence // when this process trusts its memory, and what the others heard (spread.go)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start listens on the channel (before it returns: nothing another process
// does after this one has started goes unheard), has the store's writing
// transactions tell what they are told to inside them, and starts the
// goroutines that hear and send notices. On SQLite it returns nil: there is
// nobody else to hear.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if !cfg.Store.Postgres() {
		return nil, nil
	}
	c := &Cluster{Config: cfg, id: cfg.Store.Process(), in: newInbox(), co: newCoherence()}
	if c.Gather == 0 {
		c.Gather = gatherFor
	}
	c.own = `{"from":"` + c.id + `"`
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	pg := cfg.Store.Pool().Config().ConnConfig.Copy()
	pg.RuntimeParams["application_name"] = listenerName
	conn, err := listenOn(ctx, pg)
	if err != nil {
		c.cancel()
		return nil, err
	}
	if err := c.greet(ctx, conn); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		c.cancel()
		return nil, err
	}
	c.listening(ctx)
	c.sub = cfg.Bus.Subscribe(outgoing)
	cfg.Store.Announce(channel, c.encode, c.spread)
	c.spawn(func() { c.listen(conn, pg) })
	c.spawn(c.take)
	c.spawn(c.send)
	c.spawn(c.beats)
	return c, nil
}

// Close stops hearing and sending; nil closes nothing. The store's
// transactions go on telling the others what they change, as long as it
// writes.
func (c *Cluster) Close() {
	if c == nil {
		return
	}
	c.cancel()
	c.sub.Close()
	c.wg.Wait()
}

// greet learns, on the listening connection, whether another process
// listens already, and says hello to those that do, so that they send
// their live events from now on. A process that starts alone sends none
// (nobody would hear them) until it hears of another.
func (c *Cluster) greet(ctx context.Context, conn *pgx.Conn) error {
	var n int
	err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()`, listenerName).Scan(&n)
	if err != nil {
		return err
	}
	c.others.Store(n > 0)
	hello, _ := json.Marshal(notice{From: c.id, Hello: true})
	_, err = conn.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, string(hello))
	return err
}

func (c *Cluster) spawn(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// toldInTx reports whether events of the kind are told inside the
// transaction that makes them (store.Tx.Notify), not after it: they make
// what the other processes keep stale. The sender leaves them out.
func toldInTx(k sim.EventKind) bool {
	switch k {
	case sim.EventReset, sim.EventSettings, sim.EventClock, sim.EventGone:
		return true
	}
	return false
}

// encode is the notice of a local event (Tx.Notify's), numbered n.
func (c *Cluster) encode(ev sim.Event, n int64) string {
	return c.own + `,"n":` + strconv.FormatInt(n, 10) + `,"ev":` + string(c.event(ev)) + "}"
}

// event is a local event as a notice carries it: without an operation's
// attempts, and bare (its lab and kind) when it would weigh more than a
// notice may.
func (c *Cluster) event(ev sim.Event) []byte {
	if ev.At.IsZero() {
		ev.At = c.Clock.Now()
	}
	if op := ev.Operation; op != nil && op.Attempts != nil {
		bare := *op
		bare.Attempts = nil
		ev.Operation = &bare
	}
	b, ok := appendCharge(make([]byte, 0, 384), &ev)
	var err error
	if !ok {
		b, err = json.Marshal(ev)
	}
	if err != nil || len(b) > notifyMax-len(c.own)-16 {
		b, _ = json.Marshal(sim.Event{Lab: ev.Lab, Kind: ev.Kind, At: ev.At})
	}
	return b
}
