package cluster

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"
)

// Coherence of what the processes keep (SPEC, "Many processes that
// survive their database"): a process answers from its memory (a replay,
// a lab's settings) without asking the database only while it trusts that
// memory, and a process that changes what the others keep (a reset, a
// moved clock: Tx.Notify) answers its caller only once each of them has
// heard the change or stopped trusting its memory. So a request that
// follows that answer, through any process, never meets what was before
// it. These are leases on the channel, as caches have them (Gray and
// Cheriton, 1989):
//
//   - Every beatEvery each process sends a beat on the channel. Hearing
//     its own beat back, in its turn, a process has brought in every notice
//     committed before the beat: it trusts its memory until trustFor after
//     it sent the beat. A broken listener, a notice it could not bring in,
//     or a start-over that failed ends the trust at once.
//   - A process that hears another's notice brings it in, then
//     acknowledges it.
//   - The process that told (spread) waits until it has heard its notice
//     back (by then it has heard the beat of each process that beat before
//     the commit), then until each process it heard beat within trustFor
//     has acknowledged it, or its last beat is trustFor old: past then,
//     that process no longer trusts what it keeps from before. A process
//     that beat first after the notice committed heard it first. Whatever
//     happens, the wait ends trustFor after the commit: by then every
//     process that did not hear it has stopped trusting its memory.
const (
	beatEvery = 100 * time.Millisecond
	trustFor  = time.Second
	// drift covers the processes' clocks running at slightly different
	// rates: the one that waits waits this much longer.
	drift = 50 * time.Millisecond
	// acks is how many acknowledgements wait to go out at most: past it
	// one is dropped, and its process waits out the trust instead.
	acks = 256
)

// unknown stands for the processes on the database when they could not
// be read: a peer that never beats, waited out like a silent one.
const unknown = "?"

// ack is a process's acknowledgement of another's notice: it has brought
// in the notice N of process To, and what To told before it.
type ack struct {
	To string `json:"to"`
	N  int64  `json:"n"`
}

// peer is another process, as this one has heard it.
type peer struct {
	beat  time.Duration // when its last beat was heard (since epoch)
	first int64         // the position among this process's notices heard when it was first heard
	acked int64         // the position of the latest of this process's notices it acknowledged
}

// coherence is a process's part in the leases.
type coherence struct {
	epoch   time.Time   // the origin of the durations below: monotonic
	trust   atomicUntil // this process trusts its memory until then
	acks    chan ack    // acknowledgements on their way out
	mu      sync.Mutex
	pos     int64 // how many of its own notices it has heard back
	own     map[int64]heardAt
	peers   map[string]*peer
	beats   [64]sentBeat  // the send times of the latest beats, by number
	stale   bool          // a notice or a start-over could not be brought in: trust nothing until one is
	retried time.Duration // when a stale process last tried to start over
	moved   chan struct{} // closed and replaced when any of the above moves
}

type heardAt struct {
	pos int64
	at  time.Duration
}

type sentBeat struct {
	n  int64
	at time.Duration
}

func newCoherence() *coherence {
	return &coherence{epoch: time.Now(), acks: make(chan ack, acks), own: map[int64]heardAt{},
		peers: map[string]*peer{}, moved: make(chan struct{})}
}

func (h *coherence) now() time.Duration { return time.Since(h.epoch) }

// moveLocked wakes those who wait on h (with h.mu held).
func (h *coherence) moveLocked() {
	close(h.moved)
	h.moved = make(chan struct{})
}

// Trusted reports whether this process may answer from what it keeps of
// the labs without asking the database: whatever another process changed
// and answered for before now, this one has brought in. Read it before
// reading what it keeps.
func (c *Cluster) Trusted() bool {
	return c != nil && c.co.trust.after(c.co.now())
}

// listening notes that the listener has begun listening (again), with the
// other processes that hold a lease now: it may have missed their beats,
// so until they acknowledge, or trustFor passes, it waits for them.
func (c *Cluster) listening(ctx context.Context) {
	h := c.co
	ids := c.members(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for _, id := range ids {
		if _, ok := h.peers[id]; !ok {
			h.peers[id] = &peer{beat: now} // as if it beat now: waited for until it acknowledges, or a trust later
		}
	}
	h.moveLocked()
}

// members are the other processes whose lease is current (none when the
// database does not answer: then it waits out the trust for all).
func (c *Cluster) members(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	rows, err := c.Store.Pool().Query(ctx, `SELECT id FROM processes WHERE id <> $1 AND lease_until > db_ms()`, c.id)
	if err != nil {
		return []string{unknown} // spread waits out the trust of whoever it may be
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	if rows.Err() != nil {
		ids = append(ids, unknown) // some unread: whoever they are
	}
	return ids
}

// spread waits until the other processes have heard this process's notice
// n, or stopped trusting their memory (see above), or ctx ends.
func (c *Cluster) spread(ctx context.Context, n int64) {
	h := c.co
	end := h.now() + trustFor + drift
	for {
		h.mu.Lock()
		wait := h.waitLocked(n, end)
		moved := h.moved
		h.mu.Unlock()
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-moved:
		case <-t.C:
		case <-ctx.Done():
		case <-c.ctx.Done():
		}
		t.Stop()
		if ctx.Err() != nil || c.ctx.Err() != nil {
			return
		}
	}
}

// waitLocked is how long spread's wait for notice n may still last, as
// things stand: 0 when it is over.
func (h *coherence) waitLocked(n int64, end time.Duration) time.Duration {
	now := h.now()
	if now >= end {
		return 0
	}
	heard, ok := h.own[n]
	if !ok {
		return end - now // not heard back yet
	}
	wait := time.Duration(0)
	for _, p := range h.peers {
		if p.first > heard.pos || p.acked >= heard.pos {
			continue // heard it before its first beat, or acknowledged it
		}
		if lapse := p.beat + trustFor + drift - now; lapse > wait {
			wait = lapse
		}
	}
	return min(wait, end-now)
}

// beats sends a beat every beatEvery, and the acknowledgements as they
// come, until the cluster closes.
func (c *Cluster) beats() {
	t := time.NewTicker(beatEvery)
	defer t.Stop()
	var n int64
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			n++
			c.co.mu.Lock()
			c.co.beats[n%int64(len(c.co.beats))] = sentBeat{n: n, at: c.co.now()}
			c.co.mu.Unlock()
			c.tell(c.own + `,"beat":` + strconv.FormatInt(n, 10) + "}")
		case a := <-c.co.acks:
			b, _ := json.Marshal(a)
			c.tell(c.own + `,"ack":` + string(b) + "}")
		}
	}
}

// tell sends one notice, bounded in time; a failure only lets the trust
// lapse (the database's outages are logged where it is written).
func (c *Cluster) tell(payload string) {
	ctx, cancel := context.WithTimeout(c.ctx, time.Second)
	defer cancel()
	if _, err := c.Store.Pool().Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil && ctx.Err() == nil {
		c.Log.Debug("live updates from other processes: a beat or an acknowledgement was not sent", "err", err)
	}
}
