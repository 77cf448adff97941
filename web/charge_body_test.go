package web

import (
	"testing"
)

// chargeBodies are bodies a charge may get: the usual ones, which the fast
// reader must take, and others, which it must leave to the strict decoder.
var chargeBodies = []struct {
	in   string
	fast bool
}{
	{`{"order_id":"order-42","amount":1500}`, true},
	{`{"amount": 1500, "order_id": "order-42"}`, true},
	{` {"order_id":"o\u0031","amount":-3} `, true},
	{`{"order_id":"order-42","amount":9007199254740991}`, true},
	{`{"order_id":"order-42","amount":9007199254740992}`, false},
	{`{"order_id":"order-42","amount":1500.0}`, false},
	{`{"order_id":"order-42","amount":1e3}`, false},
	{`{"order_id":"order-42","amount":"1500"}`, false},
	{`{"order_id":"order-42","amount":null}`, false},
	{`{"order_id":"order-42"}`, false},
	{`{"order_id":"a","amount":1,"amount":2}`, false},
	{`{"order_id":"a","order_id":"b","amount":2}`, false},
	{`{"Order_id":"a","amount":2}`, false},
	{`{"order_id":"a","amount":2,"x":1}`, false},
	{`{"order_id":"a","amount":2}{}`, false},
	{`{"order_id":"a","amount":2} x`, false},
	{`{"order_id":"a","amount":01}`, false},
	{"{\"order_id\":\"\xff\",\"amount\":2}", false},
	{`[]`, false},
	{``, false},
}

// TestFastChargeAgrees: the fast reader takes the usual bodies and leaves
// the rest, and whatever it takes, the strict decoder reads the same.
func TestFastChargeAgrees(t *testing.T) {
	for _, tc := range chargeBodies {
		var b chargeBody
		if got := fastCharge([]byte(tc.in), &b); got != tc.fast {
			t.Errorf("%s: fast %v, want %v", tc.in, got, tc.fast)
		}
		agrees(t, []byte(tc.in))
	}
}

// FuzzFastCharge: on any body the fast reader takes, the strict decoder
// succeeds with the same values.
func FuzzFastCharge(f *testing.F) {
	for _, tc := range chargeBodies {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { agrees(t, raw) })
}

func agrees(t *testing.T, raw []byte) {
	t.Helper()
	var fast, strict chargeBody
	if !fastCharge(raw, &fast) {
		if fast.OrderID != nil || fast.Amount != nil {
			t.Fatalf("%q: left to the strict decoder, but the fast reader wrote %+v", raw, fast)
		}
		return
	}
	if err := decodeBody(raw, &strict); err != nil {
		t.Fatalf("%q: the fast reader took it; the strict decoder refuses: %v", raw, err)
	}
	if strict.OrderID == nil || strict.Amount == nil || *strict.OrderID != *fast.OrderID || *strict.Amount != *fast.Amount {
		t.Fatalf("%q: fast %q %d, strict %v %v", raw, *fast.OrderID, *fast.Amount, strict.OrderID, strict.Amount)
	}
}
