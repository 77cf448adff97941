package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"idemlab/sim/mail"
)

// The mailbox: the emails a lab's server sends (from the email outbox, over
// real SMTP) and what its mailbox receives. The words of an email are the
// views' (Config.Email), in the lab's language.

// Addresses of the lab's mail.
const (
	ShopAddress     = "shop@idemlab.test"
	CustomerAddress = "customer@idemlab.test"
)

// Email is one email the lab's mailbox received.
type Email struct {
	N          int64     `json:"id"`
	To         string    `json:"to"`
	Subject    string    `json:"subject"`
	OrderID    string    `json:"order_id"`
	MessageID  *string   `json:"message_id"`
	ReceivedAt time.Time `json:"received_at"`
}

// outboxEmail is an email of the outbox, as its sender needs it.
type outboxEmail struct {
	lab, id, orderID string
	amount           int64
	message          sql.NullString // the broker message behind it, if any
}

// queueEmail writes an email to send into the outbox, in tx, for the
// payment and the broker message ("" for none) behind it, claimed by its
// writer, who sends it once tx commits.
func (e *Engine) queueEmail(ctx context.Context, tx *sql.Tx, lab, orderID string, amount, payment int64, messageID string) (outboxEmail, error) {
	em := outboxEmail{lab: lab, id: "mail-" + NewLabID(), orderID: orderID, amount: amount,
		message: sql.NullString{String: messageID, Valid: messageID != ""}}
	_, err := in(ctx, tx, e.store.q.insertEmail).ExecContext(ctx, lab, em.id, orderID, amount, payment, em.message, e.now().UnixMilli(), e.stamp())
	return em, err
}

// claimTime is how long a sender holds an email of the outbox before
// another may send it: longer than a send may take.
const claimTime = 30 * time.Second

// sendEmail claims an email of the outbox that its writer left unsent and
// sends it: the mailer's sweep. The claim keeps two senders from sending it
// both.
func (e *Engine) sendEmail(ctx context.Context, lab, id string) error {
	now := e.now().UnixMilli()
	em := outboxEmail{lab: lab, id: id}
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `UPDATE email_outbox SET claimed_at = ?1
WHERE lab_id = ?2 AND id = ?3 AND sent = 0 AND claimed_at <= ?4 RETURNING order_id, amount, message_id`,
			now, lab, id, now-claimTime.Milliseconds()).Scan(&em.orderID, &em.amount, &em.message)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil // sent, or being sent
	}
	if err != nil {
		return err
	}
	return e.sendClaimed(ctx, em)
}

// sendClaimed sends an email of the outbox that the caller holds (it wrote
// it, or claimed it) over SMTP. The lab's own mailbox marks it sent as it
// receives it; an external server's acceptance marks it here.
func (e *Engine) sendClaimed(ctx context.Context, em outboxEmail) error {
	if e.mailAddr == "" {
		return nil
	}
	lab, id, orderID, msgID := em.lab, em.id, em.orderID, em.message
	l, err := e.Lab(ctx, lab)
	if err != nil {
		return err
	}
	lang := l.Settings().Language
	subject, body := lang, ""
	if e.cfg.Email != nil {
		subject, body = e.cfg.Email(lang, orderID, em.amount)
	}
	headers := map[string]string{"X-Idemlab-Lab": lab, "X-Idemlab-Order": orderID}
	if msgID.Valid {
		headers["X-Idemlab-Message"] = msgID.String
	}
	m := mail.Message{From: ShopAddress, To: CustomerAddress, Subject: subject, Body: body, MessageID: id, Headers: headers}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := mail.Send(sctx, e.mailAddr, m); err != nil {
		return fmt.Errorf("mail: send %s: %w", id, err)
	}
	if e.mailExternal { // no mailbox of ours hears it: record what was sent
		return e.receive(ctx, lab, id, CustomerAddress, subject, orderID, msgID)
	}
	return nil
}

// sendUnsent sends what the outbox still holds: at the start, what a crash
// left between the commit and the send; then every few seconds, what a
// mailbox that was down refused.
func (e *Engine) sendUnsent(ctx context.Context) error {
	rows, err := e.store.r.QueryContext(ctx, `SELECT lab_id, id FROM email_outbox WHERE sent = 0 AND claimed_at <= ? ORDER BY created_at LIMIT 100`,
		e.now().Add(-claimTime).UnixMilli())
	if err != nil {
		return err
	}
	type one struct{ lab, id string }
	var unsent []one
	for rows.Next() {
		var o one
		if err := rows.Scan(&o.lab, &o.id); err != nil {
			rows.Close()
			return err
		}
		unsent = append(unsent, o)
	}
	rows.Close()
	for _, o := range unsent {
		if err := e.sendEmail(ctx, o.lab, o.id); err != nil && ErrorCode(err) != ENotFound {
			return err
		}
	}
	return rows.Err()
}

// ReceiveMail stores an email the lab's SMTP mailbox accepted; the lab is
// named by its X-Idemlab-Lab header. An email for no lab is refused.
func (e *Engine) ReceiveMail(ctx context.Context, r mail.Received) error {
	lab := r.Headers["X-Idemlab-Lab"]
	if !ValidLabID(lab) {
		return Errorf(ENotFound, "no-lab", clip(lab))
	}
	to := ""
	if len(r.To) > 0 {
		to = r.To[0]
	}
	var msg sql.NullString
	if v, ok := r.Headers["X-Idemlab-Message"]; ok {
		msg = sql.NullString{String: v, Valid: true}
	}
	return e.receive(ctx, lab, r.MessageID, to, r.Subject, r.Headers["X-Idemlab-Order"], msg)
}

// receive stores an email the lab's mailbox received, and marks the
// outbox's email of the same id sent, in one transaction.
func (e *Engine) receive(ctx context.Context, lab, id, to, subject, orderID string, msg sql.NullString) error {
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		if _, err := in(ctx, tx, e.store.q.receive).ExecContext(ctx, lab, clip(id), clip(to), clip(subject), clip(orderID), msg, e.stamp()); err != nil {
			return err
		}
		_, err := in(ctx, tx, e.store.q.markSent).ExecContext(ctx, lab, id)
		return err
	})
	if isGone(err) {
		return Errorf(ENotFound, "no-lab", clip(lab))
	}
	if err != nil {
		return fmt.Errorf("mailbox %s: %w", lab, err)
	}
	e.emit(Event{Lab: lab, Kind: EventEmail, OrderID: orderID, Subject: subject})
	return nil
}

// Mailbox is what a lab's mailbox holds: the newest emails, how many in
// all, and the orders that got more than one.
type Mailbox struct {
	Emails  []Email
	Count   int64
	Doubled []OrderEmails // at most 10
	More    int64         // orders doubled beyond those
}

// OrderEmails is an order and how many emails it got.
type OrderEmails struct {
	OrderID string `json:"order_id"`
	Emails  int64  `json:"emails"`
}

// Mailbox reads the lab's mailbox: at most limit emails, newest first.
func (e *Engine) Mailbox(ctx context.Context, l *Lab, limit int) (Mailbox, error) {
	var mb Mailbox
	var doubled int64
	err := e.store.r.QueryRowContext(ctx, `SELECT emails, doubled FROM mail_counts WHERE lab_id = ?`, l.ID).Scan(&mb.Count, &doubled)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return mb, err
	}
	rows, err := e.store.r.QueryContext(ctx, `SELECT n, to_addr, subject, order_id, message_id, received_at FROM emails WHERE lab_id = ? ORDER BY n DESC LIMIT ?`, l.ID, limit)
	if err != nil {
		return mb, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			m  Email
			at string
		)
		if err := rows.Scan(&m.N, &m.To, &m.Subject, &m.OrderID, &m.MessageID, &at); err != nil {
			return mb, err
		}
		m.ReceivedAt, _ = time.Parse(time.RFC3339Nano, at)
		mb.Emails = append(mb.Emails, m)
	}
	if err := rows.Err(); err != nil {
		return mb, err
	}
	if doubled > 0 {
		rows, err := e.store.r.QueryContext(ctx, `SELECT order_id, emails FROM email_stats WHERE lab_id = ? AND emails > 1 ORDER BY first_n LIMIT 10`, l.ID)
		if err != nil {
			return mb, err
		}
		defer rows.Close()
		for rows.Next() {
			var o OrderEmails
			if err := rows.Scan(&o.OrderID, &o.Emails); err != nil {
				return mb, err
			}
			mb.Doubled = append(mb.Doubled, o)
		}
		mb.More = doubled - int64(len(mb.Doubled))
	}
	return mb, rows.Err()
}

// mailer sends, every few seconds, what the outbox still holds: what a
// crash left unsent, or a mailbox that was down refused.
func (e *Engine) mailer() {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		if err := e.sendUnsent(e.ctx); err != nil && e.ctx.Err() == nil {
			e.log.Warn("mailer", "err", err)
		}
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
		}
	}
}
