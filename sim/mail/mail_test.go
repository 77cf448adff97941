package mail_test

import (
	"context"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"

	"idemlab/sim/waittest"

	"idemlab/sim/mail"
)

func TestMain(m *testing.M) {
	waittest.Setup(0)
	goleak.VerifyTestMain(m)
}

// inbox collects what a server delivers.
type inbox struct {
	mu  sync.Mutex
	got []mail.Received
}

func (b *inbox) deliver(_ context.Context, r mail.Received) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, r)
	return nil
}

func (b *inbox) messages() []mail.Received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]mail.Received(nil), b.got...)
}

// mustStart starts a server for one test and closes it when the test ends.
func mustStart(tb testing.TB, cfg mail.Config) *mail.Server {
	tb.Helper()
	s, err := mail.Start(cfg)
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// dialRaw connects to addr as a bare TCP peer and reads the 220 greeting.
func dialRaw(tb testing.TB, addr string) (net.Conn, *textproto.Conn) {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	tb.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	tp := textproto.NewConn(conn)
	if _, _, err := tp.ReadResponse(220); err != nil {
		tb.Fatalf("greeting: %v", err)
	}
	return conn, tp
}

// testContext returns a context that ends well before the test would time out.
func testContext(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

func TestSendRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msg  mail.Message
	}{
		{
			name: "russian",
			msg: mail.Message{
				From:      "shop@idemlab.test",
				To:        "buyer@idemlab.test",
				Subject:   "Ваш заказ оформлен",
				Body:      "Здравствуйте!\n\nЗаказ № 42 оформлен.\n.строка с точкой\nИтого = 1 500 ₽  \n",
				MessageID: "order-42.1@idemlab.test",
				Headers:   map[string]string{"X-Idemlab-Lab": "double-charge", "X-Idemlab-Order": "42"},
			},
		},
		{
			name: "english",
			msg: mail.Message{
				From:      "shop@idemlab.test",
				To:        "buyer@idemlab.test",
				Subject:   "Your order is confirmed",
				Body:      "Hello,\n" + strings.Repeat("a long line of text, ", 60) + "the end.",
				MessageID: "order-7@idemlab.test",
				Headers:   map[string]string{"X-Idemlab-Order": "7"},
			},
		},
		{
			name: "mixed subject, empty body, no Message-ID",
			msg: mail.Message{
				From:    "shop@idemlab.test",
				To:      "buyer@idemlab.test",
				Subject: "Заказ #42: payment received — спасибо!",
				Headers: map[string]string{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var box inbox
			s := mustStart(t, mail.Config{Deliver: box.deliver})
			if err := mail.Send(testContext(t), s.Dest(), tt.msg); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := box.messages()
			if len(got) != 1 {
				t.Fatalf("delivered %d messages, want 1", len(got))
			}
			want := mail.Received{
				From:      tt.msg.From,
				To:        []string{tt.msg.To},
				Subject:   tt.msg.Subject,
				MessageID: tt.msg.MessageID,
				Headers:   tt.msg.Headers,
				Body:      tt.msg.Body,
			}
			if diff := cmp.Diff(want, got[0], cmpopts.IgnoreFields(mail.Received{}, "Size")); diff != "" {
				t.Errorf("received message mismatch (-want +got):\n%s", diff)
			}
			if got[0].Size <= len(tt.msg.Body) {
				t.Errorf("Size = %d, want more than the body's %d bytes", got[0].Size, len(tt.msg.Body))
			}
		})
	}
}

func TestSendRefusesBadMessage(t *testing.T) {
	ok := mail.Message{From: "shop@idemlab.test", To: "buyer@idemlab.test", Subject: "hi"}
	tests := []struct {
		name string
		edit func(m *mail.Message)
	}{
		{"from with a display name", func(m *mail.Message) { m.From = "Shop <shop@idemlab.test>" }},
		{"to with a line break", func(m *mail.Message) { m.To = "buyer@idemlab.test\r\nRCPT TO:<x@y>" }},
		{"header value with a line break", func(m *mail.Message) {
			m.Headers = map[string]string{"X-Idemlab-Order": "1\r\nBcc: x@y"}
		}},
		{"header overriding Subject", func(m *mail.Message) { m.Headers = map[string]string{"Subject": "x"} }},
		{"Message-ID with brackets", func(m *mail.Message) { m.MessageID = "<a@b>" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ok
			tt.edit(&m)
			// Nothing listens on port 1: an error must come from the message, not the dial.
			err := mail.Send(testContext(t), mail.Dest{Addr: "127.0.0.1:1"}, m)
			if err == nil || !strings.HasPrefix(err.Error(), "mail: ") || strings.Contains(err.Error(), "send to") {
				t.Errorf("Send = %v, want a validation error", err)
			}
		})
	}
}

// TestReceiveForeignMessage feeds the server a message composed by hand the way
// other mail software writes them: a B-encoded subject and an 8bit body.
func TestReceiveForeignMessage(t *testing.T) {
	var box inbox
	s := mustStart(t, mail.Config{Deliver: box.deliver})
	data := "From: Shop <shop@idemlab.test>\r\n" +
		"Subject: =?UTF-8?B?0JLQsNGIINC30LDQutCw0Lcg0L7RhNC+0YDQvNC70LXQvQ==?=\r\n" +
		"Message-ID: <abc@idemlab.test>\r\n" +
		"X-Idemlab-Lab: retry-storm\r\n" +
		"X-Other: ignored\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Content-Transfer-Encoding: 8bit\r\n" +
		"\r\n" +
		"Первая строка\r\n..вторая, с точкой\r\n"
	if err := sendRaw(t, s, data); err != nil {
		t.Fatalf("sending: %v", err)
	}
	got := box.messages()
	if len(got) != 1 {
		t.Fatalf("delivered %d messages, want 1", len(got))
	}
	want := mail.Received{
		From:      "shop@idemlab.test",
		To:        []string{"buyer@idemlab.test"},
		Subject:   "Ваш заказ оформлен",
		MessageID: "abc@idemlab.test",
		Headers:   map[string]string{"X-Idemlab-Lab": "retry-storm"},
		Body:      "Первая строка\n..вторая, с точкой",
		Size:      len(data),
	}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("received message mismatch (-want +got):\n%s", diff)
	}
}
