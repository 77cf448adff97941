package ledger

import (
	"context"
	"errors"
	"time"

	"idemlab/sim"
	"idemlab/sim/keys"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// setNX is protection "set-nx": the key is taken in the key-value store with
// one atomic command, SET idem:{lab}:{key} <fingerprint> NX PX <key_ttl_s>,
// then the payment is inserted in the ledger: two stores, two steps. A key
// already there is a duplicate; no key guards nothing.
//
// Two steps can fail apart, and the server tells the truth about each: a
// SET that Redis did not answer in time may land later, and a charge that
// failed after its SET holds a key it must not keep. In both cases the key
// is given back (deleted only while it holds this attempt's value), now or,
// while Redis does not answer, as soon as it does and before any retry with
// the key: so "nothing was charged, try again" is true. Only a crash
// (server_fault crash-after-guard), or a COMMIT whose fate is not known,
// leaves the key behind.
type setNX struct{ g *Ledger }

func (x setNX) charge(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error) {
	if c.Key == nil {
		return plain(x).charge(ctx, l, c, s)
	}
	if x.g.KV == nil {
		return Result{}, sim.Unavailable(sim.PartKV, 10*time.Second, "kv-down")
	}
	if err := at(ctx, sim.PointSetNX, nil); err != nil {
		return Result{}, err
	}
	hold, err := x.g.KV.Take(ctx, l.ID, *c.Key, c.Fingerprint(), time.Duration(s.KeyTTLS)*time.Second, x.g.Clock.Now())
	did(ctx, sim.PointSetNX, "SET idem:{lab}:{key} {fingerprint} NX PX {key_ttl}", setResult(hold, err))
	switch {
	case errors.Is(err, keys.ErrUnknown):
		x.g.gaveBack(l, c, sim.GiveBackOwed)
		return Result{}, sim.Unavailable(sim.PartKV, 5*time.Second, "kv-unknown")
	case errors.Is(err, keys.ErrOwedFull):
		return Result{}, sim.Unavailable(sim.PartKV, 5*time.Second, "kv-owed-full")
	case err != nil:
		return Result{}, sim.Unavailable(sim.PartKV, 5*time.Second, "kv-down")
	case hold == nil:
		if c.Direct {
			x.g.toldDone(ctx, l, c)
		}
		return duplicate(), nil
	}
	res, err := plain(x).charge(ctx, l, c, s)
	if err == nil || sim.ErrorCode(err) == sim.ECrashed || x.g.commitUnknown(err) {
		hold.Keep() // the payment, or the lost charge of a crash, or a COMMIT not known
		return res, err
	}
	// The server knows the charge did not happen: it gives the key back,
	// so that the retry charges.
	if hold.GiveBack(ctx) {
		x.g.gaveBack(l, c, sim.GaveBack)
	} else {
		x.g.gaveBack(l, c, sim.GiveBackOwed)
	}
	return res, err
}

// toldDone counts a charge sent straight to the API and told "already
// done" against its order when no payment carries its key: the lost-charge
// alert then names it, as it names the lab's client's (whose attempts count
// themselves). Should the first request with the key still be at work, its
// payment clears the alert as it commits.
func (g *Ledger) toldDone(ctx context.Context, l *labs.Lab, c sim.Charge) {
	var n int
	if err := g.checkKey.QueryRow(ctx, l.ID, *c.Key).Scan(&n); err != nil || n > 0 {
		return // paid, or not known: no alert
	}
	_, err := g.Store.Exec(ctx, `
INSERT INTO order_stats (lab_id, order_id, told_done) VALUES (?, ?, 1)
ON CONFLICT (lab_id, order_id) DO UPDATE SET told_done = order_stats.told_done + 1`, l.ID, c.OrderID)
	if err != nil && !store.IsGone(err) {
		g.Log.Warn("set-nx: count a lost charge", "lab", l.ID, "order", c.OrderID, "err", err)
	}
}

// gaveBack tells the lab what became of the key of a charge that did not
// happen.
func (g *Ledger) gaveBack(l *labs.Lab, c sim.Charge, what sim.GiveBack) {
	g.Bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventGiveBack, Key: c.Key, OrderID: c.OrderID, GiveBack: what})
}

// setResult is what SET NX did.
func setResult(hold *keys.Hold, err error) sim.StepResult {
	switch {
	case err != nil:
		return failed(err)
	case hold == nil:
		return sim.StepResult{Code: sim.StepExists}
	}
	return sim.StepResult{Code: sim.StepSet}
}
