// Package keystest is what tests of a key-value store that stalls share: a
// redis-server of the test's own that it can stop (SIGSTOP) and continue,
// and a TCP proxy that holds what clients send, as a stopped server's
// socket does, in front of any server (the embedded miniredis).
package keystest

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Stalling is a store a test can stall and let go on.
type Stalling struct {
	URL        string // redis://…
	Stop, Cont func()
}

// RealRedis starts a redis-server of the test's own on a free port, with
// the extra arguments given (--requirepass …); Stop and Cont send it
// SIGSTOP and SIGCONT. Without redis-server the test skips, or fails
// under CI=true.
func RealRedis(tb testing.TB, extra ...string) Stalling {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("redis-server is not installed: CI must install it (.ci/run)")
		}
		tb.Skip("no redis-server here")
	}
	for try := 1; ; try++ {
		cmd, port, exited := startRedis(tb, bin, extra)
		if isRedis(port, exited) {
			tb.Cleanup(func() {
				cmd.Process.Signal(syscall.SIGCONT)
				cmd.Process.Kill()
				<-exited
			})
			return stalling(tb, cmd, port)
		}
		cmd.Process.Kill()
		<-exited
		if try == 3 {
			tb.Fatalf("redis-server did not answer on a free port, three times")
		}
	}
}

// startRedis starts redis-server on a port free a moment before: another
// process may take it first, and then this one exits (isRedis sees it).
func startRedis(tb testing.TB, bin string, extra []string) (*exec.Cmd, string, chan struct{}) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tb.TempDir()}, extra...)...)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	return cmd, port, exited
}

// isRedis waits until what listens on port answers PING as a Redis does
// (PONG, or a demand for the password), and reports false when the
// process exited first or another server took the port.
func isRedis(port string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 7)
		_, err = io.WriteString(c, "PING\r\n")
		if err == nil {
			_, err = io.ReadFull(c, buf)
		}
		c.Close()
		return err == nil && (string(buf[:5]) == "+PONG" || string(buf) == "-NOAUTH")
	}
	return false
}

// stalling is the Stalling of a started redis-server.
func stalling(tb testing.TB, cmd *exec.Cmd, port string) Stalling {
	sig := func(s syscall.Signal) func() {
		return func() {
			if err := cmd.Process.Signal(s); err != nil {
				tb.Error(err)
			}
		}
	}
	return Stalling{URL: "redis://127.0.0.1:" + port + "/0", Stop: sig(syscall.SIGSTOP), Cont: sig(syscall.SIGCONT)}
}

// Proxy passes TCP through to a server at target, and, between Stop and
// Cont, keeps what the clients send (as a stopped server's socket would)
// until Cont. url is the store's URL with the proxy's address in it:
// fmt.Sprintf(url, proxy address).
func Proxy(tb testing.TB, target, url string) Stalling {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &proxy{target: target}
	p.cond = sync.NewCond(&p.mu)
	var wg sync.WaitGroup
	tb.Cleanup(func() { p.release(); ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { p.serve(c) })
		}
	})
	return Stalling{URL: fmt.Sprintf(url, ln.Addr().String()), Stop: p.hold, Cont: p.release}
}

type proxy struct {
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	held   bool
}

func (p *proxy) hold() { p.mu.Lock(); p.held = true; p.mu.Unlock() }

func (p *proxy) release() {
	p.mu.Lock()
	p.held = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// serve passes one connection through; what the client sends while the
// proxy is held waits, and goes on (even after the client hung up, as the
// bytes in a socket do) once released.
func (p *proxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	back := make(chan struct{})
	go func() { io.Copy(c, s); close(back) }()
	defer func() { s.Close(); c.Close(); <-back }()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		p.mu.Lock()
		for p.held {
			p.cond.Wait()
		}
		p.mu.Unlock()
		if n > 0 {
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
