package sim

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// A storm of deliveries: the same message comes 200 times more, at once
// (the broker redelivers, a producer retries), and under consumer_dedup
// "message-id" the customer still gets one email; under "none" every
// delivery sends one (the test fails if the fault does not bite).
func TestConsumerDedupHoldsUnderAStorm(t *testing.T) {
	for _, tc := range []struct {
		dedup  ConsumerDedup
		emails int64
	}{{DedupMessageID, 1}, {DedupNatural, 1}, {DedupNone, 201}} {
		t.Run(string(tc.dedup), func(t *testing.T) {
			ctx := context.Background()
			st, err := Open(ctx, ":memory:")
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			e, err := NewEngine(ctx, Config{Store: st, Queue: true, Mailbox: true})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			l, err := e.CreateLab(ctx)
			if err != nil {
				t.Fatal(err)
			}
			queue, dedup, wait := NotifyQueue, tc.dedup, 60_000 // no redelivery of our own during the test
			if _, err := e.UpdateSettings(ctx, l, SettingsPatch{Notify: &queue, ConsumerDedup: &dedup, AckWaitMS: &wait}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.ChargeRequest(ctx, l, Charge{OrderID: "order-42", Amount: 1500}); err != nil {
				t.Fatal(err)
			}
			deliveries := func() (n int64) {
				e.store.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM message_deliveries WHERE lab_id = ?`, l.ID).Scan(&n)
				return n
			}
			waitFor(t, "the first delivery", func() bool { return deliveries() == 1 })
			var m message
			var raw string
			if err := e.store.r.QueryRowContext(ctx, `SELECT id, order_id, payment_n, amount, fate, msg_dedup FROM messages WHERE lab_id = ?`, l.ID).
				Scan(&m.ID, &m.OrderID, &m.Payment, &m.Amount, &m.Fate, &m.MsgDedup); err != nil {
				t.Fatal(err)
			}
			m.Lab = l.ID
			b, _ := json.Marshal(m)
			raw = string(b)
			var wg sync.WaitGroup
			for range 200 {
				wg.Go(func() {
					if _, _, err := e.broker.Publish(ctx, l.ID, []byte(raw), ""); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			waitFor(t, "201 deliveries", func() bool { return deliveries() == 201 })
			waitFor(t, "the emails to arrive", func() bool {
				mb, err := e.Mailbox(ctx, l, 1)
				return err == nil && mb.Count >= tc.emails
			})
			time.Sleep(200 * time.Millisecond) // an email too many would have come by now
			mb, err := e.Mailbox(ctx, l, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if mb.Count != tc.emails {
				t.Errorf("%d emails after 201 deliveries under %s, want %d", mb.Count, tc.dedup, tc.emails)
			}
		})
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
