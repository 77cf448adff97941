package scenario

import (
	"context"
	"fmt"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/orders"
)

// Open builds a new private lab of the opener's own from the scenario,
// replaying its actions in order on its base settings, and returns it only
// once it is whole. A rebuild that is refused half-way (a bad action), or
// whose opener hangs up, leaves no lab behind: the lab is of kind
// "building", unseen by the housekeeping and removed at the next start if
// the server dies meanwhile, until it is done.
func (sc *Scenarios) Open(ctx context.Context, s sim.Scenario) (*labs.Lab, error) {
	l, err := sc.labs.Create(ctx, labs.KindBuilding, s.Base)
	if err != nil {
		return nil, err
	}
	built := func() error {
		for i, a := range s.Actions {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := sc.Play(ctx, l, a); err != nil {
				return fmt.Errorf("action %d: %w", i+1, err)
			}
		}
		return sc.labs.Finish(ctx, l)
	}()
	if built != nil {
		if err := sc.labs.Remove(context.WithoutCancel(ctx), l.ID); err != nil && sim.ErrorCode(err) != sim.ENotFound {
			sc.log.Warn("remove a scenario's half-built lab", "lab", l.ID, "err", err)
		}
		return nil, built
	}
	return l, nil
}

// Play takes one action in the lab, as a person (or the API) would: the
// scenario's links and the lessons' steps alike.
func (sc *Scenarios) Play(ctx context.Context, l *labs.Lab, a sim.Action) error {
	switch a.Kind {
	case "settings":
		if a.Settings == nil {
			return sim.Invalid(sim.Broke("settings", "required"))
		}
		_, err := sc.labs.UpdateSettings(ctx, l, *a.Settings)
		return err
	case "charge":
		_, err := sc.client.Start(ctx, l, sim.OperationRequest{OrderID: a.OrderID, Amount: a.Amount, Fate: a.Fate, Method: a.Method})
		return err
	case "clock":
		_, err := sc.keys.Advance(ctx, l, int64(a.N))
		return err
	case "direct":
		return sc.direct(ctx, l, a)
	case "stepped":
		_, err := sc.races.Start(ctx, l, a.OrderID, a.Amount, a.N)
		return err
	case "step":
		return sc.step(ctx, l, a)
	case "storm": // run to its end: the step's outcome is the storm's
		if a.Storm == nil {
			return sim.Invalid(sim.Broke("storm", "required"))
		}
		_, err := sc.storms.Run(ctx, l, *a.Storm)
		return err
	case "retry", "race":
		id, err := sc.client.OperationID(ctx, l, a.Op)
		if err != nil {
			return err
		}
		if a.Kind == "race" {
			_, err = sc.client.Race(ctx, l, id, a.N)
			return err
		}
		withKey := a.WithKey == nil || *a.WithKey
		_, err = sc.client.Retry(ctx, l, id, withKey, a.Fate)
		return err
	}
	return sim.Invalid(sim.Broke("kind", "action", sim.Clip(a.Kind)))
}

// direct takes again what was sent straight to the API: a charge, or a PUT
// or DELETE of an order. Each is recorded again, so the new lab's own link
// rebuilds it too. A DELETE that finds no order leaves the state it meant
// to: absent.
func (sc *Scenarios) direct(ctx context.Context, l *labs.Lab, a sim.Action) error {
	switch a.Method {
	case "", sim.MethodPost:
		_, err := sc.ledger.Charge(ctx, l, sim.Charge{OrderID: a.OrderID, Amount: a.Amount, Key: a.Key, Direct: true})
		return err
	case sim.MethodPut:
		_, _, err := sc.orders.Put(ctx, l, orders.Direct, a.OrderID, a.Amount)
		return err
	case sim.MethodDelete:
		if err := sc.orders.Delete(ctx, l, orders.Direct, a.OrderID); err != nil && sim.ErrorCode(err) != sim.ENotFound {
			return err
		}
		return nil
	}
	return sim.Invalid(sim.Broke("method", "one-of", fmt.Sprintf("%q, %q, %q", sim.MethodPost, sim.MethodPut, sim.MethodDelete)))
}

// step takes a step of the lab's stepped race: a racer's (To: "" its next
// point, "end" to its answer), every racer's at once (To "run"), or its
// abort (To "abort"). The race must be there: a step of a race that is
// not is refused.
func (sc *Scenarios) step(ctx context.Context, l *labs.Lab, a sim.Action) error {
	race, ok := sc.races.Latest(l)
	if !ok {
		return sim.Errorf(sim.ENotFound, "no-stepped-race", "")
	}
	var err error
	switch a.To {
	case "run":
		_, err = sc.races.Run(ctx, l, race.ID)
	case "abort":
		_, err = sc.races.Abort(ctx, l, race.ID)
	default:
		_, err = sc.races.Step(ctx, l, race.ID, a.Racer, a.To)
	}
	return err
}
