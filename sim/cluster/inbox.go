package cluster

import (
	"sync"

	"idemlab/sim"
)

// item is one thing the listener heard, to be brought in in its turn
// (take): another process's event, or a mark of the coherence of what
// this process keeps (spread.go): its own notice or beat come back, another
// process's beat, or its acknowledgement of one of this process's notices.
type item struct {
	ev   *sim.Event // another process's event, or a start-over
	from string     // the process it came from (another's)
	told int64      // ev's number, to acknowledge once brought in; own: this process's notice heard
	beat int64      // a beat: this process's own, or another's (from)
	ack  *ack       // another's acknowledgement of this process's notice
	own  bool
}

// inbox holds what the listener heard until take brings it in: the
// listener reads on while take handles an item, and more than incoming
// waiting is not skipped silently but replaced by a start-over.
type inbox struct {
	mu    sync.Mutex
	items []item
	lost  int           // items dropped by overflows
	wake  chan struct{} // has something
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

func (b *inbox) put(it item) {
	b.mu.Lock()
	if len(b.items) >= incoming {
		b.lost += len(b.items)
		b.items = append(b.items[:0], item{ev: &sim.Event{Kind: sim.EventStartOver}})
	}
	b.items = append(b.items, it)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take returns what waits, in order.
func (b *inbox) take() []item {
	b.mu.Lock()
	defer b.mu.Unlock()
	its := b.items
	b.items = nil
	return its
}

// Lost is how many items overflows dropped.
func (b *inbox) Lost() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lost
}
