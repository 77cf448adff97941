package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"idemlab/sim/labs"
	"idemlab/web"
)

// mailbox is the lab's mailbox over the API.
type mailbox struct {
	Emails []struct {
		ID        int64   `json:"id"`
		Subject   string  `json:"subject"`
		OrderID   string  `json:"order_id"`
		MessageID *string `json:"message_id"`
	} `json:"emails"`
	Count   int64 `json:"count"`
	Doubled []struct {
		OrderID string `json:"order_id"`
		Emails  int64  `json:"emails"`
	} `json:"doubled"`
}

func (s *testServer) mailbox(prefix string) mailbox {
	s.tb.Helper()
	return decode[mailbox](s.tb, s.must(http.StatusOK, "GET", prefix+"/emails", "").Body)
}

// queue is the lab's messages over the API.
type queue struct {
	Messages []struct {
		ID         string `json:"id"`
		OrderID    string `json:"order_id"`
		Published  int    `json:"published"`
		Deliveries []struct {
			N       int    `json:"n"`
			Fate    string `json:"fate"`
			Outcome string `json:"outcome"`
		} `json:"deliveries"`
	} `json:"messages"`
}

func (s *testServer) queue(prefix string) queue {
	s.tb.Helper()
	return decode[queue](s.tb, s.must(http.StatusOK, "GET", prefix+"/messages", "").Body)
}

// settle waits until every message of the lab was acknowledged (a delivery
// other than a crash for each message published), then until the mailbox
// stands still; it returns the mailbox then.
func (s *testServer) settle(prefix string, ackWait time.Duration) mailbox {
	s.tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		q, done := s.queue(prefix), true
		for _, m := range q.Messages {
			acked := 0
			for _, d := range m.Deliveries {
				if d.Outcome != "crashed" {
					acked++
				}
			}
			if m.Published == 0 || acked < 1 {
				done = false
			}
		}
		if done && len(q.Messages) > 0 {
			break
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("the queue did not settle: %+v", q)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The emails go out after the consumer's commit: wait until the
	// mailbox has stood still for a few ack waits, and for long enough that
	// a second copy on its way through a busy machine would have come.
	mb, still := s.mailbox(prefix), time.Now()
	for time.Since(still) < max(3*ackWait, time.Second) {
		if time.Now().After(deadline) {
			s.tb.Fatalf("the mailbox did not settle: %+v", mb)
		}
		time.Sleep(20 * time.Millisecond)
		if now := s.mailbox(prefix); now.Count != mb.Count {
			mb, still = now, time.Now()
		}
	}
	return mb
}

// trials is how many times each lesson of the queue runs: its counts must
// come out the same every time (the package sim/notify storms them too).
const trials = 4

// Lesson 7: the consumer sends the email, then dies before its ack; the
// broker delivers the message again. Without deduplication the customer
// gets two emails for one payment; with the message id or the order as
// the consumer's memory, one. Several times each (trials), on the real
// broker and the real mailbox.
func TestLesson7CrashBeforeAck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dedup  string
		emails int64
	}{{"none", 2}, {"message-id", 1}, {"natural", 1}} {
		s := startServer(t, withParts()) // each trial in a lab of its own
		for trial := range trials {
			t.Run(fmt.Sprintf("%s/%d", tc.dedup, trial), func(t *testing.T) {
				t.Parallel()
				lesson7(t, s.of(t), tc.dedup, tc.emails)
			})
		}
	}
}

// of is the server as a subtest uses it: its failures are the subtest's.
func (s *testServer) of(t *testing.T) *testServer {
	ts := *s
	ts.tb = t
	return &ts
}

// The same against a real nats-server ($IDEMLAB_TEST_NATS; CI starts one).
func TestLesson7RealNATS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dedup  string
		emails int64
	}{{"none", 2}, {"message-id", 1}} {
		t.Run(tc.dedup, func(t *testing.T) {
			t.Parallel()
			lesson7(t, startServer(t, withRealNATS(t)), tc.dedup, tc.emails)
		})
	}
}

// lesson7 charges once under crash-before-ack with the consumer's dedup
// and checks the counts: one payment, emails as want, a crash and then a
// delivery that sends (none) or skips.
func lesson7(t *testing.T, s *testServer, dedup string, emails int64) {
	t.Helper()
	lab := s.newLab(fmt.Sprintf(`{"notify":"queue","consumer_dedup":%q,"delivery":"crash-before-ack","ack_wait_ms":100}`, dedup))
	s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	mb := s.settle(lab, 100*time.Millisecond)
	if led := s.ledger(lab); led.Count != 1 {
		t.Errorf("%d payments, want 1", led.Count)
	}
	if mb.Count != emails || int64(len(mb.Emails)) != emails {
		t.Errorf("%d emails (%d listed), want %d: %+v", mb.Count, len(mb.Emails), emails, mb)
	}
	q := s.queue(lab)
	if len(q.Messages) != 1 || len(q.Messages[0].Deliveries) != 2 || q.Messages[0].Deliveries[0].Outcome != "crashed" {
		t.Fatalf("the message's deliveries: %+v; want a crash, then a delivery", q)
	}
	want := map[string]string{"none": "sent", "message-id": "skipped", "natural": "skipped"}[dedup]
	if got := q.Messages[0].Deliveries[1].Outcome; got != want {
		t.Errorf("the redelivery: %s, want %s", got, want)
	}
	for _, e := range mb.Emails {
		if e.Subject != "Ваш заказ оформлен" || e.OrderID != "order-42" || e.MessageID == nil {
			t.Errorf("email %+v: want «Ваш заказ оформлен» for order-42, naming its message", e)
		}
	}
}

// Lesson 8: the producer publishes the message twice. Two emails, unless
// the broker drops the second copy by its Nats-Msg-Id, or the consumer
// recognises it.
func TestLesson8DuplicatePublish(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		publish bool
		dedup   string
		emails  int64
	}{{"no dedup", false, "none", 2}, {"broker dedup", true, "none", 1}, {"consumer dedup", false, "message-id", 1}} {
		shared := startServer(t, withParts()) // each trial in a lab of its own
		for trial := range trials {
			t.Run(fmt.Sprintf("%s/%d", tc.name, trial), func(t *testing.T) {
				t.Parallel()
				s := shared.of(t)
				lab := lesson8(t, s, tc.publish, tc.dedup, tc.emails)
				if q := s.queue(lab); len(q.Messages) != 1 || q.Messages[0].Published != 2 {
					t.Errorf("messages %+v: want one, published twice", q)
				}
			})
		}
	}
}

// Lesson 8 against a real nats-server ($IDEMLAB_TEST_NATS; CI starts one):
// its duplicate window drops the copy by Nats-Msg-Id.
func TestLesson8RealNATS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		publish bool
		emails  int64
	}{{false, 2}, {true, 1}} {
		t.Run(fmt.Sprint("publish_dedup=", tc.publish), func(t *testing.T) {
			t.Parallel()
			lesson8(t, startServer(t, withRealNATS(t)), tc.publish, "none", tc.emails)
		})
	}
}

// lesson8 charges once under duplicate-publish with the broker's and the
// consumer's dedup as given, checks the mailbox's count and returns the lab.
func lesson8(t *testing.T, s *testServer, publish bool, dedup string, emails int64) string {
	t.Helper()
	lab := s.newLab(fmt.Sprintf(`{"notify":"queue","consumer_dedup":%q,"delivery":"duplicate-publish","publish_dedup":%v,"ack_wait_ms":100}`, dedup, publish))
	s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	if mb := s.settle(lab, 100*time.Millisecond); mb.Count != emails {
		t.Errorf("%d emails, want %d: %+v", mb.Count, emails, mb)
	}
	return lab
}

// notify "direct": the handler sends the email itself, once per payment.
func TestNotifyDirect(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	lab := s.newLab(`{"notify":"direct","language":"en","network":"response-lost"}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	s.retry(lab, op.ID, `{"fate":"ok"}`)
	poll(10*time.Second, func() bool { return s.mailbox(lab).Count >= 2 })
	mb := s.mailbox(lab)
	if mb.Count != 2 || len(mb.Doubled) != 1 || mb.Doubled[0].OrderID != "order-42" {
		t.Errorf("mailbox %+v: want 2 emails, order-42 named as doubled (two charges, two emails)", mb)
	}
	if len(mb.Emails) > 0 && mb.Emails[0].Subject != "Your order is placed" {
		t.Errorf("subject %q, want the lab's language (en)", mb.Emails[0].Subject)
	}
}

// The comparison's second grid: every consumer deduplication × delivery
// fate, two purchases of one order. Only the message id gives an email per
// purchase under every fate; none sends one twice under a crash or a second
// publish; the order silences the second purchase. Each cell's link
// rebuilds a lab of the reader's own that ends with the cell's emails.
func TestCompareMailGrid(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts(), withLimits(labs.Config{}, web.Options{ScenarioRate: web.Rate{Burst: -1}}))
	got := s.must(http.StatusOK, "POST", "/api/v1/compare", "").JSON(t)
	cells, _ := got["mail_cells"].([]any)
	if len(cells) != 9 {
		t.Fatalf("%d cells in the second grid, want 9: %v", len(cells), got["mail_cells"])
	}
	want := map[string]string{
		"none/ok": "right", "none/crash-before-ack": "double", "none/duplicate-publish": "double",
		"message-id/ok": "right", "message-id/crash-before-ack": "right", "message-id/duplicate-publish": "right",
		"natural/ok": "silenced", "natural/crash-before-ack": "silenced", "natural/duplicate-publish": "silenced",
	}
	for _, c := range cells {
		m := c.(map[string]any)
		name := fmt.Sprint(m["consumer_dedup"], "/", m["delivery"])
		if m["cause"] != want[name] {
			t.Errorf("%s: %v emails, cause %v; want %s", name, m["emails"], m["cause"], want[name])
		}
		link, _ := m["scenario_url"].(string)
		rebuilt := s.rebuild(link)
		if st := s.must(http.StatusOK, "GET", rebuilt+"/settings", "").JSON(t); fmt.Sprint(st["consumer_dedup"], "/", st["delivery"]) != name {
			t.Errorf("%s: the link rebuilds a lab of %v/%v", name, st["consumer_dedup"], st["delivery"])
		}
		waitFor(t, 10*time.Second, name+"'s emails in the rebuilt lab", func() bool {
			return s.must(http.StatusOK, "GET", rebuilt+"/emails", "").JSON(t)["count"] == m["emails"]
		})
	}
}
