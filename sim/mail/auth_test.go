package mail_test

import (
	"fmt"
	netsmtp "net/smtp"
	"strings"
	"testing"

	"idemlab/sim/mail"
)

// The server takes mail only from a peer that signs in with this start's
// credentials: a peer with none, or with wrong ones, delivers nothing.
func TestServerTakesMailOnlyFromItsProcess(t *testing.T) {
	var box inbox
	s := mustStart(t, mail.Config{Deliver: box.deliver})
	raw := []byte("Subject: hi\r\nX-Idemlab-Lab: demo\r\nX-Idemlab-Order: order-42\r\n\r\nhello\r\n")

	// net/smtp sends without AUTH when given none, as sendmail does.
	err := netsmtp.SendMail(s.Addr(), nil, "shop@idemlab.test", []string{"buyer@idemlab.test"}, raw)
	if err == nil || !strings.HasPrefix(err.Error(), "530") {
		t.Errorf("no credentials: %v, want 530", err)
	}
	// net/smtp allows PLAIN in the clear to localhost only: the address must say so.
	local := strings.Replace(s.Addr(), "127.0.0.1", "localhost", 1)
	d := s.Dest()
	for _, bad := range [][2]string{{d.Username, "wrong"}, {"someone", d.Password}, {d.Username, ""}} {
		err = netsmtp.SendMail(local, netsmtp.PlainAuth("", bad[0], bad[1], "localhost"), "shop@idemlab.test", []string{"buyer@idemlab.test"}, raw)
		if err == nil || !strings.HasPrefix(err.Error(), "535") {
			t.Errorf("wrong credentials: %v, want 535", err)
		}
	}
	if got := box.messages(); len(got) != 0 {
		t.Fatalf("delivered %d messages from peers that did not sign in", len(got))
	}

	if err := netsmtp.SendMail(local, netsmtp.PlainAuth("", d.Username, d.Password, "localhost"), "shop@idemlab.test", []string{"buyer@idemlab.test"}, raw); err != nil {
		t.Fatalf("signed in: %v", err)
	}
	if err := mail.Send(testContext(t), s.Dest(), hello); err != nil {
		t.Fatalf("Send with the server's Dest: %v", err)
	}
	if got := box.messages(); len(got) != 2 {
		t.Errorf("delivered %d messages from the signed-in peers, want 2", len(got))
	}

	other := mustStart(t, mail.Config{})
	if other.Dest().Password == d.Password || other.Dest().Username == d.Username {
		t.Error("two starts share their credentials")
	}
}

// The credentials travel in plain text, so they stay on the loopback: the
// server listens there only, Send gives them to no other address, and a
// Dest printed shows no password.
func TestCredentialsStayOnTheLoopback(t *testing.T) {
	if s, err := mail.Start(mail.Config{Addr: "0.0.0.0:0"}); err == nil {
		s.Close()
		t.Error("the mailbox listens off the loopback")
	}
	s := mustStart(t, mail.Config{})
	d := s.Dest()
	d.Addr = "192.0.2.1:25"
	if err := mail.Send(testContext(t), d, hello); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("Send with credentials to %s: %v, want refused before dialling", d.Addr, err)
	}
	for _, printed := range []string{fmt.Sprint(s.Dest()), fmt.Sprintf("%+v", s.Dest()), fmt.Errorf("to %v", s.Dest()).Error()} {
		if strings.Contains(printed, s.Dest().Password) {
			t.Errorf("a printed Dest shows its password: %s", printed)
		}
	}
}
