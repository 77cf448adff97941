package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MailCell is one lab of the second grid: a consumer's deduplication and a
// delivery fate, and the emails two purchases of one order left in the
// mailbox.
type MailCell struct {
	Dedup     ConsumerDedup `json:"consumer_dedup"`
	Delivery  MessageFate   `json:"delivery"`
	Lab       string        `json:"lab"`
	Emails    int64         `json:"emails"`
	Purchases int64         `json:"purchases"`
	// Cause: right (an email per purchase), double (more: a delivery or a
	// copy sent one again), silenced (fewer: the second, real purchase was
	// taken for a repeat).
	Cause string `json:"cause"`
}

// The causes of the second grid's cells (CauseRight and CauseDouble too).
const CauseSilenced = "silenced"

// mailScript is the second grid's script: the order bought twice, each
// purchase charged once, its "order placed" email through the queue.
var mailScript = Script{OrderID: "order-42", Amount: 1500, Purchases: 2, Steps: []Step{
	{Action: "charge", Fate: FateOK},
	{Action: "charge", Fate: FateOK},
}}

// compareMail runs the second grid: every consumer deduplication × every
// delivery fate, when the engine has its broker and its mailbox.
func (e *Engine) compareMail(ctx context.Context) ([]MailCell, error) {
	if e.broker == nil || e.mailAddr == "" {
		return nil, nil
	}
	var cells []MailCell
	for _, d := range ConsumerDedups {
		for _, f := range MessageFates {
			cells = append(cells, MailCell{Dedup: d, Delivery: f, Purchases: mailScript.Purchases})
		}
	}
	return cells, eachAtOnce(len(cells), func(i int) error { return e.compareMailCell(ctx, &cells[i]) })
}

// compareAckWait is the broker's ack wait in the second grid's labs: short,
// so that a crash's redelivery comes soon.
const compareAckWait = 100

func (e *Engine) compareMailCell(ctx context.Context, c *MailCell) error {
	s := DefaultSettings()
	s.Network, s.Retry.Mode = FateOK, RetryManual
	s.Notify, s.ConsumerDedup, s.Delivery, s.AckWaitMS = NotifyQueue, c.Dedup, c.Delivery, compareAckWait
	l, err := e.createLab(ctx, kindCompare, s)
	if err != nil {
		return err
	}
	c.Lab = l.ID
	if err := e.RunScript(ctx, l, mailScript); err != nil {
		return err
	}
	if c.Emails, err = e.settled(ctx, l, compareAckWait*time.Millisecond); err != nil {
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
func (e *Engine) settled(ctx context.Context, l *Lab, ackWait time.Duration) (int64, error) {
	deadline := time.Now().Add(30 * time.Second)
	var last int64 = -1
	still := time.Now()
	for {
		var open, emails int64
		err := e.store.r.QueryRowContext(ctx, `
SELECT (SELECT COUNT(*) FROM messages m WHERE m.lab_id = ?1 AND NOT EXISTS (
            SELECT 1 FROM message_deliveries d WHERE d.lab_id = m.lab_id AND d.message_id = m.id AND d.outcome <> 'crashed'))
     + (SELECT COUNT(*) FROM email_outbox WHERE lab_id = ?1 AND sent = 0),
       COALESCE((SELECT emails FROM mail_counts WHERE lab_id = ?1), 0)`, l.ID).Scan(&open, &emails)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("compare: mailbox of %s: %w", l.ID, err)
		}
		if open > 0 || emails != last {
			last, still = emails, time.Now()
		} else if time.Since(still) >= 3*ackWait {
			return emails, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("compare: the queue of %s did not settle", l.ID)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
