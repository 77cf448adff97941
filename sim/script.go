package sim

import (
	"context"
	"fmt"
)

// Step is one action of a fault script, as a person (or the API) does it.
type Step struct {
	Action  string // "charge" (a new purchase), "retry" (the latest operation again)
	Fate    Fate   // of the step's first attempt; "" for the lab's network setting
	WithKey bool   // retry: with the operation's key
}

// Script is a sequence of steps, run in order against one lab.
type Script struct {
	OrderID string
	Amount  int64
	Steps   []Step
	// Purchases is how many charges the steps mean to make: what a correct
	// server ends with. Fewer is a purchase wrongly refused; more, a double charge.
	Purchases int64
}

// DefaultScript is the article's case, then a legitimate second purchase:
// the answer is lost, the client retries twice, then the customer buys the
// same thing again.
func DefaultScript() Script {
	return Script{OrderID: "order-42", Amount: 1500, Purchases: 2, Steps: []Step{
		{Action: "charge", Fate: FateResponseLost},
		{Action: "retry", Fate: FateOK, WithKey: true},
		{Action: "retry", Fate: FateOK, WithKey: true},
		{Action: "charge", Fate: FateOK},
	}}
}

// RunScript runs the script's steps in the lab, in order.
func (e *Engine) RunScript(ctx context.Context, l *Lab, s Script) error {
	for i, st := range s.Steps {
		var err error
		switch st.Action {
		case "charge":
			_, err = e.StartOperation(ctx, l, OperationRequest{OrderID: s.OrderID, Amount: s.Amount, Fate: st.Fate})
		case "retry":
			_, err = e.Retry(ctx, l, LatestOperation, st.WithKey, st.Fate)
		default:
			err = Invalid(Broke(fmt.Sprintf("steps[%d].action", i), "one-of", quoted([]string{"charge", "retry"})))
		}
		if err != nil {
			return fmt.Errorf("script step %d (%s): %w", i+1, st.Action, err)
		}
	}
	return nil
}
