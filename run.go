package main

import (
	"context"
	"errors"
	"expvar"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"time"

	"idemlab/sim/client"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/notify"
	"idemlab/sim/store"
	"idemlab/views"
	"idemlab/web"
)

// run starts the lab and serves until ctx ends, then shuts down gracefully:
// the listener closes, in-flight requests finish, background work stops.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return serve(ctx, args, getenv, stdout, hooks{})
}

// hooks are the points where a test stops the lab at one exact moment
// (the crash tests), or sets what no flag may; the lab itself runs with none.
type hooks struct {
	afterConsumerCommit func()        // between the consumer's commit and its ack
	labIdle             time.Duration // below -lab-idle's range: the soak's labs idle out in seconds
	lease               time.Duration // the lease on a PostgreSQL database: a death is seen sooner
}

// flags are the lab's command line.
type flags struct {
	addr, db, nats, redis, smtp, debug string
	verbose                            bool
	labIdle                            time.Duration
	maxLabs, maxInFlight, maxStreams   int
	trustProxy                         web.Proxies
}

// parseFlags reads the command line; help is true when -h asked for the
// usage, which has been written.
func parseFlags(args []string, getenv func(string) string, stdout io.Writer) (f flags, help bool, err error) {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.StringVar(&f.addr, "addr", envOr(getenv, "IDEMLAB_ADDR", "127.0.0.1:8080"), "address to listen on (env IDEMLAB_ADDR)")
	fs.StringVar(&f.db, "db", envOr(getenv, "IDEMLAB_DB", "idemlab.db"), "SQLite database file, :memory:, or a PostgreSQL URL postgres://user@host/db (env IDEMLAB_DB)")
	fs.BoolVar(&f.verbose, "v", false, "log every request")
	fs.DurationVar(&f.labIdle, "lab-idle", labs.DefaultLabIdle, "remove a private lab untouched for this long, with everything in it; "+labIdleRange.String())
	fs.IntVar(&f.maxLabs, "max-labs", labs.DefaultMaxLabs, "labs the server holds at most, demo included; past it, new labs are refused with 503; "+maxLabsRange.String())
	fs.IntVar(&f.maxInFlight, "max-inflight", labs.DefaultMaxInFlight, "simulated requests in flight across all labs (races, retries); past it, 503; "+maxInFlightRange.String())
	fs.IntVar(&f.maxStreams, "max-streams", web.DefaultMaxStreams, "live streams (open pages) across all labs; past it, 503; "+maxStreamsRange.String())
	fs.StringVar(&f.nats, "nats", envOr(getenv, "IDEMLAB_NATS", ""), "an external NATS server for the queue (nats://host:4222); default: one embedded, its store beside the database (env IDEMLAB_NATS)")
	fs.StringVar(&f.redis, "redis", envOr(getenv, "IDEMLAB_REDIS", ""), "a real Redis for protection set-nx (redis://host:6379/0); default: one embedded in the process (env IDEMLAB_REDIS)")
	fs.StringVar(&f.smtp, "smtp", envOr(getenv, "IDEMLAB_SMTP", ""), "an external SMTP server for the lab's emails (host:port, e.g. Mailpit); default: the lab's own mailbox, embedded (env IDEMLAB_SMTP)")
	fs.StringVar(&f.debug, "debug", "", "serve pprof and expvar on this address (loopback only, for profiling), e.g. 127.0.0.1:6060")
	fs.Func("trust-proxy", "reverse proxies (CIDR,… e.g. 127.0.0.1/32) whose Forwarded or X-Forwarded-For names the client; default none: the connection's address", func(s string) (err error) {
		f.trustProxy, err = web.ParseProxies(s)
		return err
	})
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, true, nil // -h asked for the usage, and got it
		}
		return f, false, err
	}
	return f, false, nil
}

// serve is run, with the test's hooks.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, hk hooks) error {
	f, help, err := parseFlags(args, getenv, stdout)
	if err != nil || help {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	if hk.labIdle > 0 {
		f.labIdle = hk.labIdle
	}
	tuneGC(getenv)
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: level}))
	db, err := store.OpenWith(ctx, f.db, store.Options{Lease: hk.lease, Log: logger})
	if err != nil {
		return err
	}
	defer db.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.addr, err)
	}
	defer ln.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	defer transport.CloseIdleConnections()
	h, err := house.Open(ctx, houseConfig(f, db, logger, selfURL(ln.Addr().(*net.TCPAddr)), transport, hk))
	if err != nil {
		return err
	}
	defer h.Close()
	if f.debug != "" {
		stopDebug, err := serveDebug(f.debug, logger)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	return listen(ctx, ln, h, web.NewServer(h, logger, web.Options{MaxStreams: f.maxStreams, TrustProxy: f.trustProxy}), logger, shown(f.db))
}

// houseConfig is the house the flags describe: the broker's store beside
// the database (in the working directory for PostgreSQL; nowhere for
// :memory:, which keeps nothing), every part embedded unless a flag names
// a real server.
func houseConfig(f flags, db *store.Store, logger *slog.Logger, self string, rt http.RoundTripper, hk hooks) house.Config {
	queueDir := ""
	switch {
	case store.IsPostgres(f.db):
		queueDir = "jetstream"
	case f.db != ":memory:":
		queueDir = filepath.Join(filepath.Dir(f.db), "jetstream")
	}
	return house.Config{Store: db, Logger: logger,
		Labs: labs.Config{LabIdle: f.labIdle, MaxLabs: f.maxLabs, MaxInFlight: f.maxInFlight},
		Notify: notify.Config{WithQueue: true, NATS: f.nats, QueueDir: queueDir, WithMailbox: true, SMTP: f.smtp,
			Email: views.Email, AfterConsumerCommit: hk.afterConsumerCommit},
		KV: true, Redis: f.redis, Client: client.Config{BaseURL: self, Transport: rt}}
}

// shown is the database as the log names it: never a password.
func shown(db string) string {
	if store.IsPostgres(db) {
		if u, err := url.Parse(db); err == nil {
			return u.Redacted()
		}
	}
	return db
}

// listen serves handler on ln until ctx ends, then shuts down: the
// simulated clients stop retrying, requests already at the server finish,
// the live streams end.
func listen(ctx context.Context, ln net.Listener, h *house.House, handler *web.Server, logger *slog.Logger, db string) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	srv.RegisterOnShutdown(handler.Close) // live streams end, or Shutdown would wait for them
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("idempotency lab listening", "url", "http://"+ln.Addr().String()+"/", "db", db)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	h.Stop()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	handler.Close()
	if errors.Is(<-served, http.ErrServerClosed) {
		logger.Info("stopped")
	}
	return err
}

// serveDebug serves Go's profiler and expvar (memory statistics) on addr,
// a loopback address (check): they say much about the process.
func serveDebug(addr string, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/vars", expvar.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	logger.Info("debug endpoints listening", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { srv.Close(); <-done }, nil
}

// selfURL is the URL the lab's simulated client uses to reach the server:
// an unspecified listen address (0.0.0.0, ::) is reached over loopback.
func selfURL(a *net.TCPAddr) string {
	ip := a.IP
	switch {
	case ip == nil || ip.IsUnspecified() && ip.To4() != nil:
		ip = net.IPv4(127, 0, 0, 1)
	case ip.IsUnspecified():
		ip = net.IPv6loopback
	}
	return "http://" + net.JoinHostPort(ip.String(), fmt.Sprint(a.Port))
}

// The lab's garbage collector, unless the environment sets GOGC or
// GOMEMLIMIT: a request allocates much and keeps little, and with Go's
// default (a collection at every doubling of a live heap of a few tens of
// MiB) collecting took a tenth of the charge path's CPU (docs/load.md §8).
// The soft limit keeps the heap's room bounded all the same.
const (
	gcPercent   = 400
	memoryLimit = 512 << 20
)

func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
