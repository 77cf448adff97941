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
	"time"

	"idemlab/sim"
	"idemlab/views"
	"idemlab/web"
)

// run starts the lab and serves until ctx ends, then shuts down gracefully:
// the listener closes, in-flight requests finish, background work stops.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", envOr(getenv, "IDEMLAB_ADDR", "127.0.0.1:8080"), "address to listen on (env IDEMLAB_ADDR)")
	dbPath := fs.String("db", envOr(getenv, "IDEMLAB_DB", "idemlab.db"), "SQLite database file, :memory:, or a PostgreSQL URL postgres://user@host/db (env IDEMLAB_DB)")
	verbose := fs.Bool("v", false, "log every request")
	labIdle := fs.Duration("lab-idle", sim.DefaultLabIdle, "remove a private lab untouched for this long, with everything in it")
	maxLabs := fs.Int("max-labs", sim.DefaultMaxLabs, "labs the server holds at most; past it, new labs are refused with 503")
	maxInFlight := fs.Int("max-inflight", sim.DefaultMaxInFlight, "simulated requests in flight across all labs (races, retries); past it, 503")
	maxStreams := fs.Int("max-streams", web.DefaultMaxStreams, "live streams (open pages) across all labs; past it, 503")
	natsURL := fs.String("nats", envOr(getenv, "IDEMLAB_NATS", ""), "an external NATS server for the queue (nats://host:4222); default: one embedded, its store beside the database (env IDEMLAB_NATS)")
	redisURL := fs.String("redis", envOr(getenv, "IDEMLAB_REDIS", ""), "a real Redis for protection set-nx (redis://host:6379/0); default: one embedded in the process (env IDEMLAB_REDIS)")
	smtpAddr := fs.String("smtp", envOr(getenv, "IDEMLAB_SMTP", ""), "an external SMTP server for the lab's emails (host:port, e.g. Mailpit); default: the lab's own mailbox, embedded (env IDEMLAB_SMTP)")
	debugAddr := fs.String("debug", "", "serve pprof and expvar on this address (loopback only, for profiling), e.g. 127.0.0.1:6060")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h asked for the usage, and got it
		}
		return err
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: level}))

	store, err := sim.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	queueDir, dbShown := "", *dbPath // with -db :memory: the broker keeps nothing either
	switch {
	case sim.IsPostgres(*dbPath):
		queueDir = "jetstream" // the embedded broker's store, in the working directory
		if u, err := url.Parse(*dbPath); err == nil {
			dbShown = u.Redacted() // never a password in the log
		}
	case *dbPath != ":memory:":
		queueDir = filepath.Join(filepath.Dir(*dbPath), "jetstream")
	}
	engine, err := sim.NewEngine(ctx, sim.Config{Store: store, Logger: logger,
		LabIdle: *labIdle, MaxLabs: *maxLabs, MaxInFlight: *maxInFlight,
		Queue: true, NATS: *natsURL, QueueDir: queueDir,
		Mailbox: true, SMTP: *smtpAddr, Email: views.Email,
		KV: true, Redis: *redisURL,
		Fault: getenv("IDEMLAB_FAULT")})
	if err != nil {
		return err
	}
	defer engine.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	self := selfURL(ln.Addr().(*net.TCPAddr))
	engine.SetSelf(self, &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second})

	handler := web.NewServer(engine, logger, web.Options{MaxStreams: *maxStreams})
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
	logger.Info("idempotency lab listening", "url", "http://"+ln.Addr().String()+"/", "db", dbShown)

	if *debugAddr != "" {
		stopDebug, err := serveDebug(*debugAddr, logger)
		if err != nil {
			srv.Close()
			<-served
			return err
		}
		defer stopDebug()
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	engine.Stop() // simulated clients stop retrying; requests already at the server finish
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	handler.Close()
	if errors.Is(<-served, http.ErrServerClosed) {
		logger.Info("stopped")
	}
	return err
}

// serveDebug serves Go's profiler and expvar (memory statistics) on addr,
// which must be a loopback address: they say much about the process.
func serveDebug(addr string, logger *slog.Logger) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("-debug %s: must be a loopback address, such as 127.0.0.1:6060", addr)
	}
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

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
