package web_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"idemlab/sim"
)

// validChargeBody tells whether body is a valid charge by the spec: one JSON
// object with a valid order_id and amount and nothing else, which every
// JSON reader reads alike (RFC 7493: UTF-8, each name once; and the names
// exactly these two, not in another case).
func validChargeBody(body []byte) (sim.Charge, bool) {
	if !jsontext.Value(body).IsValid() {
		return sim.Charge{}, false
	}
	var names map[string]json.RawMessage
	if json.Unmarshal(body, &names) == nil {
		for n := range names {
			if n != "order_id" && n != "amount" {
				return sim.Charge{}, false
			}
		}
	}
	var b struct {
		OrderID *string `json:"order_id"`
		Amount  *int64  `json:"amount"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || b.OrderID == nil || b.Amount == nil {
		return sim.Charge{}, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return sim.Charge{}, false
	}
	c := sim.Charge{OrderID: *b.OrderID, Amount: *b.Amount}
	return c, c.Validate() == nil
}

// sendable reports whether Go's client will send v as a header value.
func sendable(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// FuzzCharge sends arbitrary bodies and keys to the charge endpoint of a lab
// under replay: never a 5xx; a 201 only for a valid charge with a valid key,
// a new payment only for a key not seen before; nothing written otherwise.
func FuzzCharge(f *testing.F) {
	for _, c := range badCases {
		if (c.path == "" || c.path == "{lab}/charges") && c.method == "" && c.build == nil && len(c.body) < 1024 {
			k := badKey
			if c.headers != nil {
				k = ""
				for i := 0; i+1 < len(c.headers); i += 2 {
					if c.headers[i] == "Idempotency-Key" {
						k = c.headers[i+1]
					}
				}
			}
			f.Add([]byte(c.body), k)
		}
	}
	f.Add([]byte(validCharge), "fuzz-1")
	f.Add([]byte(`{"amount":1500,"order_id":"order-42"}`), "fuzz-1")
	f.Add([]byte(`{"order_id":"order-43","amount":1}`), `"fuzz-1"`)
	f.Add([]byte(`{"Order_ID":"order-42","AMOUNT":1500}`), " fuzz-2 ")
	f.Add([]byte(`{"order_id":"order-44","amount":1500,"amount":2}`), "fuzz-3")
	f.Add([]byte("{\"order_id\":\"order-\xc3\",\"amount\":1500}"), "fuzz-4")

	s := startServer(f)
	prefix := s.newLab(`{"protection":"replay"}`)
	var mu sync.Mutex
	seen := map[string]string{} // key → canonical body of its first charge
	f.Fuzz(func(t *testing.T, body []byte, k string) {
		if !sendable(k) {
			t.Skip("Go's client refuses to send this header value")
		}
		mu.Lock()
		defer mu.Unlock()
		ts := *s
		ts.tb = t
		count := ts.ledger(prefix).Count
		var r response
		if k == "" {
			r = ts.do("POST", prefix+"/charges", string(body))
		} else {
			r = ts.do("POST", prefix+"/charges", string(body), "Idempotency-Key", k)
		}
		after := ts.ledger(prefix).Count
		if r.Status >= 500 {
			t.Fatalf("5xx: %d\n%s", r.Status, r.Body)
		}
		if r.Status >= 300 && after != count {
			t.Fatalf("status %d, but the ledger went from %d to %d payments", r.Status, count, after)
		}
		if r.Status >= 400 {
			checkProblem(t, r, r.Status, mustType(t, r), "")
		}
		ch, valid := validChargeBody(body)
		parsed, keyErr := sim.ParseKey(strings.Trim(k, " \t"))
		keyOK := k != "" && keyErr == nil
		if r.Status == http.StatusCreated && !(valid && keyOK) {
			t.Fatalf("201 for an invalid charge (body valid %v, key valid %v)\n%s", valid, keyOK, r.Body)
		}
		if !valid || !keyOK {
			if r.Status < 400 || r.Status >= 500 {
				t.Fatalf("status %d for an invalid charge (body valid %v, key valid %v)\n%s", r.Status, valid, keyOK, r.Body)
			}
			return
		}
		switch first, ok := seen[parsed]; {
		case !ok:
			if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" || after != count+1 {
				t.Fatalf("a new key: status %d, replayed %q, payments %d → %d\n%s", r.Status, r.Header.Get("Idempotent-Replayed"), count, after, r.Body)
			}
			seen[parsed] = string(ch.Body())
		case first == string(ch.Body()):
			if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" || after != count {
				t.Fatalf("a repeated key and body: status %d, replayed %q, payments %d → %d\n%s", r.Status, r.Header.Get("Idempotent-Replayed"), count, after, r.Body)
			}
		default:
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("a repeated key with another body: status %d, want 422\n%s", r.Status, r.Body)
			}
		}
	})
}

func mustType(t testing.TB, r response) string {
	t.Helper()
	var p problemBody
	json.Unmarshal(r.Body, &p)
	return p.Type
}
