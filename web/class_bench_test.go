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
// sample is taken after the phones have sent a second's polls. Idle and busy samples alternate on
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

	ph := newPhones()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 300}}
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() { ph.phone(ctx, client, s.URL, code, i) })
	}
	defer func() {
		cancel()
		wg.Wait()
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
			ph.run()
			from := ph.polls.Load() // the phones at their pace: 300 polls and 100 votes a second
			waitFor(b, 10*time.Second, "a second of the phones", func() bool { return ph.polls.Load() >= from+300 })
			loaded = append(loaded, charge())
			ph.hold()
			waitFor(b, 10*time.Second, "the phones to be still", func() bool { return ph.busy.Load() == 0 })
		}
	}
	b.ReportMetric(ms(median(idle)), "live-ms-idle")
	b.ReportMetric(ms(median(loaded)), "live-ms-phones")
	b.ReportMetric(float64(median(loaded))/float64(median(idle)), "phones/idle")
	b.ReportMetric(float64(ph.votes.Load()), "votes")
	b.ReportMetric(float64(ph.polls.Load()), "polls")
	b.ReportMetric(float64(ph.refused.Load()), "refused")
}

// phones are a class's phones, and the gate that holds them between the
// benchmark's busy samples.
type phones struct {
	mu   sync.Mutex
	open chan struct{} // closed while the phones run
	// busy counts the requests on their way: a phone takes its place in
	// it before the gate can close on it.
	busy                  atomic.Int64
	refused, polls, votes atomic.Int64
}

func newPhones() *phones { return &phones{open: make(chan struct{})} }

// run lets the phones go; hold stops them before their next request.
func (p *phones) run() {
	p.mu.Lock()
	close(p.open)
	p.mu.Unlock()
}

func (p *phones) hold() {
	p.mu.Lock()
	p.open = make(chan struct{})
	p.mu.Unlock()
}

// enter waits until the phones run and counts a request on its way; false
// when ctx ends.
func (p *phones) enter(ctx context.Context) bool {
	for {
		p.mu.Lock()
		open := p.open
		select {
		case <-open:
			p.busy.Add(1)
			p.mu.Unlock()
			return true
		default:
		}
		p.mu.Unlock()
		select {
		case <-open:
		case <-ctx.Done():
			return false
		}
	}
}

// after waits d, or until ctx ends: a phone's pace.
func after(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// phone is one student's phone while the phones run: it votes, then asks
// every second whether anything changed, and changes its vote every 3 s.
func (p *phones) phone(ctx context.Context, c *http.Client, base, code string, i int) {
	voter := fmt.Sprintf("phone-%d", i)
	after(ctx, time.Duration(i)*time.Second/300) // the phones spread over each second
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
	for tick := 0; p.enter(ctx); tick++ {
		if tick%3 == 0 {
			if st := send("POST", "/join/"+code+"/votes", fmt.Sprintf(`{"question":1,"choice":"%d"}`, (i+tick)%3)); st != http.StatusOK && ctx.Err() == nil {
				p.refused.Add(1)
			}
			p.votes.Add(1)
		}
		send("GET", "/join/"+code+"/now?v=open1-", "")
		p.polls.Add(1)
		p.busy.Add(-1)
		after(ctx, time.Second)
	}
}
