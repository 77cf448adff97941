// Package notify is the email's path after a new charge commits: the "your
// order is placed" email. Under notify "direct" the charge handler sends it
// itself; under "queue" the charge writes a message in its own transaction
// (the outbox, table messages), the relay publishes it to the broker after
// the commit, and the lab's consumer sends the email on each delivery, as
// its consumer_dedup lets it. The broker delivers at least once: what the
// consumer does about a second delivery is the lesson. Emails go out over
// real SMTP, from the email outbox, to the lab's own mailbox or another.
package notify

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/broker"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/mail"
	"idemlab/sim/outage"
	"idemlab/sim/store"
)

// Config is what a Notifier depends on.
type Config struct {
	Store *store.Store
	Labs  *labs.Registry
	Bus   *events.Bus
	Clock clock.Clock // the database's
	Log   *slog.Logger
	DB    *outage.Watch // the database's outages, logged once each; nil: each failure logged

	// WithQueue runs the broker of notify "queue": NATS with JetStream,
	// embedded in the process (its store in QueueDir, or in memory when
	// QueueDir is ""), or the external server at NATS. Without it notify
	// "queue" writes no message.
	WithQueue bool
	NATS      string
	QueueDir  string
	// WithMailbox runs the lab's own SMTP mailbox, embedded in the process,
	// on a free loopback port; it takes mail from this process only (which
	// signs in with the credentials the mailbox made at its start). SMTP
	// ("host:port") sends the lab's emails to an external server instead
	// (such as a teacher's Mailpit), signing in with nothing, and the lab
	// records each email as it sends it. With neither, no email is sent.
	WithMailbox bool
	SMTP        string
	// MailerTurn is how often the mailer sends again what the outbox
	// still holds (an email a mailbox refused, or one a crash left
	// between the commit and the send): 3 s when zero.
	MailerTurn time.Duration
	// Email is the words of the "order placed" email in a language (ru or
	// en): its subject and body. The words live in views.
	Email func(lang, orderID string, amount int64) (subject, body string)
	// AfterConsumerCommit, a test hook, runs between the consumer's commit
	// (its memory of the message and the email's outbox row) and its ack:
	// the crash tests kill the process there.
	AfterConsumerCommit func()
}

// Notifier runs the email's path. It owns its goroutines (the relay, the
// mailer); Close stops them, then the broker and the mailbox.
type Notifier struct {
	Config
	queue *queue  // nil without a broker
	mail  *outbox // sends nothing without a mailbox or an SMTP server
	st    statements

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start starts the mailbox and the broker the config asks for; Run starts
// the outbox's relay and mailer.
func Start(ctx context.Context, cfg Config) (*Notifier, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MailerTurn <= 0 {
		cfg.MailerTurn = 3 * time.Second
	}
	n := &Notifier{Config: cfg}
	n.mail = &outbox{n: n}
	n.ctx, n.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := n.st.prepare(ctx, cfg.Store); err != nil {
		return nil, err
	}
	if err := n.startParts(ctx); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (n *Notifier) startParts(ctx context.Context) error {
	switch {
	case n.SMTP != "":
		n.mail.to, n.mail.external = mail.Dest{Addr: n.SMTP}, true
	case n.WithMailbox:
		box, err := mail.Start(mail.Config{Deliver: n.mail.ReceiveMail, Logger: n.Log})
		if err != nil {
			return fmt.Errorf("mailbox: %w", err)
		}
		n.mail.server, n.mail.to = box, box.Dest()
	}
	if n.WithQueue || n.NATS != "" {
		b, err := broker.Start(ctx, broker.Config{URL: n.NATS, StoreDir: n.QueueDir, Logger: n.Log})
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		n.queue = &queue{n: n, broker: b, wake: make(chan struct{}, 1)}
	}
	return nil
}

// Run starts the mailer, which sends what the outbox still holds, and the
// relay, which resumes the consumers of the messages left unacknowledged by
// the last run and publishes what waits. Close stops them.
func (n *Notifier) Run() {
	if n.mail.to.Addr != "" {
		n.spawn(n.mail.mailer)
	}
	if n.queue != nil {
		n.spawn(n.queue.relay)
	}
}

// Queues reports whether the broker runs; Mails, whether emails go out.
func (n *Notifier) Queues() bool { return n.queue != nil }

// BrokerHealthy reports whether the broker answers (false without one).
func (n *Notifier) BrokerHealthy() bool { return n.queue != nil && n.queue.broker.Healthy() }

// Mails reports whether the lab's emails go out, to a mailbox of its own or
// another server.
func (n *Notifier) Mails() bool { return n.mail.to.Addr != "" }

// WakeRelay tells the relay that a message waits in the outbox, without
// blocking: the web layer does once a new payment's answer is written, for
// a charge that queued one (ledger.Result.Queued; a charge that queued
// none wakes nobody: the relay's look costs the database a query). The
// relay looks every second anyway.
func (n *Notifier) WakeRelay() {
	if n.queue != nil {
		n.queue.wakeUp()
	}
}

// Close stops the relay and the mailer and waits for them; then the broker
// and the mailbox stop.
func (n *Notifier) Close() {
	n.cancel()
	n.wg.Wait()
	if n.queue != nil {
		n.queue.broker.Close()
	}
	if n.mail.server != nil {
		n.mail.server.Close()
	}
}

// spawn runs f in a goroutine that Close waits for.
func (n *Notifier) spawn(f func()) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		f()
	}()
}

// every calls f now and then every d of the clock, until the notifier stops
// or wake says so sooner.
func (n *Notifier) every(d time.Duration, wake <-chan struct{}, f func()) {
	t := n.Clock.NewTicker(d)
	defer t.Stop()
	for {
		f()
		select {
		case <-n.ctx.Done():
			return
		case <-wake:
		case <-t.C():
		}
	}
}

// Write writes, in the payment's transaction, what the charge owes the
// customer: a message for the broker (queue) or an email for the handler
// to send once the payment has committed (direct).
func (n *Notifier) Write(tx *store.Tx, l *labs.Lab, s sim.Settings, p *sim.Payment) error {
	switch s.Notify {
	case sim.NotifyQueue:
		if n.queue == nil {
			return nil
		}
		// One statement on the charge's path: the message's number in the
		// lab is its payment's.
		_, err := tx.ExecStmt(n.st.insertMessage, l.ID, "msg-"+sim.NewLabID(), p.ID, p.OrderID, p.ID, p.Amount, s.Delivery, s.PublishDedup, n.Clock.Now().UnixMilli())
		return err
	case sim.NotifyDirect:
		_, err := n.mail.queueEmail(tx, l.ID, p.OrderID, p.Amount, p.ID, "")
		return err
	}
	return nil
}

// Send sends what a new payment owes under notify "direct": the handler's
// own email, before it answers. (Under "queue" the web layer wakes the
// relay once the answer is written: WakeRelay.)
func (n *Notifier) Send(ctx context.Context, l *labs.Lab, p *sim.Payment) {
	if l.Settings().Notify != sim.NotifyDirect {
		return
	}
	em := outboxEmail{lab: l.ID, orderID: p.OrderID, amount: p.Amount}
	err := n.Store.QueryRow(ctx, `SELECT id FROM email_outbox WHERE lab_id = ? AND payment_n = ? AND message_id IS NULL`, l.ID, p.ID).Scan(&em.id)
	if err != nil {
		return // no email of the handler's own
	}
	if err := n.mail.sendClaimed(ctx, em); err != nil {
		n.Log.Warn("notify: send", "lab", l.ID, "err", err) // the outbox keeps it for later
	}
}
