package notify_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/notify"
	"idemlab/sim/store"
	"idemlab/sim/waittest"
)

// A storm of deliveries: the same message comes 200 times more, at once
// (the broker redelivers, a producer retries), and under consumer_dedup
// "message-id" or "natural" the customer still gets one email; under
// "none" every delivery sends one (the test fails if the fault does not
// bite).
func TestConsumerDedupHoldsUnderAStorm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dedup  sim.ConsumerDedup
		emails int64
	}{{sim.DedupMessageID, 1}, {sim.DedupNatural, 1}, {sim.DedupNone, 201}} {
		t.Run(string(tc.dedup), func(t *testing.T) {
			ctx := context.Background()
			db, err := store.Open(ctx, ":memory:")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			h, err := house.Open(ctx, house.Config{Store: db, Notify: notify.Config{WithQueue: true, WithMailbox: true}})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			l, err := h.Labs.CreatePrivate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			queue, dedup, wait := sim.NotifyQueue, tc.dedup, 60_000 // no redelivery of our own during the test
			if _, err := h.Labs.UpdateSettings(ctx, l, sim.SettingsPatch{Notify: &queue, ConsumerDedup: &dedup, AckWaitMS: &wait}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Ledger.Charge(ctx, l, sim.Charge{OrderID: "order-42", Amount: 1500}); err != nil {
				t.Fatal(err)
			}
			deliveries := func() (n int64) {
				db.QueryRow(ctx, `SELECT COUNT(*) FROM message_deliveries WHERE lab_id = ?`, l.ID).Scan(&n)
				return n
			}
			h.Notify.WakeRelay()
			waittest.For(t, "the first delivery", func() bool { return deliveries() == 1 })
			m := notify.Message{Lab: l.ID}
			if err := db.QueryRow(ctx, `SELECT id, order_id, payment_n, amount, fate, msg_dedup FROM messages WHERE lab_id = ?`, l.ID).
				Scan(&m.ID, &m.OrderID, &m.Payment, &m.Amount, &m.Fate, &m.MsgDedup); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(m)
			var wg sync.WaitGroup
			for range 200 {
				wg.Go(func() {
					if _, _, err := h.Notify.Broker().Publish(ctx, l.ID, raw, ""); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			waittest.For(t, "201 deliveries", func() bool { return deliveries() == 201 })
			waittest.For(t, "the emails to arrive", func() bool {
				open, emails, err := h.Notify.Unsettled(ctx, l)
				return err == nil && open == 0 && emails >= tc.emails
			})
			mb, err := h.Notify.Mailbox(ctx, l, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if mb.Count != tc.emails {
				t.Errorf("%d emails after 201 deliveries under %s, want %d", mb.Count, tc.dedup, tc.emails)
			}
		})
	}
}
