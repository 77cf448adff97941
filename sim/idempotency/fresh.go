package idempotency

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// freshWait bounds one read of the labs' generations: past it the answer is
// not trusted, and the request goes the database's way.
const freshWait = 5 * time.Second

// fresh reads the labs' reset generations and clocks as the database has
// them now, for the answers the cache keeps (PostgreSQL only). Another
// process may have reset a lab a moment ago, and this one not heard of it
// yet: its notice still on the way, its listener cut. An answer kept under
// a generation is replayed only when a read that began after the request
// came finds that generation still the lab's, so no replay comes from
// before a reset, whatever this process has heard.
//
// The reads are shared: a request that comes while one runs waits for the
// next, which reads every lab its requests ask about in one statement. A
// busy process reads the database about once per round trip, not once
// per replay, and a replay still needs neither the writer nor its record.
type fresh struct {
	pool *pgxpool.Pool

	mu   sync.Mutex
	busy bool   // a read runs
	next *round // the read the requests that come now wait for; nil: none yet
}

// round is one read, shared by the requests that wait for it.
type round struct {
	labs []string
	lead chan struct{} // tells the round's first request to run it
	done chan struct{} // closed once read
	got  map[string]labNow
	err  error
}

// labNow is a lab's reset generation and clock as the database has them.
type labNow struct{ gen, clockMS int64 }

// now returns the lab as a statement that began after the call finds it
// (found false: there is no such lab).
func (f *fresh) now(lab string) (n labNow, found bool, err error) {
	f.mu.Lock()
	r := f.next
	first := r == nil
	if first {
		r = &round{lead: make(chan struct{}, 1), done: make(chan struct{})}
		f.next = r
	}
	if !slices.Contains(r.labs, lab) {
		r.labs = append(r.labs, lab)
	}
	run := first && !f.busy
	if run {
		f.busy, f.next = true, nil
	}
	f.mu.Unlock()
	if first && !run {
		<-r.lead // the read before has ended: this round's turn
		run = true
	}
	if run {
		f.run(r)
	}
	<-r.done
	n, found = r.got[lab]
	return n, found, r.err
}

// run reads r's labs, then hands over to the round that gathered
// meanwhile, if any.
func (f *fresh) run(r *round) {
	r.got, r.err = f.read(r.labs)
	close(r.done)
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.next; n != nil {
		f.next = nil
		n.lead <- struct{}{}
		return
	}
	f.busy = false
}

// read reads the labs' generations and clocks in one statement.
func (f *fresh) read(labs []string) (map[string]labNow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), freshWait)
	defer cancel()
	var arg any = labs
	query := `SELECT id, gen, clock_ms FROM labs WHERE id = ANY($1)`
	if len(labs) == 1 { // the usual case, and cheaper without the array
		arg, query = labs[0], `SELECT id, gen, clock_ms FROM labs WHERE id = $1`
	}
	rows, err := f.pool.Query(ctx, query, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	got := make(map[string]labNow, len(labs))
	for rows.Next() {
		var (
			id string
			n  labNow
		)
		if err := rows.Scan(&id, &n.gen, &n.clockMS); err != nil {
			return nil, err
		}
		got[id] = n
	}
	return got, rows.Err()
}

// current reports whether the answer the cache keeps for c may be replayed:
// on SQLite always (one process, which hears its own changes as it makes
// them). On PostgreSQL, when this process trusts what it keeps (another
// process that reset the lab or moved its clock waited, before it
// answered, until this one had heard it: cluster's spread), when the lab
// as this process keeps it, read after the trust, is still at the
// generation c took (and, for the charges, whose records expire by the
// lab's clock, at the clock c took); without the trust, when the
// database, read now, says so. Otherwise, or when the database does not
// answer, the request goes the database's way.
func (r *Records) current(c *Claim) bool {
	if r.fresh == nil {
		return true
	}
	if t := r.trusted.Load(); t != nil && (*t)() {
		return c.l.Gen() == c.gen && (c.scope != ScopeCharges || c.l.Clock() == c.skew)
	}
	n, found, err := r.fresh.now(c.lab)
	return err == nil && found && n.gen == c.gen &&
		(c.scope != ScopeCharges || n.clockMS == c.skew.Milliseconds())
}

// Trust has the cache's answers replayed without reading the database
// while trusted reports true (PostgreSQL: the cluster's Trusted).
func (r *Records) Trust(trusted func() bool) { r.trusted.Store(&trusted) }
