package idempotency

import (
	"container/list"
	"sync"

	"idemlab/sim"
)

// maxAnswers is how many finished records the cache keeps, across all labs.
const maxAnswers = 8192

// cache keeps the finished idempotency records lately written or read, in
// memory, least recently used first out, so that a replay (or a 422 for
// another body) is answered without the writer. Each is kept under the
// lab's reset generation: a reset bumps it, and what was kept before it is
// never found again in this process; in another on the same database, a
// replay first checks the generation it kept against the database's
// (Records.current), so not even before that process hears of the reset.
// A record not here is found by the writer's claim.
type cache struct {
	mu sync.Mutex
	ll list.List // of *answer, the most recently used at the front
	m  map[recordKey]*list.Element
}

// recordKey names a record as of one generation of its lab.
type recordKey struct {
	lab        string
	gen        int64
	scope, key string
}

// answer is a finished record: the request's fingerprint, when it expires
// (unix ms, by the lab's clock), and the answer to send again.
type answer struct {
	k           recordKey
	fingerprint string
	expiresAt   int64
	stored      sim.Stored
}

// get returns the record of k unless it is unknown or expired at now.
func (c *cache) get(k recordKey, now int64) (answer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[k]
	if !ok {
		return answer{}, false
	}
	ans := el.Value.(*answer)
	if ans.expiresAt <= now {
		c.ll.Remove(el)
		delete(c.m, k)
		return answer{}, false
	}
	c.ll.MoveToFront(el)
	return *ans, true
}

// put keeps a finished record, which must be committed.
func (c *cache) put(ans answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[recordKey]*list.Element{}
	}
	if el, ok := c.m[ans.k]; ok {
		el.Value = &ans
		c.ll.MoveToFront(el)
		return
	}
	c.m[ans.k] = c.ll.PushFront(&ans)
	for c.ll.Len() > maxAnswers {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*answer).k)
	}
}

// forget drops every record of the lab: it was reset, removed, its clock
// moved, it left memory, or it may be stale (another process changed it
// unheard).
func (c *cache) forget(lab string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.ll.Front(); el != nil; {
		next := el.Next()
		if ans := el.Value.(*answer); ans.k.lab == lab {
			c.ll.Remove(el)
			delete(c.m, ans.k)
		}
		el = next
	}
}
