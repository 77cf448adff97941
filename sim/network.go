package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Delivery is what the server did with one copy of a request that reached
// it, as the network saw its answer go by.
type Delivery struct {
	Status  int     `json:"status"`
	Outcome Outcome `json:"outcome"`
}

// Network is an http.RoundTripper that plays one fate on every request it
// carries, between the simulated client and the real server:
//
//   - ok: the request and its answer pass;
//   - request-lost: the request never reaches the server;
//   - response-lost: the server does the work, the answer is dropped on the way back;
//   - slow: the answer comes only after the client's deadline (the client gives up first);
//   - duplicate: the server receives the request twice; the client sees the first answer.
//
// Observe is told of each answer the server gave, in the order of the copies.
// A slow answer may arrive after RoundTrip has returned: Spawn runs the wait
// for it under its owner, so that nothing outlives the engine.
type Network struct {
	Fate    Fate
	Next    http.RoundTripper
	Observe func(Delivery)
	Spawn   func(func())
}

// Errors the simulated network returns to the client. The client cannot tell
// the first two apart by anything but their words: that is the point.
var (
	ErrRequestLost  = errors.New("network: connection reset before the request reached the server")
	ErrResponseLost = errors.New("network: connection reset while waiting for the answer")
	ErrTooSlow      = errors.New("network: no answer before the client's timeout")
)

// RoundTrip plays the network's fate on req.
func (n *Network) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	switch n.Fate {
	case FateOK:
		resp, d, err := n.forward(req, body)
		if err == nil {
			n.observe(d)
		}
		return resp, err
	case FateRequestLost:
		return nil, ErrRequestLost
	case FateResponseLost:
		// The server finishes its work even though the client is gone:
		// the request is detached from the client's cancellation.
		_, d, err := n.forward(detach(req), body)
		if err != nil {
			return nil, err
		}
		n.observe(d)
		return nil, ErrResponseLost
	case FateSlow:
		return n.slow(req, body)
	case FateDuplicate:
		return n.duplicate(req, body)
	}
	return nil, fmt.Errorf("network: unknown fate %q", n.Fate)
}

func (n *Network) slow(req *http.Request, body []byte) (*http.Response, error) {
	ctx := req.Context()
	late := detach(req)
	arrived := make(chan struct{})
	spawn := n.Spawn
	if spawn == nil {
		spawn = func(f func()) { go f() }
	}
	spawn(func() {
		defer close(arrived)
		if _, d, err := n.forward(late, body); err == nil {
			n.observe(d)
		}
	})
	if _, ok := ctx.Deadline(); !ok {
		<-arrived // a client without a timeout waits for ever on a real slow link; here, for the answer
		return nil, ErrTooSlow
	}
	<-ctx.Done()
	return nil, fmt.Errorf("%w: %w", ErrTooSlow, ctx.Err())
}

func (n *Network) duplicate(req *http.Request, body []byte) (*http.Response, error) {
	type result struct {
		resp *http.Response
		d    Delivery
		err  error
	}
	second := make(chan result, 1)
	copy2 := detach(req)
	go func() { // joined below before RoundTrip returns
		r, d, err := n.forward(copy2, body)
		second <- result{r, d, err}
	}()
	resp, d, err := n.forward(req, body)
	r2 := <-second
	if err == nil {
		n.observe(d)
	}
	if r2.err == nil {
		n.observe(r2.d)
	}
	return resp, err
}

// forward sends req to the server and reads the whole answer, so the network
// knows what the server did before deciding what the client gets.
func (n *Network) forward(req *http.Request, body []byte) (*http.Response, Delivery, error) {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	resp, err := n.Next.RoundTrip(r)
	if err != nil {
		return nil, Delivery{}, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, Delivery{}, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, Delivery{Status: resp.StatusCode, Outcome: OutcomeOf(resp.StatusCode, resp.Header)}, nil
}

func (n *Network) observe(d Delivery) {
	if n.Observe != nil {
		n.Observe(d)
	}
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// detach returns a copy of req that the client's timeout does not cancel.
func detach(req *http.Request) *http.Request {
	return req.Clone(context.WithoutCancel(req.Context()))
}

// OutcomeOf tells what the server did from its answer to a charge request.
func OutcomeOf(status int, h http.Header) Outcome {
	switch {
	case status == http.StatusCreated && h.Get("Idempotent-Replayed") == "true":
		return OutcomeReplayed
	case status == http.StatusCreated:
		return OutcomeCharged
	case status == http.StatusOK:
		return OutcomeDuplicate
	case status == http.StatusConflict:
		return OutcomeInFlight
	case status == http.StatusUnprocessableEntity:
		return OutcomeMismatch
	case status >= 500:
		return OutcomeFailed
	}
	return OutcomeRejected
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(h http.Header) time.Duration {
	s, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}
