package sim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// DemoLab is the id of the lab that always exists and everyone shares.
const DemoLab = "demo"

// NewLabID returns an unguessable lab id: 128 random bits, URL-safe.
func NewLabID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidLabID reports whether id has the shape of a lab id, so that
// malformed ids are refused without touching the database.
func ValidLabID(id string) bool {
	if id == DemoLab {
		return true
	}
	if len(id) != 22 {
		return false
	}
	var b [16]byte // decoded in place: a lab's id is checked on every request
	_, err := base64.RawURLEncoding.Decode(b[:], []byte(id))
	return err == nil
}

// NewToken returns 96 random bits, hex-encoded: who holds a claim, an
// operation's id, a process's name.
func NewToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// LessonState is where a lab is in its lesson: which one (0 for none),
// whether it has been set up, and the number of the next step, from 0.
type LessonState struct {
	N     int
	Ready bool
	Next  int
}

// The states of a key, as the keys panel and the API name them.
const (
	KeyInFlight = "in-flight" // replay: claimed, the first request still running (or dead)
	KeyDone     = "done"      // replay: the answer is stored
	KeyExpired  = "expired"   // past its TTL: the next request with it is new
	KeyUnique   = "unique"    // unique, on-conflict: the payment's own column, for ever
	KeySet      = "set"       // set-nx: SET in the key-value store
)

// Where an idempotency key lives.
const (
	StoreSQLite   = "sqlite"   // the lab's database, a SQLite file
	StorePostgres = "postgres" // the lab's database, PostgreSQL (shared by every process on it)
	StoreRedis    = "redis"
)

// KeyInfo is one idempotency key of a lab: where it lives, in what state,
// and how long it has left (TTL nil: for ever).
type KeyInfo struct {
	Key, Store, State string
	TTL               *time.Duration
	Lock              *time.Duration // in flight: how long until another request may take it over
}

// MaxClockAdvance is the most one move of a lab's clock may take, in
// seconds: longer than any key's TTL (30 days).
const MaxClockAdvance = 365 * 24 * 60 * 60

// MaxClockYears and MaxClockOffset bound how far ahead of the process's a
// lab's clock may run in all, in years and seconds: far past any key's
// TTL, and far below where a time.Duration of nanoseconds wraps round
// (292 years), so that no time the lab computes from it overflows.
const (
	MaxClockYears  = 100
	MaxClockOffset = MaxClockYears * MaxClockAdvance
)
