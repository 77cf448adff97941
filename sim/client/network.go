package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"idemlab/api"
	"idemlab/sim"
)

// Network is an http.RoundTripper that plays one fate on every request it
// carries, between the simulated client and the real server:
//
//   - ok: the request and its answer pass;
//   - request-lost: the request never reaches the server;
//   - response-lost: the server does the work, the answer is dropped on the way back;
//   - slow: the answer comes only after the client's deadline (the client gives up first);
//   - duplicate: the server receives the request twice; the client sees the first answer.
//
// Whatever the client does, a request that left for the server runs there
// to its end: Observe is told of every copy's fate when it is known, which may
// be after RoundTrip has returned (the client timed out). Spawn runs those
// waits under their owner, so that nothing outlives the client.
type Network struct {
	Fate    sim.Fate
	Next    http.RoundTripper
	Observe func(sim.Delivery)
	Spawn   func(func())
}

// Errors the simulated network returns to the client. The client cannot tell
// the first two apart by anything but their words: that is the point.
var (
	ErrRequestLost  = errors.New("network: connection reset before the request reached the server")
	ErrResponseLost = errors.New("network: connection reset while waiting for the answer")
	ErrTooSlow      = errors.New("network: no answer before the client's timeout")
	ErrDropped      = errors.New("network: the server closed the connection without an answer")
)

// RoundTrip plays the network's fate on req.
func (n *Network) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	var first, second <-chan delivered
	for copy := 1; copy <= n.Fate.Copies(); copy++ {
		ch := n.deliver(req, body, copy)
		if copy == 1 {
			first = ch
		} else {
			second = ch
		}
	}
	switch n.Fate {
	case sim.FateRequestLost:
		return nil, ErrRequestLost
	case sim.FateSlow:
		if _, ok := ctx.Deadline(); !ok {
			<-first // without a timeout the client waits; here, for the answer
			return nil, ErrTooSlow
		}
		<-ctx.Done()
		return nil, fmt.Errorf("%w: %w", ErrTooSlow, ctx.Err())
	case sim.FateOK, sim.FateDuplicate, sim.FateResponseLost:
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case d := <-first:
			if d.err != nil {
				return nil, d.err
			}
			if n.Fate == sim.FateResponseLost {
				return nil, ErrResponseLost
			}
			if second != nil { // both copies travel together; the first answer wins
				select {
				case <-second:
				case <-ctx.Done():
				}
			}
			return d.resp, nil
		}
	}
	return nil, fmt.Errorf("network: unknown fate %q", n.Fate)
}

type delivered struct {
	resp *http.Response
	err  error
}

// deliver sends one copy of req to the server, detached from the client's
// cancellation: once on its way, the request reaches the server and the
// server finishes, whether or not the client still waits.
func (n *Network) deliver(req *http.Request, body []byte, copy int) <-chan delivered {
	ch := make(chan delivered, 1)
	spawn := n.Spawn
	if spawn == nil {
		spawn = func(f func()) { go f() }
	}
	r := req.Clone(context.WithoutCancel(req.Context()))
	spawn(func() {
		resp, d, err := n.forward(r, body)
		d.Copy = copy
		if err != nil && d.Outcome == "" {
			d.Outcome, d.Error = sim.OutcomeNotReached, err.Error()
		}
		if n.Observe != nil {
			n.Observe(d)
		}
		ch <- delivered{resp, err}
	})
	return ch
}

// forward sends req to the server and reads the whole answer, so the network
// knows what the server did before deciding what the client gets.
func (n *Network) forward(req *http.Request, body []byte) (*http.Response, sim.Delivery, error) {
	// Whether the whole request went out: an error after that is the server
	// dropping the connection with the request in its hands.
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) }}
	r := req.Clone(httptrace.WithClientTrace(req.Context(), trace))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	// Without GetBody the transport never sends the request again by itself:
	// it would, for one with an Idempotency-Key on a reused connection, and
	// retrying is the simulated client's business alone.
	r.GetBody = nil
	resp, err := n.Next.RoundTrip(r)
	if err != nil {
		if wrote.Load() && req.Context().Err() == nil {
			return nil, sim.Delivery{Outcome: sim.OutcomeDropped, Error: err.Error()}, ErrDropped
		}
		return nil, sim.Delivery{}, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, sim.Delivery{}, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, sim.Delivery{Status: resp.StatusCode, Outcome: api.OutcomeOf(req.Method, resp.StatusCode, resp.Header, b)}, nil
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}
