package compare

import (
	"context"
	"fmt"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/labs"
)

// MailCell is one lab of the second grid: a consumer's deduplication and a
// delivery fate, and the emails two purchases of one order left in the
// mailbox.
type MailCell struct {
	Dedup    sim.ConsumerDedup `json:"consumer_dedup"`
	Delivery sim.MessageFate   `json:"delivery"`
	// Scenario rebuilds the cell's lab, as a Cell's does.
	Scenario  string `json:"scenario,omitempty"`
	Emails    int64  `json:"emails"`
	Purchases int64  `json:"purchases"`
	// Cause: right (an email per purchase), double (more: a delivery or a
	// copy sent one again), silenced (fewer: the second, real purchase was
	// taken for a repeat).
	Cause string `json:"cause"`
}

// CauseSilenced is the cause of a second grid's cell with fewer emails than
// purchases (CauseRight and CauseDouble too).
const CauseSilenced = "silenced"

// mailScript is the second grid's script: the order bought twice, each
// purchase charged once, its "order placed" email through the queue.
var mailScript = sim.Script{OrderID: "order-42", Amount: 1500, Purchases: 2, Steps: []sim.Step{
	{Action: "charge", Fate: sim.FateOK},
	{Action: "charge", Fate: sim.FateOK},
}}

// mailGrid runs the second grid: every consumer deduplication × every
// delivery fate, when the server has its broker and its mailbox.
func (cs *Comparisons) mailGrid(ctx context.Context) ([]MailCell, error) {
	if !cs.notify.Queues() || !cs.notify.Mails() {
		return nil, nil
	}
	var cells []MailCell
	for _, d := range sim.ConsumerDedups {
		for _, f := range sim.MessageFates {
			cells = append(cells, MailCell{Dedup: d, Delivery: f, Purchases: mailScript.Purchases})
		}
	}
	return cells, eachAtOnce(len(cells), func(i int) error { return cs.mailCell(ctx, &cells[i]) })
}

// ackWait is the broker's ack wait in the second grid's labs: short, so
// that a crash's redelivery comes soon.
const ackWait = 100

func (cs *Comparisons) mailCell(ctx context.Context, c *MailCell) error {
	s := sim.DefaultSettings()
	s.Network, s.Retry.Mode = sim.FateOK, sim.RetryManual
	s.Notify, s.ConsumerDedup, s.Delivery, s.AckWaitMS = sim.NotifyQueue, c.Dedup, c.Delivery, ackWait
	l, err := cs.labs.Create(ctx, labs.KindCompare, s)
	if err != nil {
		return err
	}
	defer cs.remove(ctx, l)
	if err := cs.client.RunScript(ctx, l, mailScript); err != nil {
		return err
	}
	if c.Emails, err = cs.settled(ctx, l, ackWait*time.Millisecond); err != nil {
		return err
	}
	if c.Scenario, err = cs.scenario(ctx, l); err != nil {
		return err
	}
	switch {
	case c.Emails == c.Purchases:
		c.Cause = CauseRight
	case c.Emails > c.Purchases:
		c.Cause = CauseDouble
	default:
		c.Cause = CauseSilenced
	}
	return nil
}

// settled waits until every message of the lab was delivered and
// acknowledged and its emails sent, the mailbox standing still for a few
// ack waits (a redelivery to come would have come); it returns the
// mailbox's count then.
func (cs *Comparisons) settled(ctx context.Context, l *labs.Lab, wait time.Duration) (int64, error) {
	deadline := cs.clock.Now().Add(30 * time.Second)
	last, still := int64(-1), cs.clock.Now()
	for {
		open, emails, err := cs.notify.Unsettled(ctx, l)
		if err != nil {
			return 0, err
		}
		now := cs.clock.Now()
		if open > 0 || emails != last {
			last, still = emails, now
		} else if now.Sub(still) >= 3*wait {
			return emails, nil
		}
		if now.After(deadline) {
			return 0, fmt.Errorf("compare: the queue of %s did not settle", l.ID)
		}
		if err := clock.Sleep(ctx, cs.clock, 20*time.Millisecond); err != nil {
			return 0, err
		}
	}
}
