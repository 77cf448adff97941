package web_test

import (
	"context"
	"fmt"
	"idemlab/sim/labs"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkChargeNotify is a new charge's HTTP answer (protection none, a
// new order each time) with notify off, queue and direct. Under queue the
// email goes through the relay, the broker, the consumer and SMTP off the
// request's path; under direct the handler sends it before it answers.
//
//   - answer/…: the answer alone, timed around each request (its median
//     reported as µs-answer), each charge's email let through before the
//     next charge: what the request pays. Queue may cost at most 1.5× off.
//   - load/…: charges back to back, the emails following as they can: what
//     the whole pipeline costs a busy server of two cores (ns/op).
//
// Run with -count to compare medians:
//
//	go test -run '^$' -bench ChargeNotify -count 6 ./web/
func BenchmarkChargeNotify(b *testing.B) {
	for _, mode := range []string{"answer", "load"} {
		for _, notify := range []string{"off", "queue", "direct"} {
			b.Run(mode+"/"+notify, func(b *testing.B) {
				s := startServer(b, withParts())
				lab := s.newLab(`{"notify":"` + notify + `"}`)
				l, err := s.House.Labs.Lab(context.Background(), lab[len("/api/v1/labs/"):])
				if err != nil {
					b.Fatal(err)
				}
				var answers []time.Duration
				b.ResetTimer()
				for i := range b.N {
					start := time.Now()
					s.must(http.StatusCreated, "POST", lab+"/charges", fmt.Sprintf(`{"order_id":"o-%d","amount":1500}`, i))
					if mode == "answer" {
						answers = append(answers, time.Since(start))
						if notify != "off" {
							waitEmails(b, s, l, int64(i+1))
						}
						settle()
					}
				}
				if mode == "answer" {
					slices.Sort(answers)
					b.ReportMetric(float64(answers[len(answers)/2].Nanoseconds())/1000, "µs-answer")
				}
			})
		}
	}
}

// settle lets the tail of what a charge set going end (the consumer's ack,
// the broker's bookkeeping) before the next charge, the same short while
// under every notify: the answer is then timed alone.
func settle() {
	deadline := time.Now().Add(2 * time.Millisecond)
	for time.Now().Before(deadline) {
		runtime.Gosched() // busy, not asleep: a parked process wakes slowly
	}
}

// waitEmails waits until the lab's mailbox holds n emails.
func waitEmails(b *testing.B, s *testServer, l *labs.Lab, n int64) {
	for {
		mb, err := s.House.Notify.Mailbox(context.Background(), l, 1)
		if err != nil {
			b.Fatal(err)
		}
		if mb.Count >= n {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkChargeToEmail is the time from a charge's answer to its email
// in the mailbox under notify queue: the relay's publish, the broker, the
// consumer, SMTP. It reports the median and the 90th percentile.
func BenchmarkChargeToEmail(b *testing.B) {
	s := startServer(b, withParts())
	lab := s.newLab(`{"notify":"queue","consumer_dedup":"message-id"}`)
	l, err := s.House.Labs.Lab(context.Background(), lab[len("/api/v1/labs/"):])
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		s.must(http.StatusCreated, "POST", lab+"/charges", fmt.Sprintf(`{"order_id":"o-%d","amount":1500}`, i))
		start := time.Now()
		waitEmails(b, s, l, int64(i+1))
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms-p90")
}
