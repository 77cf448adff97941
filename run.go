package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"idemlab/sim"
	"idemlab/web"
)

// run starts the lab and serves until ctx ends, then shuts down gracefully:
// the listener closes, in-flight requests finish, background work stops.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", envOr(getenv, "IDEMLAB_ADDR", "127.0.0.1:8080"), "address to listen on (env IDEMLAB_ADDR)")
	dbPath := fs.String("db", envOr(getenv, "IDEMLAB_DB", "idemlab.db"), "SQLite database file, or :memory: (env IDEMLAB_DB)")
	verbose := fs.Bool("v", false, "log every request")
	if err := fs.Parse(args[1:]); err != nil {
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
	engine, err := sim.NewEngine(ctx, sim.Config{Store: store, Logger: logger})
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

	handler := web.NewServer(engine, logger)
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
	logger.Info("idempotency lab listening", "url", "http://"+ln.Addr().String()+"/", "db", *dbPath)

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
