package notify_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/smtp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/mail"
	"idemlab/sim/notify"
	"idemlab/sim/store"
	"idemlab/sim/waittest"
)

// openMailbox opens the lab's parts with its own mailbox, and a private lab
// whose charges send their email themselves (notify "direct").
func openMailbox(t *testing.T) (*house.House, *labs.Lab) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := house.Open(ctx, house.Config{Store: db, Notify: notify.Config{WithMailbox: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	l, err := h.Labs.CreatePrivate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	direct := sim.NotifyDirect
	if _, err := h.Labs.UpdateSettings(ctx, l, sim.SettingsPatch{Notify: &direct}); err != nil {
		t.Fatal(err)
	}
	return h, l
}

// The embedded mailbox takes mail from this process only. Another local
// user who finds its port and sends it an email with the lab's headers
// (plain SMTP, as sendmail or net/smtp would) is refused, and nothing
// shows in the lab's mailbox; the lab's own emails still arrive.
func TestMailboxRefusesOtherLocalUsers(t *testing.T) {
	t.Parallel()
	h, l := openMailbox(t)
	ctx := context.Background()
	msg := "From: <someone@example.test>\r\nTo: <customer@idemlab.test>\r\nSubject: order placed\r\n" +
		"Message-Id: <fake-1@example.test>\r\nX-Idemlab-Lab: " + l.ID + "\r\nX-Idemlab-Order: order-42\r\n\r\nhello\r\n"
	for _, lab := range []string{l.ID, sim.DemoLab} {
		err := smtp.SendMail(h.Notify.OwnMailbox().Addr(), nil, "someone@example.test", []string{sim.CustomerAddress},
			[]byte(strings.Replace(msg, l.ID, lab, 1)))
		if err == nil {
			t.Errorf("an email without the mailbox's credentials for %s was accepted", lab)
		}
	}
	if _, err := h.Ledger.Charge(ctx, l, sim.Charge{OrderID: "order-42", Amount: 1500}); err != nil { // sends its email
		t.Fatal(err)
	}
	waittest.For(t, "the lab's own email", func() bool {
		mb, err := h.Notify.Mailbox(ctx, l, 10)
		return err == nil && mb.Count >= 1
	})
	mb, err := h.Notify.Mailbox(ctx, l, 10)
	if err != nil {
		t.Fatal(err)
	}
	if mb.Count != 1 || mb.Emails[0].OrderID != "order-42" {
		t.Errorf("the mailbox holds %+v, want the lab's own email only", mb)
	}
	demo, err := h.Labs.Lab(ctx, sim.DemoLab)
	if err != nil {
		t.Fatal(err)
	}
	if mb, err := h.Notify.Mailbox(ctx, demo, 10); err != nil || mb.Count != 0 {
		t.Errorf("demo's mailbox holds %d emails (%v), want none", mb.Count, err)
	}
}

// The mailbox believes its headers no more than any other input: an email
// for a lab that does not exist, or for an order id the lab's rules refuse,
// is refused for good and stored nowhere.
func TestMailboxRefusesBadHeaders(t *testing.T) {
	t.Parallel()
	h, l := openMailbox(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, lab, order string }{
		{"a script for an order", l.ID, "<script>alert(1)</script>"},
		{"an empty order", l.ID, ""},
		{"an order too long", l.ID, strings.Repeat("o", sim.MaxOrderIDLen+1)},
		{"a lab that is not there", "AAAAAAAAAAAAAAAAAAAAAA", "order-42"},
		{"a lab id that is none", "../etc", "order-42"},
	} {
		m := mail.Message{From: sim.ShopAddress, To: sim.CustomerAddress, Subject: "order placed", Body: "hello",
			MessageID: "bad-" + strings.ReplaceAll(tc.name, " ", "-"), Headers: map[string]string{"X-Idemlab-Lab": tc.lab, "X-Idemlab-Order": tc.order}}
		var reply *gosmtp.SMTPError
		if err := mail.Send(ctx, h.Notify.OwnMailbox().Dest(), m); !errors.As(err, &reply) || reply.Code != 554 {
			t.Errorf("%s: %v, want refused for good (554)", tc.name, err)
		}
	}
	var n int
	if err := h.Store.QueryRow(ctx, `SELECT COUNT(*) FROM emails`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d emails stored (%v), want none", n, err)
	}
}

// externalServer is another SMTP server, such as a teacher's Mailpit: it
// asks no sign-in and counts what it gets.
type externalServer struct {
	got     chan string
	refuse  atomic.Int32 // how many emails to answer 451 (try again later) first
	refused atomic.Int32
}

func (e *externalServer) NewSession(*gosmtp.Conn) (gosmtp.Session, error) { return e, nil }
func (e *externalServer) Mail(string, *gosmtp.MailOptions) error          { return nil }
func (e *externalServer) Rcpt(string, *gosmtp.RcptOptions) error          { return nil }
func (e *externalServer) Reset()                                          {}
func (e *externalServer) Logout() error                                   { return nil }
func (e *externalServer) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if e.refuse.Add(-1) >= 0 {
		e.refused.Add(1)
		return &gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	e.got <- string(b)
	return err
}

// With -smtp naming another server, the lab sends there without signing
// in (the server is the user's, and may know no AUTH), and records what
// it sent.
func TestExternalServerGetsNoSignIn(t *testing.T) {
	t.Parallel()
	ext, h, l := openExternal(t)
	ctx := context.Background()
	if _, err := h.Ledger.Charge(ctx, l, sim.Charge{OrderID: "order-42", Amount: 1500}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-ext.got:
		if !strings.Contains(m, "X-Idemlab-Order: order-42") {
			t.Errorf("the external server got:\n%s", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the external server got no email")
	}
	waittest.For(t, "the email recorded", func() bool {
		mb, err := h.Notify.Mailbox(ctx, l, 10)
		return err == nil && mb.Count == 1
	})
}

// An email the server refused for now (451) is sent again at the
// mailer's next turn by the process that holds it, not left until its
// claim runs out (30 s), and it arrives once.
func TestRefusedEmailIsSentAgainSoon(t *testing.T) {
	t.Parallel()
	ext, h, l := openExternal(t)
	ext.refuse.Store(1)
	ctx := context.Background()
	start := time.Now()
	if _, err := h.Ledger.Charge(ctx, l, sim.Charge{OrderID: "order-43", Amount: 1500}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ext.got:
		t.Logf("accepted %s after the charge, after %d refusals", time.Since(start).Round(100*time.Millisecond), ext.refused.Load())
	case <-time.After(10 * time.Second):
		t.Fatalf("refused %d times, and not accepted within 10 s", ext.refused.Load())
	}
	if n := ext.refused.Load(); n != 1 {
		t.Errorf("refused %d times before it was accepted, want 1", n)
	}
	waittest.For(t, "the email recorded", func() bool {
		mb, err := h.Notify.Mailbox(ctx, l, 10)
		return err == nil && mb.Count == 1
	})
	select {
	case m := <-ext.got:
		t.Errorf("the email arrived twice; again:\n%s", m)
	case <-time.After(3 * testTurn): // past the mailer's next turns
	}
}

// testTurn is the mailer's turn in the tests of a server that refuses: a
// tenth of the lab's, so that the next turn comes soon.
const testTurn = 300 * time.Millisecond

// openExternal opens the lab's parts sending to another SMTP server, and
// a private lab whose charges send their email themselves.
func openExternal(t *testing.T) (*externalServer, *house.House, *labs.Lab) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ext := &externalServer{got: make(chan string, 10)}
	srv := gosmtp.NewServer(ext)
	srv.ErrorLog = log.New(io.Discard, "", 0)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := house.Open(ctx, house.Config{Store: db, Notify: notify.Config{SMTP: ln.Addr().String(), MailerTurn: testTurn}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	l, err := h.Labs.CreatePrivate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	direct := sim.NotifyDirect
	if _, err := h.Labs.UpdateSettings(ctx, l, sim.SettingsPatch{Notify: &direct}); err != nil {
		t.Fatal(err)
	}
	return ext, h, l
}
