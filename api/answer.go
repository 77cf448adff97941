package api

import (
	"encoding/json"

	"idemlab/sim"
)

// Charged is the answer to a charge that wrote a new payment: 201, the
// payment, and its address. The replay guard stores these very bytes.
func Charged(lab string, p sim.Payment) sim.Stored {
	b, _ := json.Marshal(p) // a plain struct: it always marshals
	return sim.Stored{Status: StatusOf(sim.OutcomeCharged), Body: b, Location: PaymentPath(lab, p.ID), ContentType: ContentJSON}
}

// Duplicate is the answer to a key already seen, under the protections that
// do not store answers: no new charge, and not the first answer either.
func Duplicate(key *string) sim.Stored {
	b, _ := json.Marshal(struct {
		Status string  `json:"status"`
		Key    *string `json:"idempotency_key"`
		Detail string  `json:"detail"`
	}{"duplicate", key, "A charge with this key was already made; no new charge."})
	return sim.Stored{Status: StatusOf(sim.OutcomeDuplicate), Body: b, ContentType: ContentJSON}
}
