package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// answer is one HTTP answer, read whole, or the error that took its place.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// send sends one request; headers are pairs of canonical name and value.
func send(ctx context.Context, c *http.Client, method, url string, body []byte, headers ...string) answer {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return answer{err: err}
	}
	if body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header[headers[i]] = []string{headers[i+1]}
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// limited reports whether a is one of the refusals SPEC allows a loaded
// server (429, or 503, each with Retry-After) and how long it asks to wait.
// A 503 without Retry-After is not one of them.
func limited(a answer) (time.Duration, bool) {
	if a.err != nil || a.status != http.StatusTooManyRequests && a.status != http.StatusServiceUnavailable {
		return 0, false
	}
	v := a.header.Get("Retry-After")
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

// sendHonouring is send that, when refused with Retry-After, waits as asked
// (at most 5 s) and sends again, up to 5 times; refusals counts each one.
func sendHonouring(c *http.Client, refusals *atomic.Int64, method, url string, body []byte, headers ...string) answer {
	for i := 0; ; i++ {
		a := send(context.Background(), c, method, url, body, headers...)
		d, ok := limited(a)
		if !ok || i == 4 {
			return a
		}
		refusals.Add(1)
		time.Sleep(min(d, 5*time.Second))
	}
}

// newClients returns n HTTP clients, each with its own keep-alive
// connection, as n separate programs would have.
func newClients(n int) []*http.Client {
	cs := make([]*http.Client, n)
	for i := range cs {
		cs[i] = &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1,
			IdleConnTimeout: time.Minute, DisableCompression: true}}
	}
	return cs
}

func closeClients(cs []*http.Client) {
	for _, c := range cs {
		c.CloseIdleConnections()
	}
}

// labID reads the id of a lab the API created.
func labID(a answer) (string, bool) {
	if a.err != nil || a.status != http.StatusCreated {
		return "", false
	}
	_, rest, ok := strings.Cut(string(a.body), `"id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	return id, ok && id != ""
}
