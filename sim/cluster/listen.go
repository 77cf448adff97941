package cluster

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/store"
)

// incoming is how many notices heard wait to be brought in at most: past
// it the process starts over instead of missing them.
const incoming = 1024

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
// its connection breaks, a notice may have been lost with it: the process
// starts over at once (what it keeps may be stale already), connects
// again, and starts over once more as soon as it listens (what changed
// meanwhile passed unheard).
func (c *Cluster) listen(conn *pgx.Conn, cfg *pgx.ConnConfig) {
	for {
		err := c.hear(conn)
		conn.Close(context.Background())
		if c.ctx.Err() != nil {
			return
		}
		const means = "live updates from other processes: the connection broke; what this process keeps is read afresh"
		if store.IsUnavailable(err) && c.DB != nil {
			c.DB.Failed(err, means)
		} else {
			c.Log.Warn(means, "err", err)
		}
		c.startOver()
		for {
			if clock.Sleep(c.ctx, c.Clock, time.Second) != nil {
				return
			}
			if conn, err = listenOn(c.ctx, cfg); err == nil {
				break
			}
		}
		c.startOver()
	}
}

// hear takes the notices of one connection until it fails. A notice it
// cannot read is a notice missed: the process starts over.
func (c *Cluster) hear(conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(c.ctx)
		if err != nil {
			return err
		}
		if strings.HasPrefix(n.Payload, c.own) {
			continue // this process's own, told already: not worth decoding
		}
		var msg notice
		if err := json.Unmarshal([]byte(n.Payload), &msg); err != nil {
			c.Log.Warn("live updates from other processes: an unreadable notice; what this process keeps is read afresh", "err", err)
			c.startOver()
			continue
		}
		if msg.From == c.id {
			continue
		}
		c.others.Store(true)
		if msg.Ev != nil {
			c.in.Publish(*msg.Ev)
		}
		for _, ev := range msg.Evs {
			c.in.Publish(ev)
		}
	}
}

// startOver has this process drop everything it keeps of the labs and read
// it afresh, in its turn among the notices heard; its pages re-read too.
func (c *Cluster) startOver() { c.in.Publish(sim.Event{Kind: sim.EventStartOver}) }

// take brings in what the listener heard, in order, until the cluster
// closes: it brings this process up to date with each event of another
// and passes it on to this process's subscribers.
func (c *Cluster) take() {
	for ev := range c.inSub.Events() {
		c.Heard(c.ctx, ev)
		ev.Remote = true
		c.Bus.Publish(ev)
	}
}
