package sim

import (
	"slices"
	"time"
)

// Operation is one intent of the client, "charge order-42 1500 ₽", with every
// attempt it made.
type Operation struct {
	ID          string      `json:"id"`
	Seq         int         `json:"seq"` // the operation's number in the lab, from 1
	OrderID     string      `json:"order_id"`
	Amount      int64       `json:"amount"`
	Method      string      `json:"method"` // POST charges; PUT and DELETE set and remove the order
	KeyStrategy KeyStrategy `json:"key_strategy"`
	Key         *string     `json:"key"` // the key fixed for the operation (uuid), if any
	CreatedAt   time.Time   `json:"created_at"`
	Attempts    []Attempt   `json:"attempts"`
}

// Attempt is one HTTP request of an operation through the simulated network.
type Attempt struct {
	N          int        `json:"n"`
	Key        *string    `json:"key"`
	Fate       Fate       `json:"fate"`
	Status     int        `json:"status"` // what the client saw; 0 when no answer reached it
	Error      *string    `json:"error"`
	Outcome    Outcome    `json:"outcome"`    // what the server did (the first copy, for a duplicate)
	Deliveries []Delivery `json:"deliveries"` // every copy the server answered
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// Delivery is what became of one copy of a request the network passed on:
// the server's answer, as the network saw it go by, or why it never got one.
type Delivery struct {
	Copy    int     `json:"copy"` // 1, or 2 for the second copy of a duplicate
	Status  int     `json:"status"`
	Outcome Outcome `json:"outcome"`
	Error   string  `json:"error,omitempty"` // the server could not be reached
}

// OperationRequest starts an operation.
type OperationRequest struct {
	OrderID string
	Amount  int64
	Fate    Fate   // of the first attempt; "" for the lab's network setting
	Method  string // POST (the default: a charge), PUT or DELETE (the order)
}

// The methods of an operation, as HTTP spells them.
const (
	MethodPost   = "POST"
	MethodPut    = "PUT"
	MethodDelete = "DELETE"
)

// Methods lists the methods an operation may have.
var Methods = []string{MethodPost, MethodPut, MethodDelete}

// LatestOperation is an alias of the newest operation of a lab, wherever an
// operation id is expected: "retry the latest operation" needs no id.
const LatestOperation = "latest"

// MaxRace is the most attempts a race sends at once.
const MaxRace = 64

// Check refuses a request whose fields break their rules: the charge's
// fields first, then the fate, then the method. A DELETE needs no amount
// (0); given one, it is checked as a charge's.
func (r OperationRequest) Check() error {
	if r.Method == MethodDelete && r.Amount == 0 {
		if f, bad := orderIDProblem(r.OrderID); bad {
			return Invalid(f)
		}
	} else if err := (Charge{OrderID: r.OrderID, Amount: r.Amount}).Validate(); err != nil {
		return err
	}
	if err := CheckFate(r.Fate); err != nil {
		return err
	}
	if r.Method != "" && !slices.Contains(Methods, r.Method) {
		return Invalid(Broke("method", "one-of", quoted(Methods)))
	}
	return nil
}

// ValidFate reports whether f may be asked of the network for one attempt.
func ValidFate(f Fate) bool { return slices.Contains(fateChoices(), string(f)) }

// fateChoices are the fates one may ask for: each fate, or random.
func fateChoices() []string { return append(Names(Fates), string(FateRandom)) }

// CheckFate refuses a fate asked for an attempt unless it is one ("" asks
// for the lab's network setting).
func CheckFate(f Fate) error {
	if f != "" && !ValidFate(f) {
		return Invalid(Broke("fate", "one-of", quoted(fateChoices())))
	}
	return nil
}

// Copies is how many copies of a request the fate sends to the server.
func (f Fate) Copies() int {
	switch f {
	case FateRequestLost:
		return 0
	case FateDuplicate:
		return 2
	}
	return 1
}

// CopiesAtMost is how many copies of a request a fate may send: what an
// attempt reserves of the in-flight limit.
func (f Fate) CopiesAtMost() int {
	if f == FateRandom {
		return 2
	}
	return f.Copies()
}
