package mail_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"idemlab/sim/mail"
)

var hello = mail.Message{
	From:      "shop@idemlab.test",
	To:        "buyer@idemlab.test",
	Subject:   "Ваш заказ оформлен",
	Body:      "Спасибо!",
	MessageID: "hello@idemlab.test",
}

// wantReply checks that err wraps an SMTP reply with the given code.
func wantReply(tb testing.TB, err error, code int) {
	tb.Helper()
	var reply *smtp.SMTPError
	if !errors.As(err, &reply) {
		tb.Fatalf("error = %v, want an *smtp.SMTPError with code %d", err, code)
	}
	if reply.Code != code {
		tb.Fatalf("reply code = %d (%v), want %d", reply.Code, err, code)
	}
}

// sendRaw runs a transaction with go-smtp's client, signed in to the
// server, sending data as it is and declaring no size, and returns the
// server's answer to the message.
func sendRaw(tb testing.TB, s *mail.Server, data string) error {
	tb.Helper()
	c := dialSignedIn(tb, s)
	if err := c.Mail("shop@idemlab.test", nil); err != nil {
		tb.Fatalf("MAIL: %v", err)
	}
	if err := c.Rcpt("buyer@idemlab.test", nil); err != nil {
		tb.Fatalf("RCPT: %v", err)
	}
	w, err := c.Data()
	if err != nil {
		tb.Fatalf("DATA: %v", err)
	}
	if _, err := io.WriteString(w, data); err != nil {
		tb.Fatalf("writing data: %v", err)
	}
	return w.Close()
}

// dialSignedIn connects to the server with go-smtp's client and signs in
// with the server's credentials.
func dialSignedIn(tb testing.TB, s *mail.Server) *smtp.Client {
	tb.Helper()
	c, err := smtp.Dial(s.Addr())
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	d := s.Dest()
	if err := c.Auth(sasl.NewPlainClient("", d.Username, d.Password)); err != nil {
		tb.Fatalf("AUTH: %v", err)
	}
	return c
}

func TestOversizedMessageRefused(t *testing.T) {
	var box inbox
	s := mustStart(t, mail.Config{MaxBytes: 1024, Deliver: box.deliver})

	big := hello
	big.Body = strings.Repeat("Ваш заказ оформлен. ", 200)
	// Send declares the size, so the server refuses at MAIL; a client that does not
	// declare it is refused after DATA.
	wantReply(t, mail.Send(testContext(t), s.Dest(), big), 552)
	raw := "Subject: big\r\n\r\n" + strings.Repeat("x", 80) + strings.Repeat("\r\n"+strings.Repeat("x", 80), 40)
	wantReply(t, sendRaw(t, s, raw), 552)
	if got := box.messages(); len(got) != 0 {
		t.Fatalf("delivered %d oversized messages", len(got))
	}

	if err := mail.Send(testContext(t), s.Dest(), hello); err != nil {
		t.Fatalf("Send of a small message after refusals: %v", err)
	}
	if got := len(box.messages()); got != 1 {
		t.Errorf("delivered %d messages, want 1", got)
	}
}

func TestMaxBytesIsExact(t *testing.T) {
	const limit = 1024
	var box inbox
	s := mustStart(t, mail.Config{MaxBytes: limit, Deliver: box.deliver})

	message := func(size int) string {
		head := "Subject: edge\r\n\r\n"
		return head + strings.Repeat("x", size-len(head)-2) + "\r\n"
	}
	if err := sendRaw(t, s, message(limit)); err != nil {
		t.Fatalf("message of exactly MaxBytes: %v", err)
	}
	wantReply(t, sendRaw(t, s, message(limit+1)), 552)
	got := box.messages()
	if len(got) != 1 || got[0].Size != limit {
		t.Fatalf("delivered %d messages, want one of %d bytes", len(got), limit)
	}
}

func TestMalformedMessageRefused(t *testing.T) {
	var box inbox
	s := mustStart(t, mail.Config{Deliver: box.deliver})

	for _, data := range []string{
		"this line is not a header\r\n\r\nbody\r\n",
		"Subject: x\r\nContent-Transfer-Encoding: base64\r\n\r\n!!not base64!!\r\n",
		"Subject: x\r\nContent-Transfer-Encoding: x-unheard-of\r\n\r\nbody\r\n",
	} {
		wantReply(t, sendRaw(t, s, data), 554)
	}
	if got := box.messages(); len(got) != 0 {
		t.Errorf("delivered %d malformed messages", len(got))
	}
}

func TestGarbageCommands(t *testing.T) {
	var box inbox
	s := mustStart(t, mail.Config{Deliver: box.deliver})
	conn, tp := dialRaw(t, s.Addr())

	for _, line := range []string{
		"HELO\r\n",
		"FOO BAR\r\n",
		"\x00\xff\xfe\x80\x01\x02junk\r\n",
		"MAIL FROM:<shop@idemlab.test>\r\n", // before any HELO
		"DATA\r\n",
	} {
		if _, err := io.WriteString(conn, line); err != nil {
			t.Fatalf("write %q: %v", line, err)
		}
		if code, msg, err := tp.ReadResponse(5); err != nil {
			t.Fatalf("reply to %q: %d %s: %v, want 5xx", line, code, msg, err)
		}
	}
	// A line longer than SMTP allows ends the session. It is sent in one piece, just
	// over the limit, so the server reads all of it and closes cleanly.
	io.WriteString(conn, strings.Repeat("\x7f\x00garbage", 250))
	if code, msg, err := tp.ReadResponse(5); err != nil {
		t.Fatalf("reply to a huge line: %d %s: %v, want 5xx", code, msg, err)
	}
	if _, err := tp.ReadLine(); err == nil {
		t.Fatal("session still open after a huge line")
	}

	if err := mail.Send(testContext(t), s.Dest(), hello); err != nil {
		t.Fatalf("Send after garbage: %v", err)
	}
	if got := len(box.messages()); got != 1 {
		t.Errorf("delivered %d messages, want 1", got)
	}
}

func TestIdlePeerCut(t *testing.T) {
	s := mustStart(t, mail.Config{Timeout: 200 * time.Millisecond})
	_, tp := dialRaw(t, s.Addr())

	start := time.Now()
	if _, _, err := tp.ReadResponse(421); err != nil {
		t.Fatalf("idle peer: %v, want 421", err)
	}
	if _, err := tp.ReadLine(); !errors.Is(err, io.EOF) {
		t.Fatalf("after 421: read err = %v, want EOF", err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("idle peer cut after %v, want about 200ms", waited)
	}
}

func TestDeliverFailureIsTemporary(t *testing.T) {
	var logs bytes.Buffer
	var calls atomic.Int32
	s := mustStart(t, mail.Config{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Deliver: func(_ context.Context, r mail.Received) error {
			calls.Add(1)
			switch r.Subject {
			case "fail":
				return errors.New("disk full")
			case "panic":
				panic("deliver blew up")
			case "never":
				return fmt.Errorf("no such lab: %w", mail.ErrRefused)
			}
			return nil
		},
	})

	for _, subject := range []string{"fail", "panic"} {
		m := hello
		m.Subject = subject
		err := mail.Send(testContext(t), s.Dest(), m)
		wantReply(t, err, 451)
		if reply := (*smtp.SMTPError)(nil); errors.As(err, &reply) && !reply.Temporary() {
			t.Errorf("%s: reply %v is not temporary", subject, reply)
		}
	}
	never := hello
	never.Subject = "never"
	wantReply(t, mail.Send(testContext(t), s.Dest(), never), 554) // refused for good: not to be sent again
	if err := mail.Send(testContext(t), s.Dest(), hello); err != nil {
		t.Fatalf("Send after a failing and a panicking Deliver: %v", err)
	}

	s.Close() // waits for the server's goroutines, so logs and calls are settled
	if got := calls.Load(); got != 4 {
		t.Errorf("Deliver called %d times, want 4", got)
	}
	for _, want := range []string{"disk full", "deliver blew up"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestCloseCancelsDeliver(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	s := mustStart(t, mail.Config{Deliver: func(ctx context.Context, _ mail.Received) error {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return ctx.Err()
	}})

	sent := make(chan error, 1)
	go func() { sent <- mail.Send(testContext(t), s.Dest(), hello) }()
	<-started
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-sent; err == nil {
		t.Fatal("Send succeeded although Deliver never completed")
	}
}

func TestMaxRecipients(t *testing.T) {
	s := mustStart(t, mail.Config{MaxRecipients: 2})
	c := dialSignedIn(t, s)
	if err := c.Mail("shop@idemlab.test", nil); err != nil {
		t.Fatalf("MAIL: %v", err)
	}
	for _, to := range []string{"a@idemlab.test", "b@idemlab.test"} {
		if err := c.Rcpt(to, nil); err != nil {
			t.Fatalf("RCPT %s: %v", to, err)
		}
	}
	wantReply(t, c.Rcpt("c@idemlab.test", nil), 452)
}
