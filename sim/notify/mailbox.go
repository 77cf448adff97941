package notify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/mail"
	"idemlab/sim/store"
)

// outbox is the email's way out: the email outbox, sent over SMTP to the
// lab's own mailbox (which records what it receives) or another server
// (whose acceptance is recorded here), and the mailer, which sends what a
// crash or a refusal left in it.
type outbox struct {
	n        *Notifier
	server   *mail.Server // the lab's own mailbox, when Config.WithMailbox
	to       mail.Dest    // where emails go: the mailbox (signed in) or Config.SMTP; Addr "" sends none
	external bool         // Config.SMTP: no mailbox of ours hears them

	mu     sync.Mutex
	failed map[string]string // emails this process holds whose send failed, by id: their lab; the mailer's next turn sends them again
}

// maxFailed bounds the emails kept to send again soon; beyond it, an
// email waits for its claim to run out (claimTime), as after a crash.
const maxFailed = 10_000

// outboxEmail is an email of the outbox, as its sender needs it.
type outboxEmail struct {
	lab, id, orderID string
	amount           int64
	message          sql.NullString // the broker message behind it, if any
}

// queueEmail writes an email to send into the outbox, in tx, for the
// payment and the broker message ("" for none) behind it, claimed by its
// writer (this process, its owner), who sends it once tx commits.
func (o *outbox) queueEmail(tx *store.Tx, lab, orderID string, amount, payment int64, messageID string) (outboxEmail, error) {
	em := outboxEmail{lab: lab, id: "mail-" + sim.NewLabID(), orderID: orderID, amount: amount,
		message: sql.NullString{String: messageID, Valid: messageID != ""}}
	now := o.n.Clock.Now().UnixMilli()
	_, err := tx.ExecStmt(o.n.st.insertEmail, lab, em.id, orderID, amount, payment, em.message, now, now, o.n.Store.Process())
	return em, err
}

// claimTime is how long a sender holds an email of the outbox before
// another may send it: longer than a send may take.
const claimTime = 30 * time.Second

// sendEmail claims an email of the outbox that its writer left unsent and
// sends it: the mailer's sweep.
func (o *outbox) sendEmail(ctx context.Context, lab, id string) error {
	em, ok, err := o.claim(ctx, lab, id, false)
	if err != nil || !ok {
		return err
	}
	return o.sendClaimed(ctx, em)
}

// claim claims an unsent email of the outbox for this process: ok is false
// when it is sent, or another holds it. The claim (its time, and this
// process as its owner) keeps two senders from sending it both; another
// sender may take it once it has run out (claimTime). With mine, an email
// this process still holds is claimed again too.
func (o *outbox) claim(ctx context.Context, lab, id string, mine bool) (em outboxEmail, ok bool, err error) {
	now := o.n.Clock.Now().UnixMilli()
	em = outboxEmail{lab: lab, id: id}
	held := `claimed_at <= ?4`
	if mine {
		held = `(process = ?5 OR claimed_at <= ?4)`
	}
	err = o.n.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.QueryRow(`UPDATE email_outbox SET claimed_at = ?1, process = ?5
WHERE lab_id = ?2 AND id = ?3 AND sent = 0 AND `+held+` RETURNING order_id, amount, message_id`,
			now, lab, id, now-claimTime.Milliseconds(), o.n.Store.Process()).Scan(&em.orderID, &em.amount, &em.message)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return em, false, nil // sent, or being sent
	}
	return em, err == nil, err
}

// noteFailed keeps an email this process holds, whose send failed, for
// the mailer's next turn, instead of leaving it until its claim runs out.
func (o *outbox) noteFailed(em outboxEmail) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failed == nil {
		o.failed = map[string]string{}
	}
	if len(o.failed) < maxFailed {
		o.failed[em.id] = em.lab
	}
}

// sendFailed sends again the emails whose send failed here (noteFailed);
// one whose send fails again is noted again.
func (o *outbox) sendFailed(ctx context.Context) error {
	o.mu.Lock()
	failed := o.failed
	o.failed = nil
	o.mu.Unlock()
	var err error
	for id, lab := range failed {
		em, ok := outboxEmail{lab: lab, id: id}, false
		if err == nil {
			em, ok, err = o.claim(ctx, lab, id, true)
		}
		switch {
		case err != nil:
			o.noteFailed(em) // not claimed again (the database does not answer): next turn
		case ok:
			o.sendClaimed(ctx, em)
		}
	}
	return err
}

// sendClaimed sends an email of the outbox that the caller holds (it wrote
// it, or claimed it) over SMTP. The lab's own mailbox marks it sent as it
// receives it; an external server's acceptance marks it here.
func (o *outbox) sendClaimed(ctx context.Context, em outboxEmail) error {
	if o.to.Addr == "" {
		return nil
	}
	l, err := o.n.Labs.Lab(ctx, em.lab)
	if err != nil {
		return err
	}
	lang := l.Settings().Language
	subject, body := lang, ""
	if o.n.Email != nil {
		subject, body = o.n.Email(lang, em.orderID, em.amount)
	}
	headers := map[string]string{"X-Idemlab-Lab": em.lab, "X-Idemlab-Order": em.orderID}
	if em.message.Valid {
		headers["X-Idemlab-Message"] = em.message.String
	}
	m := mail.Message{From: sim.ShopAddress, To: sim.CustomerAddress, Subject: subject, Body: body, MessageID: em.id, Headers: headers}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := mail.Send(sctx, o.to, m); err != nil {
		o.noteFailed(em)
		return fmt.Errorf("mail: send %s: %w", em.id, err)
	}
	if o.external { // no mailbox of ours hears it: record what was sent
		return o.receive(ctx, em.lab, em.id, sim.CustomerAddress, subject, em.orderID, em.message)
	}
	return nil
}

// mailer sends, at every turn (Config.MailerTurn), what the outbox still
// holds: what a crash left between the commit and the send, or a mailbox
// that was down refused.
func (o *outbox) mailer() {
	o.n.every(o.n.MailerTurn, nil, func() {
		err := errors.Join(o.sendFailed(o.n.ctx), o.sendUnsent(o.n.ctx))
		if err != nil && o.n.ctx.Err() == nil {
			o.n.Log.Warn("mailer", "err", err)
		}
	})
}

func (o *outbox) sendUnsent(ctx context.Context) error {
	rows, err := o.n.Store.Query(ctx, `SELECT lab_id, id FROM email_outbox WHERE sent = 0 AND claimed_at <= ? ORDER BY created_at LIMIT 100`,
		o.n.Clock.Now().Add(-claimTime).UnixMilli())
	if err != nil {
		return err
	}
	type one struct{ lab, id string }
	var unsent []one
	for rows.Next() {
		var u one
		if err := rows.Scan(&u.lab, &u.id); err != nil {
			rows.Close()
			return err
		}
		unsent = append(unsent, u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, u := range unsent {
		if err := o.sendEmail(ctx, u.lab, u.id); err != nil && sim.ErrorCode(err) != sim.ENotFound {
			return err
		}
	}
	return nil
}

// ReceiveMail stores an email the lab's SMTP mailbox accepted; the lab is
// named by its X-Idemlab-Lab header, the order by X-Idemlab-Order. Only
// this process can deliver (the mailbox asks for its credentials), but the
// headers are input all the same: an email for a lab that is not there, or
// for an order id the charges' rules refuse, is refused for good (554) and
// stored nowhere.
func (o *outbox) ReceiveMail(ctx context.Context, r mail.Received) error {
	lab, orderID := r.Headers["X-Idemlab-Lab"], r.Headers["X-Idemlab-Order"]
	if _, err := o.n.Labs.Lab(ctx, lab); sim.ErrorCode(err) == sim.ENotFound {
		return fmt.Errorf("%w: %w", mail.ErrRefused, err)
	} else if err != nil {
		return err
	}
	if err := (sim.Charge{OrderID: orderID, Amount: 1}).Validate(); err != nil {
		return fmt.Errorf("%w: mailbox %s: %w", mail.ErrRefused, lab, err)
	}
	to := ""
	if len(r.To) > 0 {
		to = r.To[0]
	}
	var msg sql.NullString
	if v, ok := r.Headers["X-Idemlab-Message"]; ok {
		msg = sql.NullString{String: v, Valid: true}
	}
	return o.receive(ctx, lab, r.MessageID, to, r.Subject, orderID, msg)
}

// receive stores an email the lab's mailbox received, and marks the
// outbox's email of the same id sent, in one transaction.
func (o *outbox) receive(ctx context.Context, lab, id, to, subject, orderID string, msg sql.NullString) error {
	err := o.n.Store.WriteLab(ctx, lab, func(tx *store.Tx) error { // an email is numbered in its lab
		if _, err := tx.ExecStmt(o.n.st.receive, lab, sim.Clip(id), sim.Clip(to), sim.Clip(subject), sim.Clip(orderID), msg, o.n.Clock.Now().UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecStmt(o.n.st.markSent, lab, id)
		return err
	})
	if store.IsGone(err) {
		return sim.NoLab(lab)
	}
	if err != nil {
		return fmt.Errorf("mailbox %s: %w", lab, err)
	}
	o.n.Bus.Publish(sim.Event{Lab: lab, Kind: sim.EventEmail, OrderID: orderID, Subject: subject})
	return nil
}
