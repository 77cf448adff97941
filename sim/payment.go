package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Payment is one row of a lab's ledger.
type Payment struct {
	ID             int64     `json:"id"`
	OrderID        string    `json:"order_id"`
	Amount         int64     `json:"amount"`
	IdempotencyKey *string   `json:"idempotency_key"`
	CreatedAt      time.Time `json:"created_at"`
}

// Charge is one charge request as the server received it.
type Charge struct {
	OrderID string
	Amount  int64
	Key     *string // nil when the request carried no Idempotency-Key
	// Direct is set for a request sent straight to the API, not by the
	// lab's own client: a scenario replays it, and the report names it.
	Direct bool
}

// Body is the canonical JSON body of the charge, the same bytes whoever
// builds it: what the client sends and what the "hash" key strategy and the
// replay fingerprint hash.
func (c Charge) Body() []byte { return c.appendBody(nil) }

// appendBody appends the canonical body to b.
func (c Charge) appendBody(b []byte) []byte {
	b = strconv.AppendQuote(append(b, `{"order_id":`...), c.OrderID)
	b = strconv.AppendInt(append(b, `,"amount":`...), c.Amount, 10)
	return append(b, '}')
}

// Fingerprint is the SHA-256 of the canonical body, hex-encoded.
func (c Charge) Fingerprint() string {
	var buf [160]byte // the usual body, built and hashed without the heap
	sum := sha256.Sum256(c.appendBody(buf[:0]))
	var h [64]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

// KeyText is the charge's key as an answer may repeat it: clipped, or ""
// when it has none.
func (c Charge) KeyText() string {
	if c.Key == nil {
		return ""
	}
	return Clip(*c.Key)
}

// Stored is an answer kept in an idempotency record, replayed byte for byte.
type Stored struct {
	Status      int
	Body        []byte
	Location    string
	ContentType string
}

// Totals are a lab's counts, kept in the transaction of every change: what
// they cost to read does not grow with the lab.
type Totals struct {
	Payments    int64 // in the ledger
	Total       int64 // their sum
	Doubled     int64 // orders charged more than once
	Overcharged int64 // of those, orders charged more often than bought
}

// DoubleCharge is an order charged more than once.
type DoubleCharge struct {
	OrderID string
	Times   int   // charges of the order
	Extra   int64 // what was charged beyond the first charge
	// Purchases is how many operations the lab's client started for the
	// order: each is a purchase the customer meant. 0 when the charges came
	// straight to the API, not through the client.
	Purchases int
}

// Order is one order of the lab's resource, set by PUT and removed by
// DELETE: a resource whose methods are idempotent by contract.
type Order struct {
	OrderID   string    `json:"order_id"`
	Amount    int64     `json:"amount"`
	UpdatedAt time.Time `json:"updated_at"`
}
