package cluster

import (
	"context"
	"strconv"
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
		c.listening(c.ctx)
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
			c.hearOwn(n.Payload[len(c.own):])
			continue
		}
		msg, err := readNotice(n.Payload)
		if err != nil {
			c.Log.Warn("live updates from other processes: an unreadable notice; what this process keeps is read afresh", "err", err)
			c.startOver()
			continue
		}
		if msg.From == c.id {
			continue
		}
		c.others.Store(true)
		switch {
		case msg.Beat > 0:
			c.in.put(item{from: msg.From, beat: msg.Beat})
		case msg.Ack != nil:
			if msg.Ack.To == c.id {
				c.in.put(item{from: msg.From, ack: msg.Ack})
			}
		case msg.Ev != nil:
			c.in.put(item{ev: msg.Ev, from: msg.From, told: msg.N})
		}
		for i := range msg.Evs {
			c.in.put(item{ev: &msg.Evs[i], from: msg.From})
		}
	}
}

// hearOwn takes this process's own notice, past its "from": a notice told
// inside a transaction, or a beat, is a mark to bring in in its turn (its
// number comes first); its live events and acknowledgements, told
// already, are not worth decoding.
func (c *Cluster) hearOwn(rest string) {
	mark := func(prefix string) int64 {
		if !strings.HasPrefix(rest, prefix) {
			return 0
		}
		digits := rest[len(prefix):]
		if i := strings.IndexAny(digits, ",}"); i >= 0 {
			digits = digits[:i]
		}
		n, _ := strconv.ParseInt(digits, 10, 64)
		return n
	}
	if n := mark(`,"n":`); n > 0 {
		c.in.put(item{own: true, told: n})
	} else if n := mark(`,"beat":`); n > 0 {
		c.in.put(item{own: true, beat: n})
	}
}

// startOver has this process drop everything it keeps of the labs and read
// it afresh, in its turn among the notices heard; its pages re-read too.
// Until then it trusts nothing it keeps.
func (c *Cluster) startOver() {
	c.co.distrust()
	c.in.put(item{ev: &sim.Event{Kind: sim.EventStartOver}})
}

// take brings in what the listener heard, in order, until the cluster
// closes: it brings this process up to date with each event of another
// and passes it on to this process's subscribers, and the marks of
// coherence to spread's books.
func (c *Cluster) take() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.in.wake:
		}
		for _, it := range c.in.take() {
			c.bring(it)
		}
	}
}

// bring brings in one item heard.
func (c *Cluster) bring(it item) {
	switch {
	case it.own && it.told > 0:
		c.co.ownNotice(it.told)
	case it.own && it.beat > 0:
		if c.co.isStale() {
			c.retry()
		}
		c.co.ownBeat(it.beat)
	case it.beat > 0:
		c.co.peerBeat(it.from)
	case it.ack != nil:
		c.co.peerAck(it.from, *it.ack)
	case it.ev != nil:
		ev := *it.ev
		startOver := ev.Kind == sim.EventStartOver
		if startOver {
			c.co.distrust()
		}
		err := c.Heard(c.ctx, ev)
		switch {
		case err != nil:
			c.co.setStale(true)
		case startOver:
			c.co.setStale(false)
		case it.told > 0:
			c.co.acknowledge(it.from, it.told)
		}
		ev.Remote = true
		c.Bus.Publish(ev)
	}
}

// retry starts over, for a process whose memory is stale, at most once a
// second.
func (c *Cluster) retry() {
	if !c.co.mayRetry() {
		return
	}
	if c.Heard(c.ctx, sim.Event{Kind: sim.EventStartOver}) == nil {
		c.co.setStale(false)
	}
}
