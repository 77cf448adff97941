package client

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	mrand "math/rand/v2"

	"github.com/google/uuid"

	"idemlab/sim"
)

// draws is the lab's randomness for one attempt of an operation (n), or for
// the operation itself (n = 0), put to one use: a source keyed by the lab's
// seed and the numbers, so that what is drawn never depends on which process
// draws it, in what order, or on what the lab drew before. The same seed and
// the same actions give the same keys, fates and backoffs.
func draws(seed int64, seq, n int, use string) *mrand.ChaCha8 {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], uint64(seed))
	binary.LittleEndian.PutUint64(key[8:], uint64(seq))
	binary.LittleEndian.PutUint64(key[16:], uint64(n))
	copy(key[24:], use)
	return mrand.NewChaCha8(key)
}

// The uses of draws.
const (
	drawKey     = "key"
	drawFate    = "fate"
	drawBackoff = "backoff"
)

// newUUID is a random UUID from src.
func newUUID(src *mrand.ChaCha8) string {
	return uuid.Must(uuid.NewRandomFromReader(src)).String()
}

// keyFor returns the Idempotency-Key the client sends with attempt n of op,
// by the operation's key strategy; nil when it sends none.
func keyFor(seed int64, op *sim.Operation, n int, withKey bool) *string {
	if !withKey {
		return nil
	}
	switch op.KeyStrategy {
	case sim.KeyUUID:
		return op.Key
	case sim.KeyUUIDPerRequest:
		k := newUUID(draws(seed, op.Seq, n, drawKey))
		return &k
	case sim.KeyNatural:
		k := op.OrderID
		return &k
	case sim.KeyHash:
		sum := sha256.Sum256(sim.Charge{OrderID: op.OrderID, Amount: op.Amount}.Body())
		k := hex.EncodeToString(sum[:])
		return &k
	}
	return nil
}

// fateOf is the fate of attempt n of op under the network setting f.
func fateOf(seed int64, op *sim.Operation, n int, f sim.Fate) sim.Fate {
	if f != sim.FateRandom {
		return f
	}
	// ok 40% of the time, each failure 15%
	if x := mrand.New(draws(seed, op.Seq, n, drawFate)).IntN(20); x < 8 {
		return sim.FateOK
	} else {
		return sim.Fates[1+(x-8)/3]
	}
}
