// Package client is the lab's simulated client: it runs operations (one
// intent: "charge order-42 1500 ₽") as real HTTP requests to the lab's own
// charge endpoint, through a network that plays each attempt's fate, and
// retries as the lab's policy says. It records every attempt, what the
// client saw and what the server did. It takes the server's base URL and
// the transport that reaches it, so it runs against any server, or none.
package client

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Config is what a Client depends on.
type Config struct {
	BaseURL   string            // scheme://host:port of the lab's server
	Transport http.RoundTripper // reaches it; default http.DefaultTransport
	Store     *store.Store
	Labs      *labs.Registry
	Bus       *events.Bus
	Clock     clock.Clock // the database's: every wait of the client goes by it
	Log       *slog.Logger
}

// Client runs the labs' operations. It owns every goroutine it starts
// (the copies of requests on their way); Close waits for them.
type Client struct {
	Config
	limits *labs.Limits

	ctx    context.Context // ends when the client stops
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a client of the labs' server.
func New(cfg Config) *Client {
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	c := &Client{Config: cfg, limits: cfg.Labs.Limits()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// Stop tells the client to stop: retry loops end and attempts stop
// waiting. Requests already at the server still finish.
func (c *Client) Stop() { c.cancel() }

// Close stops the client and waits for the answers still on their way.
func (c *Client) Close() {
	c.cancel()
	c.wg.Wait()
}

// spawn runs f in a goroutine that Close waits for.
func (c *Client) spawn(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// bound returns a context that ends when ctx or the client ends, but not
// when a caller merely hangs up: the client finishes its operation regardless.
func (c *Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(c.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// Room is the client's part in a lab's life: its history, the operations
// and their attempts. A reset numbers operations from 1 again, so that the
// lab's seed draws as before.
func (c *Client) Room() labs.Room {
	return labs.Tables{
		Store: c.Store,
		Resets: []string{
			`DELETE FROM operations WHERE lab_id = ?1`, // and their attempts
			`UPDATE lab_counts SET op_seq = 0 WHERE lab_id = ?1`,
		},
		Purges: []string{
			`DELETE FROM attempts WHERE (lab_id, op_id, n) IN (SELECT lab_id, op_id, n FROM attempts WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM operations WHERE (lab_id, id) IN (SELECT lab_id, id FROM operations WHERE lab_id = ?1 LIMIT ?2)`,
		},
	}
}
