package sim

import (
	"container/list"
	"sync"
)

// maxAnswers is how many finished idempotency records the engine keeps in
// memory, across all labs.
const maxAnswers = 8192

// answers keeps the finished idempotency records lately written or read,
// in memory, least recently used first out. A finished record never changes
// until it expires, so a replay (or a 422 for another body) is answered from
// here without the database; a record not here is found by the writer's
// claim, as after a restart. A lab's reset or removal forgets its records.
type answers struct {
	mu sync.Mutex
	ll list.List // of *answer, the most recently used at the front
	m  map[recordKey]*list.Element
}

type recordKey struct{ lab, scope, key string }

// answer is a finished record: the request's fingerprint, when it expires
// (unix ms), and the answer to send again.
type answer struct {
	k           recordKey
	fingerprint string
	expiresAt   int64
	stored      Stored
}

// get returns the record of k unless it is unknown or expired at now.
func (a *answers) get(k recordKey, now int64) (answer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	el, ok := a.m[k]
	if !ok {
		return answer{}, false
	}
	ans := el.Value.(*answer)
	if ans.expiresAt <= now {
		a.ll.Remove(el)
		delete(a.m, k)
		return answer{}, false
	}
	a.ll.MoveToFront(el)
	return *ans, true
}

// put keeps a finished record, which must be committed.
func (a *answers) put(ans answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[recordKey]*list.Element{}
	}
	if el, ok := a.m[ans.k]; ok {
		el.Value = &ans
		a.ll.MoveToFront(el)
		return
	}
	a.m[ans.k] = a.ll.PushFront(&ans)
	for a.ll.Len() > maxAnswers {
		old := a.ll.Back()
		a.ll.Remove(old)
		delete(a.m, old.Value.(*answer).k)
	}
}

// forget drops every record of the lab: its reset or removal deleted them.
func (a *answers) forget(lab string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for el := a.ll.Front(); el != nil; {
		next := el.Next()
		if ans := el.Value.(*answer); ans.k.lab == lab {
			a.ll.Remove(el)
			delete(a.m, ans.k)
		}
		el = next
	}
}
