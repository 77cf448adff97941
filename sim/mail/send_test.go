package mail_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"idemlab/sim/mail"
)

func TestCloseEndsIdleSession(t *testing.T) {
	s, err := mail.Start(mail.Config{}) // the default 30s timeout: only Close can end the session
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	addr := s.Addr()
	_, tp := dialRaw(t, addr)
	if err := tp.PrintfLine("EHLO client.test"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tp.ReadResponse(250); err != nil {
		t.Fatalf("EHLO: %v", err)
	}

	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %v with an idle session open", took)
	}
	if _, err := tp.ReadLine(); err == nil {
		t.Error("idle session still open after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := mail.Send(testContext(t), s.Dest(), hello); err == nil {
		t.Error("Send to a closed server succeeded")
	}
	goleak.VerifyNone(t)
}

func TestConcurrentSends(t *testing.T) {
	const senders = 50
	var box inbox
	s := mustStart(t, mail.Config{Deliver: box.deliver})

	ctx := testContext(t)
	errs := make(chan error, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			m := hello
			m.MessageID = fmt.Sprintf("order-%d@idemlab.test", i)
			m.Headers = map[string]string{"X-Idemlab-Order": fmt.Sprint(i)}
			errs <- mail.Send(ctx, s.Dest(), m)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Send: %v", err)
		}
	}

	seen := make(map[string]int)
	for _, r := range box.messages() {
		if want := fmt.Sprintf("order-%s@idemlab.test", r.Headers["X-Idemlab-Order"]); r.MessageID != want {
			t.Errorf("message %s carries order header %q", r.MessageID, r.Headers["X-Idemlab-Order"])
		}
		seen[r.MessageID]++
	}
	for i := range senders {
		id := fmt.Sprintf("order-%d@idemlab.test", i)
		if seen[id] != 1 {
			t.Errorf("%s delivered %d times, want once", id, seen[id])
		}
	}
}

// silentListener accepts connections and never says a word, like a hung server.
func silentListener(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	tb.Cleanup(func() {
		l.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

func TestSendHonoursContext(t *testing.T) {
	addr := silentListener(t)

	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := mail.Send(ctx, mail.Dest{Addr: addr}, hello)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Send = %v, want context.DeadlineExceeded", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("Send returned after %v, deadline was 300ms", took)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		if err := mail.Send(ctx, mail.Dest{Addr: addr}, hello); !errors.Is(err, context.Canceled) {
			t.Errorf("Send = %v, want context.Canceled", err)
		}
	})
}
