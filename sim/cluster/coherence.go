package cluster

import (
	"sync/atomic"
	"time"
)

// atomicUntil is a time (since epoch) read without a lock.
type atomicUntil struct{ v atomic.Int64 }

func (u *atomicUntil) after(now time.Duration) bool { return time.Duration(u.v.Load()) > now }
func (u *atomicUntil) set(t time.Duration)          { u.v.Store(int64(t)) }

// distrust ends this process's trust in its memory at once.
func (h *coherence) distrust() { h.trust.set(0) }

// ownBeat brings in this process's beat n, heard back: everything committed
// before it has been brought in, so its memory may be trusted until
// trustFor after the beat was sent, unless it is stale.
func (h *coherence) ownBeat(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.beats[n%int64(len(h.beats))]
	now := h.now()
	if b.n == n && !h.stale {
		h.trust.set(b.at + trustFor)
	}
	for id, p := range h.peers { // those silent for longer than the trust are not waited for
		if p.beat+trustFor+drift < now {
			delete(h.peers, id)
		}
	}
	for k, o := range h.own {
		if o.at+2*(trustFor+drift) < now {
			delete(h.own, k)
		}
	}
}

// ownNotice brings in this process's notice n, heard back.
func (h *coherence) ownNotice(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pos++
	h.own[n] = heardAt{pos: h.pos, at: h.now()}
	h.moveLocked()
}

// peerBeat brings in another process's beat.
func (h *coherence) peerBeat(from string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.peers[from]
	if !ok {
		p = &peer{first: h.pos}
		h.peers[from] = p
	}
	p.beat = h.now()
}

// peerAck brings in another process's acknowledgement of this one's notice.
func (h *coherence) peerAck(from string, a ack) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o, ok := h.own[a.N]
	p := h.peers[from]
	if !ok || p == nil || o.pos <= p.acked {
		return
	}
	p.acked = o.pos
	h.moveLocked()
}

// acknowledge sends the acknowledgement of another's notice, once brought
// in; one that does not fit waits out the trust instead.
func (h *coherence) acknowledge(to string, n int64) {
	select {
	case h.acks <- ack{To: to, N: n}:
	default:
	}
}

// setStale marks what this process keeps as not to be trusted (true: a
// notice or a start-over could not be brought in) or trusted again (false:
// a start-over succeeded).
func (h *coherence) setStale(stale bool) {
	if stale {
		h.distrust()
	}
	h.mu.Lock()
	h.stale = stale
	h.mu.Unlock()
}

func (h *coherence) isStale() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stale
}

// mayRetry reports whether a stale process may try to start over now: at
// most once a second.
func (h *coherence) mayRetry() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if now < h.retried+time.Second {
		return false
	}
	h.retried = now
	return true
}
