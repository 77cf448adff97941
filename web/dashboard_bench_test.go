package web_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkDashboardFireCharge is "fire charge" from the page: the htmx
// form post, through the simulated client and network to the charge
// endpoint and back, until the lab's regions are rendered as the answer.
func BenchmarkDashboardFireCharge(b *testing.B) {
	s := startServer(b, withDB(b.TempDir()+"/lab.db"))
	api := s.newLab(`{"protection":"replay","key_strategy":"uuid"}`)
	path := "/labs/" + strings.TrimPrefix(api, "/api/v1/labs/")
	client := &http.Client{}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		htmxPost(b, client, s.URL+path+"/charge", url.Values{"order_id": {"order-" + strconv.Itoa(i)}, "amount": {"100"}})
		i++
	}
}

// htmxPost posts a form of the page as htmx does from the page (same
// origin) and expects the lab's regions in answer.
func htmxPost(tb testing.TB, client *http.Client, action string, form url.Values) {
	tb.Helper()
	req, _ := http.NewRequest("POST", action, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	if body := readAll(resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, "hx-partial") {
		tb.Fatalf("POST %s: %d %.200s", action, resp.StatusCode, body)
	}
}

// BenchmarkFanout200 is one change reaching 200 open pages: from the charge
// (over the API) until every one of 200 SSE streams has received the new
// state. Reported: the median time per change, all streams included.
func BenchmarkFanout200(b *testing.B) {
	const streams = 200
	s := startServer(b)
	api := s.newLab("")
	id := strings.TrimPrefix(api, "/api/v1/labs/")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	transport := &http.Transport{MaxConnsPerHost: streams + 10, MaxIdleConnsPerHost: streams + 10}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	seen := make([]chan string, streams) // each stream's total-count values
	var ready sync.WaitGroup
	for i := range seen {
		seen[i] = make(chan string, 64)
		ready.Add(1)
		go func(ch chan string) {
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/labs/"+id+"/events", nil)
			resp, err := client.Do(req)
			if err != nil {
				ready.Done()
				return
			}
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 64<<10)
			first := true
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if _, rest, ok := strings.Cut(line, `data-testid="total-count">`); ok {
					n, _, _ := strings.Cut(rest, "<")
					if first {
						first = false
						ready.Done()
					}
					ch <- n
				}
			}
		}(seen[i])
	}
	ready.Wait()
	for _, ch := range seen { // drop the first message, the state on connect
		<-ch
	}
	var times []time.Duration
	n := 0
	for b.Loop() {
		n++
		start := time.Now()
		s.must(http.StatusCreated, "POST", api+"/charges", `{"order_id":"order-`+strconv.Itoa(n)+`","amount":1}`)
		want := strconv.Itoa(n)
		for _, ch := range seen {
			for got := <-ch; got != want; got = <-ch {
			}
		}
		times = append(times, time.Since(start))
	}
	b.ReportMetric(float64(median(times).Microseconds())/1000, "ms-median/change")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	for i := range s { // insertion sort: a few hundred values
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// BenchmarkDashboardLessonPlay is lesson 2 played whole from the page by
// htmx posts, as Play does without its pauses: Set up (settings and a
// reset), then Step twice (a charge whose answer is lost, and its retry),
// each answered with the lab's regions, the lesson panel's check included.
func BenchmarkDashboardLessonPlay(b *testing.B) {
	s := startServer(b, withDB(b.TempDir()+"/lab.db"))
	api := s.newLab("")
	path := "/labs/" + strings.TrimPrefix(api, "/api/v1/labs/")
	client := &http.Client{}
	post := func(action string, form url.Values) { htmxPost(b, client, s.URL+path+action, form) }
	post("/lesson", url.Values{"lesson": {"2"}})
	b.ReportAllocs()
	for b.Loop() {
		post("/lesson/setup", nil)
		post("/lesson/step", url.Values{"at": {"0"}})
		post("/lesson/step", url.Values{"at": {"1"}})
	}
	if l := s.ledger(api); l.Count != 1 {
		b.Fatalf("lesson 2 ended with %d charges, want 1", l.Count)
	}
}
