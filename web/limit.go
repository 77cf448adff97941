package web

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// Rate limits one kind of costly request per client address: a token
// bucket of Burst requests at once, refilled with one every Every.
type Rate struct {
	Every time.Duration
	Burst int
}

// String says r in words: "30 at once, then 30 a minute".
func (r Rate) String() string {
	switch {
	case r.Every <= time.Minute && time.Minute%r.Every == 0:
		return fmt.Sprintf("%d at once, then %d a minute", r.Burst, time.Minute/r.Every)
	case r.Every%time.Hour == 0:
		return fmt.Sprintf("%d at once, then one every %d h", r.Burst, r.Every/time.Hour)
	case r.Every%time.Minute == 0:
		return fmt.Sprintf("%d at once, then one every %d min", r.Burst, r.Every/time.Minute)
	}
	return fmt.Sprintf("%d at once, then one every %g s", r.Burst, r.Every.Seconds())
}

// off reports whether r limits nothing: a negative Burst turns a limit off.
func (r Rate) off() bool { return r.Burst < 0 }

// orDefault is r, or d when r is the zero Rate.
func (r Rate) orDefault(d Rate) Rate {
	if r == (Rate{}) {
		return d
	}
	if r.Every <= 0 {
		r.Every = d.Every
	}
	return r
}

// maxBuckets is how many addresses a limit tracks at once.
const maxBuckets = 100_000

// limiter keeps a token bucket (golang.org/x/time/rate) per client address.
// A bucket untouched for as long as it takes to fill up again is the same
// as a new one, so it is dropped: memory follows the addresses active in
// the last minute or so, never every address ever seen.
type limiter struct {
	name  string // the limit's name in the problem body: lab-rate, …
	what  string // what is limited, for the problem's detail
	r     Rate
	now   func() time.Time
	limit int // buckets at most

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens *rate.Limiter
	seen   time.Time
}

func newLimiter(name, what string, r Rate, now func() time.Time) *limiter {
	return &limiter{name: name, what: what, r: r, now: now, limit: maxBuckets, buckets: map[string]*bucket{}}
}

// idle is how long an untouched bucket takes to fill up again.
func (l *limiter) idle() time.Duration { return time.Duration(l.r.Burst) * l.r.Every }

// allow takes a token from the bucket of key, or says how long until one
// is there.
func (l *limiter) allow(key string) (ok bool, wait time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= l.idle() {
		l.sweep(now)
	}
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.limit {
			l.sweep(now)
		}
		if len(l.buckets) >= l.limit { // that many addresses in a minute: an attack; new ones wait
			return false, l.r.Every
		}
		b = &bucket{tokens: rate.NewLimiter(rate.Every(l.r.Every), l.r.Burst)}
		l.buckets[key] = b
	}
	b.seen = now
	if b.tokens.AllowN(now, 1) {
		return true, 0
	}
	return false, time.Duration((1 - b.tokens.TokensAt(now)) * float64(l.r.Every))
}

// sweep drops the buckets that have filled up again, into a new map: a Go
// map keeps its size after deletes.
func (l *limiter) sweep(now time.Time) {
	l.swept = now
	kept := make(map[string]*bucket, len(l.buckets)/2)
	for k, b := range l.buckets {
		if now.Sub(b.seen) < l.idle() {
			kept[k] = b
		}
	}
	l.buckets = kept
}

// size is how many addresses the limiter holds.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// middleware refuses a request whose address has no token left with 429
// and Retry-After. The address is the client's (clientOf): the
// connection's, or a trusted proxy's word on it.
func (l *limiter) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	if l.r.off() {
		return next
	}
	return func(c echo.Context) error {
		if err := l.take(clientOf(c), "this address"); err != nil {
			return err
		}
		return next(c)
	}
}

// take takes a token from the bucket of key (from whom: "this address"),
// or refuses with 429 and Retry-After; a limit that is off takes none.
func (l *limiter) take(key, from string) error {
	if l.r.off() {
		return nil
	}
	if ok, wait := l.allow(key); !ok {
		p := newProblem(probRateLimited, fmt.Sprintf("Too many %s from %s: %s.", l.what, from, l.r))
		p.Limit = l.name
		p.retryAfter = retrySeconds(wait)
		return p
	}
	return nil
}

// clientKey is the bucket of an address: an IPv4 address, or the /64 of an
// IPv6 one (a single host is usually given a whole /64).
func clientKey(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil {
		return addr
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
