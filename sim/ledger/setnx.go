package ledger

import (
	"context"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// setNX is protection "set-nx": the key is taken in the key-value store with
// one atomic command, SET idem:{lab}:{key} <fingerprint> NX PX <key_ttl_s>,
// then the payment is inserted in the ledger: two stores, two steps. A key
// already there is a duplicate; no key guards nothing.
type setNX struct{ g *Ledger }

func (x setNX) charge(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error) {
	if c.Key != nil {
		if x.g.KV == nil {
			return Result{}, sim.Busy("kv", 10*time.Second, "kv-down")
		}
		taken, err := x.g.KV.SetNX(ctx, l.ID, *c.Key, c.Fingerprint(), time.Duration(s.KeyTTLS)*time.Second, x.g.Clock.Now())
		if err != nil {
			x.g.Log.Warn("set-nx", "lab", l.ID, "err", err)
			return Result{}, sim.Busy("kv", 5*time.Second, "kv-down")
		}
		if !taken {
			return duplicate(), nil
		}
	}
	res, err := plain(x).charge(ctx, l, c, s)
	if err != nil && c.Key != nil && sim.ErrorCode(err) != sim.ECrashed {
		// The server knows the charge did not happen: it gives the key
		// back, so that the retry charges. Only a crash leaves it behind.
		if gerr := x.g.KV.GiveBack(ctx, l.ID, *c.Key, c.Fingerprint()); gerr != nil {
			x.g.Log.Warn("set-nx: give the key back", "lab", l.ID, "key", c.KeyText(), "err", gerr)
		}
	}
	return res, err
}
