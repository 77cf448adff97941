package labs

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/store"
)

// Fair shares: besides the server-wide limits, one client address holds at
// most a share of each (simulated requests in flight, labs), so that no
// single address can take the room. The address is the web layer's (the
// connection's, or a trusted proxy's word on it); it rides in the
// request's context down to where the shares are counted. Work that
// carries none (the lab's own, a test's) is bounded by the server-wide
// limits alone.

// clientKey is the context key of the client address.
type clientKey struct{}

// WithClient returns ctx carrying the client address that the work done
// with it is for.
func WithClient(ctx context.Context, addr string) context.Context {
	if addr == "" {
		return ctx
	}
	return context.WithValue(ctx, clientKey{}, addr)
}

// ClientOf is the client address ctx carries, or "" when it carries none.
func ClientOf(ctx context.Context) string {
	addr, _ := ctx.Value(clientKey{}).(string)
	return addr
}

// owners names the client that made a lab, in the labs' owner column, by a
// keyed hash of its address: enough to count a client's labs, never the
// address itself. The key is random per start and never leaves memory: the
// database alone does not tell whose labs are whose, not even by trying
// every address. (A lab made before a restart counts toward -max-labs, not
// toward its maker's share.)
type owners struct {
	key  []byte
	most int           // labs one owner may hold
	idle time.Duration // how long an untouched lab lives, for the refusal's words
	wait time.Duration // Retry-After of a refusal: labs idle out at the sweeps
}

func newOwners(cfg Config) owners {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand)
	return owners{key: key, most: cfg.LabsPerAddress, idle: cfg.LabIdle, wait: cfg.SweepEvery}
}

// of is the owner of the labs made for ctx's client, or nil (NULL) when it
// carries none.
func (o owners) of(ctx context.Context) *string {
	addr := ClientOf(ctx)
	if addr == "" {
		return nil
	}
	m := hmac.New(sha256.New, o.key)
	m.Write([]byte(addr))
	s := base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
	return &s
}

// check refuses a lab of the kind to an owner that holds its share of labs
// already: those it made that still exist, private or building. A
// comparison's labs are not counted: they are its own for a moment only.
// It counts in the writing transaction, under the owner's lock (on
// PostgreSQL, where writes run side by side), so two labs made at once by
// one owner cannot both pass the last place.
func (o owners) check(tx *store.Tx, owner *string, kind string) error {
	if owner == nil || (kind != KindPrivate && kind != KindBuilding) {
		return nil
	}
	if err := tx.LockKey("owner " + *owner); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow(`SELECT COUNT(*) FROM labs WHERE owner = ? AND kind IN (?, ?)`, *owner, KindPrivate, KindBuilding).Scan(&n); err != nil {
		return err
	}
	if n >= o.most {
		return sim.Limited("labs-per-address", o.wait, "labs-per-address", o.most, int(o.idle.Hours()))
	}
	return nil
}

// shares counts what each client address holds of a limit, against the
// share one address may hold. An address that holds nothing is forgotten:
// the map holds no more addresses than there are holders of the limit.
type shares struct {
	max  int64
	mu   sync.Mutex
	held map[string]int64
}

func newShares(most int64) *shares { return &shares{max: most, held: map[string]int64{}} }

// take takes n of the addr's share, all or none; an empty addr has no
// share, and takes freely.
func (s *shares) take(addr string, n int64) bool {
	if addr == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[addr]+n > s.max {
		return false
	}
	s.held[addr] += n
	return true
}

// force takes n of the addr's share even past it.
func (s *shares) force(addr string, n int64) {
	if addr == "" {
		return
	}
	s.mu.Lock()
	s.held[addr] += n
	s.mu.Unlock()
}

// give gives n back to the addr's share.
func (s *shares) give(addr string, n int64) {
	if addr == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[addr] -= n; s.held[addr] <= 0 {
		delete(s.held, addr)
	}
}

// holding is how many addresses hold part of the limit now.
func (s *shares) holding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}
