package web_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkClassPhones measures what a class's phones cost the teacher's
// page: the time from a charge to the teacher's live update showing it,
// while idle and while 300 phones behind one address vote (each once at
// first, then a changed vote every 3 s) and ask every second whether
// anything changed, as their pages do, spread over the second; each busy
// sample is taken after the phones have run for 1.2 s. Idle and busy samples alternate on
// one server (SPEC, "Predict, then see": within 1.5× of idle). Votes
// refused (429, 5xx) are reported, and none should be.
func BenchmarkClassPhones(b *testing.B) {
	s := startServer(b, withDB(filepath.Join(b.TempDir(), "lab.db")))
	lab := s.newLab(`{"protection":"none","network":"ok"}`)
	teacher, code := s.classOn(lab)
	s.must(http.StatusOK, "POST", lab+"/class/questions", `{"action":"charge"}`, "Cookie", teacher)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := watchLab(b, ctx, s, lab, 1)

	var refused, polls, votes atomic.Int64
	var phones sync.WaitGroup
	var on atomic.Bool // false: the phones wait
	busy := on.Store
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 300}}
	for i := range 300 {
		phones.Go(func() { phone(ctx, client, s.URL, code, i, &on, &refused, &polls, &votes) })
	}
	defer func() {
		cancel()
		busy(true)
		phones.Wait()
	}()

	var idle, loaded []time.Duration
	var shown int64
	charge := func() time.Duration {
		start := time.Now()
		s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-t","amount":100}`)
		shown++
		if !w.waitFor(shown, 10*time.Second) {
			return 10 * time.Second
		}
		return time.Since(start)
	}
	charge()
	for b.Loop() {
		for range 20 {
			idle = append(idle, charge())
			busy(true)
			time.Sleep(1200 * time.Millisecond) // the phones at their pace: 300 polls and 100 votes a second
			loaded = append(loaded, charge())
			busy(false)
			time.Sleep(100 * time.Millisecond)
		}
	}
	b.ReportMetric(ms(median(idle)), "live-ms-idle")
	b.ReportMetric(ms(median(loaded)), "live-ms-phones")
	b.ReportMetric(float64(median(loaded))/float64(median(idle)), "phones/idle")
	b.ReportMetric(float64(votes.Load()), "votes")
	b.ReportMetric(float64(polls.Load()), "polls")
	b.ReportMetric(float64(refused.Load()), "refused")
}

// phone is one student's phone while on: it votes, then asks every second
// whether anything changed, and changes its vote every 3 s.
func phone(ctx context.Context, c *http.Client, base, code string, i int, on *atomic.Bool, refused, polls, votes *atomic.Int64) {
	voter := fmt.Sprintf("phone-%d", i)
	time.Sleep(time.Duration(i) * time.Second / 300) // the phones spread over each second
	send := func(method, path, body string) int {
		req, _ := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		req.Header.Set("Cookie", "idemlab_voter="+voter)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for tick := 0; ctx.Err() == nil; tick++ {
		for !on.Load() && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		if tick%3 == 0 {
			if st := send("POST", "/join/"+code+"/votes", fmt.Sprintf(`{"question":1,"choice":"%d"}`, (i+tick)%3)); st != http.StatusOK && ctx.Err() == nil {
				refused.Add(1)
			}
			votes.Add(1)
		}
		send("GET", "/join/"+code+"/now?v=o1-", "")
		polls.Add(1)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
