package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// The fingerprint is the SHA-256 of the canonical body, whatever the order
// id holds: quotes, escapes, letters of any script, or more than the
// buffer it is built in.
func TestFingerprintHashesTheBody(t *testing.T) {
	for _, c := range []Charge{
		{OrderID: "order-1", Amount: 100},
		{OrderID: `say "hi"\ now`, Amount: 1},
		{OrderID: "заказ-№7 \u2028 \x01", Amount: 9_999_999},
		{OrderID: strings.Repeat("long-", 60), Amount: 42},
		{OrderID: "", Amount: -5},
	} {
		sum := sha256.Sum256(c.Body())
		if got, want := c.Fingerprint(), hex.EncodeToString(sum[:]); got != want {
			t.Errorf("Fingerprint of %q = %s, want %s (the body's hash)", c.OrderID, got, want)
		}
	}
}
