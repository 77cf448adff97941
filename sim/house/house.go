// Package house wires the lab's rooms into one whole: it opens each, in
// the order they depend on each other, gives the labs their rooms, starts
// what runs in the background, and stops it all in reverse. It holds no
// logic of its own: what the lab does is in the rooms.
package house

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/class"
	"idemlab/sim/client"
	"idemlab/sim/client/storm"
	"idemlab/sim/clock"
	"idemlab/sim/cluster"
	"idemlab/sim/compare"
	"idemlab/sim/events"
	"idemlab/sim/idempotency"
	"idemlab/sim/keys"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
	"idemlab/sim/lesson"
	"idemlab/sim/notify"
	"idemlab/sim/orders"
	"idemlab/sim/outage"
	"idemlab/sim/scenario"
	"idemlab/sim/stepped"
	"idemlab/sim/store"
)

// Config is what the house is made of: the store, the clock, the limits,
// the parts beside the ledger, and where the lab's own server listens.
type Config struct {
	Store  *store.Store  // the caller's: it closes it after the house
	Clock  clock.Clock   // default the real one
	Logger *slog.Logger  // default discards
	Labs   labs.Config   // the limits (Store, Clock, Bus, Log are set here)
	Notify notify.Config // the broker and the mailbox (Store, Labs, Bus, Clock, Log are set here)
	// KV runs the key-value store of protection "set-nx": a server of the
	// Redis protocol embedded in the process, or the Redis at Redis
	// (redis://host:6379/0). Without it "set-nx" is refused (503).
	KV    bool
	Redis string
	// Client is where the simulated client sends its requests (BaseURL,
	// Transport): the lab's own server.
	Client client.Config
}

// House is the lab: every room, wired.
type House struct {
	Store     *store.Store
	Clock     clock.Clock // the database's
	Bus       *events.Bus
	Labs      *labs.Registry
	Records   *idempotency.Records
	Keys      *idempotency.Keys
	Ledger    *ledger.Ledger
	Client    *client.Client
	Notify    *notify.Notifier
	Orders    *orders.Orders
	Scenarios *scenario.Scenarios
	Lessons   *lesson.Lessons
	Classes   *class.Classes
	Stepped   *stepped.Races
	Compare   *compare.Comparisons
	Storms    *storm.Storms

	// DB follows the database's outages: logged once each, by whoever
	// meets one first (a charge, /healthz).
	DB *outage.Watch

	kv      *keys.Store
	cluster *cluster.Cluster
	log     *slog.Logger
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Open opens every room over cfg.Store, mends what a crash left behind, and
// starts the background work: the labs' housekeeping, the email's relay and
// mailer, the other processes' live updates.
func Open(ctx context.Context, cfg Config) (*House, error) {
	if cfg.Store == nil {
		return nil, errors.New("house: no store")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Store.MeasureSkew(ctx, time.Now); err != nil { // expiry and lock timeouts go by the database's clock
		return nil, err
	}
	h := &House{Store: cfg.Store, Clock: cfg.Store.Clock(cfg.Clock), log: cfg.Logger}
	h.Bus = events.New(h.Clock.Now)
	h.DB = outage.New(h.log, sim.PartDatabase, "flag", "-db")
	if err := h.open(ctx, cfg); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// open makes the rooms, gives the labs their rooms, and starts them; first
// it joins the other processes on the database, or refuses to start beside
// them with parts it would keep to itself (shared.go).
func (h *House) open(ctx context.Context, cfg Config) (err error) {
	if err := join(ctx, cfg); err != nil {
		return err
	}
	if cfg.KV || cfg.Redis != "" {
		if h.kv, err = keys.Start(ctx, keys.Config{URL: cfg.Redis, Logger: h.log, Given: h.givenBack}); err != nil {
			return err
		}
	}
	lc := cfg.Labs
	lc.Store, lc.Clock, lc.Bus, lc.Log = h.Store, h.Clock, h.Bus, h.log
	if h.Labs, err = labs.New(ctx, lc); err != nil {
		return err
	}
	if h.Records, err = idempotency.New(ctx, h.Store, h.Clock); err != nil {
		return err
	}
	nc := cfg.Notify
	nc.Store, nc.Labs, nc.Bus, nc.Clock, nc.Log, nc.DB = h.Store, h.Labs, h.Bus, h.Clock, h.log, h.DB
	if h.Notify, err = notify.Start(ctx, nc); err != nil {
		return fmt.Errorf("house: %w", err)
	}
	h.Ledger, err = ledger.New(ctx, ledger.Config{Store: h.Store, Labs: h.Labs, Records: h.Records, KV: h.kv,
		Owed: h.Notify, Bus: h.Bus, Clock: h.Clock, Log: h.log, DB: h.DB})
	if err != nil {
		return err
	}
	cc := cfg.Client
	cc.Store, cc.Labs, cc.Bus, cc.Clock, cc.Log = h.Store, h.Labs, h.Bus, h.Clock, h.log
	h.Client = client.New(cc)
	h.Storms = storm.New(storm.Config{BaseURL: cc.BaseURL, Transport: cc.Transport, Store: h.Store, Labs: h.Labs, Bus: h.Bus, Log: h.log})
	h.Orders = orders.New(h.Store, h.Labs, h.Bus, h.Clock)
	h.Keys = idempotency.NewKeys(h.Records, h.Labs, h.kv, h.Bus, h.log)
	h.Stepped = stepped.New(stepped.Config{Store: h.Store, Labs: h.Labs, Client: h.Client, Bus: h.Bus, Clock: h.Clock, Log: h.log})
	h.Scenarios = scenario.New(h.Store, h.Labs, h.Client, h.Ledger, h.Orders, h.Keys, h.Stepped, h.Storms, h.log)
	h.Lessons = lesson.New(h.Store, h.Labs, h.Scenarios, h.Ledger, h.Notify, h.Storms, h.Bus, h.log)
	h.Classes = class.New(h.Store, h.Labs, h.Lessons, h.Scenarios, h.Bus, h.Clock, h.log)
	h.Compare = compare.New(h.Store, h.Labs, h.Client, h.Ledger, h.Notify, h.Scenarios, h.Clock)
	return h.start(ctx)
}

// start gives the labs their rooms, in the order their rows go, and starts
// what runs in the background.
func (h *House) start(ctx context.Context) error {
	err := h.Labs.Start(ctx, h.Client.Room(), h.Ledger.Room(), h.Records.Room(), h.Lessons.Room(),
		h.Scenarios.Room(), h.Notify.Room(), h.Orders.Room(), h.Keys.Room(), h.Compare.Room(), h.Classes.Room(), h.Stepped.Room(), h.Storms.Room())
	if err != nil {
		return err
	}
	h.cluster, err = cluster.Start(ctx, cluster.Config{Store: h.Store, Bus: h.Bus, Clock: h.Clock, Log: h.log, DB: h.DB, Heard: h.heard})
	if err != nil {
		return fmt.Errorf("house: listen to other processes: %w", err)
	}
	if h.cluster != nil {
		h.Records.Trust(h.cluster.Trusted) // replays from memory while every change of another process is heard
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.cancel = cancel
	h.wg.Go(func() { h.Labs.Janitor().Run(bg) })
	h.Notify.Run()
	return nil
}

// heard brings this process up to date with an event of another process.
func (h *House) heard(ctx context.Context, ev sim.Event) error {
	if ev.Kind == sim.EventCharge && ev.Queued && h.Notify.Queues() {
		h.Notify.WakeRelay() // a message waits in the outbox
	}
	return h.Labs.Heard(ctx, ev)
}

// Stop tells the simulated client to stop: retry loops end and attempts
// stop waiting, and stepped races are aborted. Requests already at the
// server still finish.
func (h *House) Stop() {
	if h.Stepped != nil {
		h.Stepped.Close()
	}
	if h.Storms != nil {
		h.Storms.Close()
	}
	if h.Client != nil {
		h.Client.Stop()
	}
}

// Close stops everything the house started and waits for it, in reverse:
// the client and its answers on their way, the housekeeping, the other
// processes' updates, the email's path, the key-value store. The store is
// the caller's to close.
func (h *House) Close() {
	if h.Stepped != nil {
		h.Stepped.Close()
	}
	if h.Storms != nil {
		h.Storms.Close()
	}
	if h.Client != nil {
		h.Client.Close()
	}
	if h.cancel != nil {
		h.cancel()
	}
	h.wg.Wait()
	h.cluster.Close()
	if h.Notify != nil {
		h.Notify.Close()
	}
	if h.kv != nil {
		h.kv.Close()
	}
}

// givenBack tells a lab that a set-nx key owed back to Redis is free: Redis
// answered again.
func (h *House) givenBack(lab, key string) {
	h.Bus.Publish(sim.Event{Lab: lab, Kind: sim.EventGiveBack, Key: &key, GiveBack: sim.GaveBackLate})
}

// Health checks that the ledger can be written now.
func (h *House) Health(ctx context.Context) error {
	if err := h.Store.Health(ctx, h.Clock.Now()); err != nil {
		h.DB.Failed(err, "/healthz answers 503 until it does")
		return err
	}
	h.DB.Ok()
	return nil
}

// Parts reports, for each part beside the ledger that this lab runs (the
// key-value store, the broker), whether it answers now.
func (h *House) Parts(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	if h.kv != nil {
		out[sim.PartKV] = h.kv.Healthy(ctx)
	}
	if h.Notify != nil && h.Notify.Queues() {
		out[sim.PartBroker] = h.Notify.BrokerHealthy()
	}
	return out
}
