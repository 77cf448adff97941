package broker

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	readyTimeout = 5 * time.Second // for the embedded server to accept connections
	drainTimeout = 5 * time.Second // for Close to flush the connection
)

// connect starts the embedded server when cfg has no URL, then connects to it or to cfg.URL.
func (b *Broker) connect(cfg Config) error {
	opts := []nats.Option{
		nats.Name("idemlab"),
		nats.DrainTimeout(drainTimeout),
		nats.ClosedHandler(func(*nats.Conn) { close(b.closed) }),
		// One line when the server stops answering, one when it is back.
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				b.watch.Failed(err, downMeans)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { b.watch.Ok() }),
		nats.ConnectHandler(func(*nats.Conn) { b.watch.Ok() }), // the first connection, made late
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			b.log.Warn("broker: async error", "err", err)
		}),
	}
	url := cfg.URL
	if url == "" {
		if err := b.embed(cfg.StoreDir); err != nil {
			return err
		}
		opts = append(opts, nats.InProcessServer(b.ns))
	} else {
		// A server down at start does not stop the lab: the connection is made as soon as it answers.
		opts = append(opts, nats.MaxReconnects(-1), nats.ReconnectWait(time.Second), nats.RetryOnFailedConnect(true))
	}

	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return fmt.Errorf("broker: connect: %w", err)
	}
	b.nc = nc
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("broker: jetstream: %w", err)
	}
	b.js = js
	return nil
}

// embed starts a NATS server inside the process, reachable only through nats.InProcessServer. Without
// a storeDir it gets a temporary one, which Close removes: the stream is in memory then, but JetStream
// still wants a directory of its own rather than a shared default under os.TempDir.
func (b *Broker) embed(storeDir string) error {
	if storeDir == "" {
		dir, err := os.MkdirTemp("", "idemlab-nats-") // 0700
		if err != nil {
			return fmt.Errorf("broker: store: %w", err)
		}
		b.tmpDir, storeDir = dir, dir
	} else if err := ownerOnly(storeDir); err != nil {
		return err
	}
	ns, err := server.NewServer(&server.Options{
		ServerName: "idemlab",
		DontListen: true,
		JetStream:  true,
		StoreDir:   storeDir,
		NoLog:      true,
		NoSigs:     true, // otherwise SIGTERM makes the server call os.Exit, skipping our shutdown
	})
	if err != nil {
		return fmt.Errorf("broker: embedded server: %w", err)
	}
	b.ns = ns
	ns.Start()
	if !ns.ReadyForConnections(readyTimeout) {
		return errors.New("broker: embedded server not ready")
	}
	return nil
}

// ownerOnly makes the store's directory, readable by its owner only: it
// holds every lab's messages, and their ids. One that exists with wider
// permissions (made by an older release) is narrowed.
func ownerOnly(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("broker: store: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("broker: store: %w", err)
	}
	return nil
}

// drain lets in-flight publishes and acks finish, then closes the connection and waits until it is.
func (b *Broker) drain() {
	if err := b.nc.Drain(); err != nil {
		b.nc.Close() // closed already, or reconnecting: nothing to drain
	}
	t := time.NewTimer(drainTimeout + time.Second)
	defer t.Stop()
	select {
	case <-b.closed:
	case <-t.C:
		b.log.Warn("broker: drain timed out")
		b.nc.Close()
		<-b.closed
	}
}
