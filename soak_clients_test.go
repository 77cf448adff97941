package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"
)

// creator creates labs, charges each once and leaves it to idle out. Its
// labs come from 64 client addresses of the loopback network (127.0.w.2 to
// 127.0.w.65), as a class's do: each address has its own rate limit.
func (s *soak) creator(ctx context.Context, w int) {
	students := make([]*http.Client, 64)
	for i := range students {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(w+1), byte(i+2))}}
		tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1}
		defer tr.CloseIdleConnections()
		students[i] = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	}
	for n := 0; ctx.Err() == nil; n++ {
		a := send(context.Background(), students[n%len(students)], "POST", s.url("/api/v1/labs"), nil)
		if s.verdict("create lab", a, http.StatusCreated) != right {
			continue
		}
		id, _ := labID(a)
		s.mu.Lock()
		s.recent = append(s.recent, id)
		if len(s.recent) > 400 {
			s.recent = s.recent[200:]
		}
		s.mu.Unlock()
		key := fmt.Sprintf("create-%d-%d", w, n)
		for range 20 {
			a := send(context.Background(), s.api, "POST", s.url("/api/v1/labs/"+id+"/charges"), []byte(`{"order_id":"order-1","amount":100}`), "Idempotency-Key", key)
			v := s.verdict("charge new lab", a, http.StatusCreated)
			if v == right {
				s.mu.Lock()
				s.letGo = append(s.letGo, [2]string{id, a.header.Get("Location")})
				s.mu.Unlock()
			}
			if v != again {
				break
			}
		}
	}
}

// charger sends new charges with keys to the kept labs; a charge whose
// answer did not come (the kill) is sent again with its key until it is
// answered, as a client should.
func (s *soak) charger(ctx context.Context, w int, labs []string) {
	for n := 0; ctx.Err() == nil; n++ {
		id := labs[(w+n*4)%len(labs)]
		key := fmt.Sprintf("charge-%d-%d", w, n)
		body := []byte(`{"order_id":"order-` + strconv.Itoa(n) + `","amount":` + strconv.Itoa(100+n%50) + `}`)
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			a := send(context.Background(), s.api, "POST", s.url("/api/v1/labs/"+id+"/charges"), body, "Idempotency-Key", key)
			if a.err == nil && a.status == http.StatusConflict && a.header.Get("Retry-After") != "" {
				s.add("charge 409 (in flight)", 1) // the claim of a request the kill cut off
				time.Sleep(time.Second)
				continue
			}
			v := s.verdict("charge", a, http.StatusCreated)
			if v == right {
				if a.header.Get("Idempotent-Replayed") == "true" {
					s.add("charge 201 replayed (a retry after the kill)", 1)
				}
				s.keep(id, a.header.Get("Location"))
			}
			if v != again {
				break
			}
		}
	}
}

// racer fires bursts of races: an operation, then 64 attempts of it at once.
func (s *soak) racer(ctx context.Context, w int, labs []string) {
	for n := 0; ctx.Err() == nil; n++ {
		id := labs[(w+n)%len(labs)]
		a := send(context.Background(), s.api, "POST", s.url("/api/v1/labs/"+id+"/operations"),
			[]byte(`{"order_id":"race-`+strconv.Itoa(w)+"-"+strconv.Itoa(n)+`","amount":500}`))
		if s.verdict("operation", a, http.StatusCreated) != right {
			continue
		}
		op := a.header.Get("Location")
		s.keep(id, op)
		s.judge("race", send(context.Background(), s.api, "POST", s.url(op+"/race"), []byte(`{"parallel":64}`)), http.StatusOK)
		sleep(ctx, 100*time.Millisecond)
	}
}

// streamer keeps a live stream open, on a new lab mostly, for 2–8 s at a
// time, reading it all the while.
func (s *soak) streamer(ctx context.Context, kept []string) {
	for ctx.Err() == nil {
		id, which := kept[rand.IntN(len(kept))], "kept lab"
		s.mu.Lock()
		if n := len(s.recent); n > 0 && rand.IntN(4) > 0 {
			id, which = s.recent[n-1-rand.IntN(min(n, 100))], "new lab"
		}
		s.mu.Unlock()
		open, stop := context.WithTimeout(ctx, time.Duration(2000+rand.IntN(6000))*time.Millisecond)
		req, _ := http.NewRequestWithContext(open, "GET", s.url("/labs/"+id+"/events"), nil)
		start := time.Now()
		resp, err := s.sse.Do(req)
		a := answer{err: err}
		if err == nil {
			a = answer{status: resp.StatusCode, header: resp.Header}
			if resp.StatusCode == http.StatusOK {
				s.mu.Lock()
				s.opens = append(s.opens, time.Since(start))
				s.mu.Unlock()
				_, err = io.Copy(io.Discard, resp.Body)
			} else {
				a.body, _ = io.ReadAll(resp.Body)
			}
			resp.Body.Close()
		}
		switch {
		case open.Err() != nil: // our own end of the stream, or of the soak
			if a.status != 0 {
				s.add(fmt.Sprintf("stream %d", a.status), 1)
			} else {
				s.add("stream not answered within our 2-8 s, "+which, 1)
			}
		case a.err == nil && err != nil:
			s.verdict("stream read", answer{err: err})
		case a.status == http.StatusOK:
			s.add("stream ended by the server", 1)
		default:
			s.verdict("stream", a, http.StatusOK, http.StatusNotFound)
		}
		stop()
	}
}

func (s *soak) keep(id, path string) {
	if path == "" {
		s.problem("201 without Location", id)
		return
	}
	s.mu.Lock()
	s.kept[id] = append(s.kept[id], path)
	s.mu.Unlock()
}
