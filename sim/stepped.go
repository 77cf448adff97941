package sim

import "time"

// Point is one of a protection's statements where a stepped race stops
// its racers: each racer stands before one until a person advances it.
type Point string

// The points of the protections, in the order their charges reach them.
const (
	PointSelect Point = "select" // check-then-insert's SELECT for the key
	PointSetNX  Point = "set-nx" // set-nx's SET NX in the key-value store
	PointClaim  Point = "claim"  // replay's claim of the key's record
	PointInsert Point = "insert" // the payment's INSERT (on SQLite, with its COMMIT)
	PointCharge Point = "charge" // replay's payment (on SQLite, with its answer and COMMIT)
	PointStore  Point = "store"  // replay's answer, stored in the claimed record
	PointCommit Point = "commit" // the transaction's COMMIT (PostgreSQL)
)

// What a statement of a stepped race did, as its log tells it.
const (
	StepFound      = "found"          // the SELECT found Rows payments with the key
	StepInserted   = "inserted"       // the INSERT wrote payment Payment
	StepUnique     = "unique"         // the INSERT broke the UNIQUE constraint: the key is taken
	StepSkipped    = "skipped"        // ON CONFLICT DO NOTHING: the key is taken, no row written
	StepCommitted  = "committed"      // the COMMIT made the transaction's writes visible
	StepSerialize  = "serialization"  // PostgreSQL refused the transaction: 40001
	StepClaimed    = "claimed"        // the key's record is this request's now, in flight
	StepInFlight   = "in-flight"      // another request holds the key's record: 409
	StepReplayed   = "replayed"       // the key's record holds an answer: it is sent again
	StepMismatch   = "mismatch"       // the key came first with another body: 422
	StepStored     = "stored"         // the answer is stored in the key's record
	StepSet        = "set"            // SET NX took the key
	StepExists     = "exists"         // SET NX found the key taken
	StepWaits      = "waits"          // the statement waits for a lock Racer's transaction holds
	StepRolledBack = "rolled-back"    // the racer was aborted: its transaction rolled back
	StepFailed     = "failed"         // the statement failed otherwise
	StepHungUp     = "client-hung-up" // the racer's client hung up: it was aborted
)

// StepResult is what one statement of a stepped race did.
type StepResult struct {
	Code    string `json:"result"`
	Rows    *int64 `json:"rows,omitempty"`      // StepFound: how many (0 included)
	Payment int64  `json:"payment,omitempty"`   // StepInserted
	Racer   string `json:"waits_for,omitempty"` // StepWaits: whose lock ("" another transaction's)
}

// The states of a racer.
const (
	RacerReady   = "ready"   // stopped before its next point
	RacerRunning = "running" // running a statement
	RacerWaiting = "waiting" // its statement waits for another's lock
	RacerDone    = "done"    // its request has its answer
)

// Racer is one request of a stepped race.
type Racer struct {
	Name    string    `json:"name"` // A, B, C
	Points  []Point   `json:"points"`
	At      Point     `json:"at"`   // the last point it ran ("" none yet)
	Next    Point     `json:"next"` // the point it runs when stepped ("" when done)
	State   string    `json:"state"`
	Waits   string    `json:"waits_for,omitempty"`      // RacerWaiting: whose lock
	Sees    []Payment `json:"sees"`                     // the order's payments, as its transaction sees them
	Status  int       `json:"status,omitempty"`         // the answer's HTTP status, once its client has it
	GaveUp  bool      `json:"client_gave_up,omitempty"` // its client stopped waiting without an answer
	Outcome Outcome   `json:"answer,omitempty"`         // what the server did, once done
}

// StepLog is one statement of a stepped race, as it ran.
type StepLog struct {
	Racer string `json:"racer"`
	Point Point  `json:"point"`
	SQL   string `json:"sql"`
	StepResult
}

// SteppedRace is a race whose racers a person steps, statement by
// statement: what the API and the page show of it.
type SteppedRace struct {
	ID         string     `json:"id"`
	OrderID    string     `json:"order_id"`
	Amount     int64      `json:"amount"`
	Operation  string     `json:"operation"`
	Protection Protection `json:"protection"`
	Postgres   bool       `json:"postgres"`
	Racers     []Racer    `json:"racers"`
	Log        []StepLog  `json:"log"`
	Over       bool       `json:"over"`              // every racer is done
	Aborted    string     `json:"aborted,omitempty"` // why it was aborted ("" it was not)
}

// The limits of a stepped race.
const (
	MinRacers   = 2
	MaxRacers   = 3
	SteppedIdle = 2 * time.Minute // untouched this long, a stepped race is aborted
)

// Why a stepped race was aborted.
const (
	AbortAsked = "asked"   // a person (or the API) aborted it
	AbortIdle  = "idle"    // it was untouched for SteppedIdle
	AbortReset = "reset"   // the lab was reset or removed
	AbortClose = "closing" // the server is stopping
)

// ErrStepAborted ends the charge of a racer whose race was aborted, or
// whose client hung up: its transaction rolls back, its key is given back,
// and the answer (409, Retry-After) says to try again.
var ErrStepAborted = &Error{Code: EConflict, Key: "stepped-aborted", RetryAfter: time.Second}

// Found returns the result of a SELECT that found n rows.
func Found(n int64) StepResult { return StepResult{Code: StepFound, Rows: &n} }

// RowsFound is how many rows the statement found (0 when it read none).
func (r StepResult) RowsFound() int64 {
	if r.Rows == nil {
		return 0
	}
	return *r.Rows
}
