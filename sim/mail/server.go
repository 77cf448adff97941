// Package mail is the lab's mailbox: an SMTP server embedded in the process, and a
// sender that talks to it (or to any plain SMTP server) over TCP.
//
// The server takes mail only from a peer that signs in with the credentials
// it made at its start (Dest): the process that started it.
//
// The server hands every message it accepts to Config.Deliver. A message counts as
// delivered only when Deliver returns nil; otherwise the client is told to try again
// later (451), which is exactly the ambiguity the lab's lessons are about.
package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
)

// Config says how the server listens and where what it receives goes.
type Config struct {
	Addr          string        // loopback listen address; "" means "127.0.0.1:0" (a free port)
	Domain        string        // for the greeting; "" means "idemlab.test"
	MaxBytes      int64         // largest message; 0 means 64 KiB; bigger → 552, nothing delivered
	MaxRecipients int           // 0 means 10
	Timeout       time.Duration // read and write timeout; 0 means 30s; an idle peer is cut after it

	// Deliver is called once per accepted message, after DATA. Its context ends when
	// the server closes. An error or a panic makes the server answer 451 (temporary),
	// so the client does not count the message as delivered; an error that wraps
	// ErrRefused, 554: the message will never be taken. nil discards messages.
	Deliver func(ctx context.Context, r Received) error

	Logger *slog.Logger // nil discards; the server never writes to stderr on its own
}

// Server is the embedded SMTP server. Start listens and serves in a goroutine it owns.
type Server struct {
	srv        *smtp.Server
	ln         *listener
	user, pass string // this start's credentials: see Dest
	deliver    func(ctx context.Context, r Received) error
	log        *slog.Logger

	ctx    context.Context // given to Deliver; cancelled by Close
	cancel context.CancelFunc
	served chan struct{} // closed when the accept loop has returned

	mu       sync.Mutex
	closed   bool
	active   sync.WaitGroup // sessions inside Data; go-smtp runs BDAT ones in goroutines of its own
	once     sync.Once
	closeErr error
}

// Start listens on cfg.Addr and serves SMTP until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.MaxBytes < 0 || cfg.MaxRecipients < 0 || cfg.Timeout < 0 {
		return nil, errors.New("mail: negative limit in Config")
	}
	cfg = withDefaults(cfg)
	if err := loopback(cfg.Addr); err != nil { // the sign-in goes in plain text
		return nil, fmt.Errorf("mail: listen: %w", err)
	}
	l, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("mail: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		ln:      &listener{Listener: l, conns: make(map[*trackedConn]struct{})},
		user:    "idemlab-" + newSecret(8),
		pass:    newSecret(32),
		deliver: cfg.Deliver,
		log:     cfg.Logger,
		ctx:     ctx,
		cancel:  cancel,
		served:  make(chan struct{}),
	}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &session{server: s}, nil
	}))
	s.srv.Domain = cfg.Domain
	// AUTH PLAIN without TLS: the peer is this process, over loopback (auth.go).
	s.srv.AllowInsecureAuth = true
	// go-smtp refuses a message of exactly MaxMessageBytes: its reader runs out of
	// budget before it sees the end-of-data line. One byte more makes MaxBytes exact.
	s.srv.MaxMessageBytes = cfg.MaxBytes + 1
	s.srv.MaxRecipients = cfg.MaxRecipients
	s.srv.ReadTimeout = cfg.Timeout
	s.srv.WriteTimeout = cfg.Timeout
	s.srv.ErrorLog = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)

	go func() {
		defer close(s.served)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, net.ErrClosed) {
			s.log.Error("mail: serve", "err", err)
		}
	}()
	return s, nil
}

// withDefaults fills in the zero fields of cfg.
func withDefaults(cfg Config) Config {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Domain == "" {
		cfg.Domain = "idemlab.test"
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 64 << 10
	}
	if cfg.MaxRecipients == 0 {
		cfg.MaxRecipients = 10
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Addr returns the address the server listens on, such as "127.0.0.1:40123".
func (s *Server) Addr() string {
	return s.ln.Addr().String()
}

// Close stops listening, ends open sessions and cancels the context given to Deliver,
// then waits for every goroutine of the server, including a Deliver still running.
// It is safe to call more than once; later calls return what the first returned.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()

		// Stop accepting first and wait for the accept loop, so no connection can
		// arrive after the open ones are closed below.
		s.closeErr = s.ln.Close()
		<-s.served
		s.ln.closeConns()
		// Shutdown waits for go-smtp's connection goroutines; the error it returns is
		// from closing the listener a second time.
		_ = s.srv.Shutdown(context.Background())
		s.active.Wait()
	})
	return s.closeErr
}

// enter registers a session in Data so that Close can wait for it.
// It reports false once the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active.Add(1)
	return true
}

// listener remembers the connections it accepted, so that Close can end all of
// them: go-smtp's own Close misses one accepted but not yet registered.
type listener struct {
	net.Listener
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

// closeConns closes every connection still open.
func (l *listener) closeConns() {
	l.mu.Lock()
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// trackedConn removes itself from its listener when closed.
type trackedConn struct {
	net.Conn
	l *listener
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
