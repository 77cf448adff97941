package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The ranges of the numeric flags. A value outside is refused at start,
// never replaced by a default.
var (
	// A lab idle for less than a minute would be removed under a page
	// someone is reading; a year is as long as any class runs.
	labIdleRange = durationRange{time.Minute, 365 * 24 * time.Hour}
	// demo and one lab more at least.
	maxLabsRange = intRange{2, 1_000_000}
	// A race of 64 must fit; each request in flight is a loopback
	// connection, and the ports run out near 28,000.
	maxInFlightRange = intRange{64, 10_000}
	// Each stream is a connection held open.
	maxStreamsRange = intRange{1, 100_000}
)

type intRange struct{ lo, hi int }

func (r intRange) String() string { return fmt.Sprintf("%d to %d", r.lo, r.hi) }

type durationRange struct{ lo, hi time.Duration }

func (r durationRange) String() string { return short(r.lo) + " to " + short(r.hi) }

// short is d as a flag takes it, without the zero minutes and seconds.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// check refuses flags the lab cannot run with, naming each and what it
// takes; run calls it before it opens, starts or logs anything.
func (f flags) check() error {
	var errs []error
	bad := func(flag, value, rule string) {
		errs = append(errs, fmt.Errorf("-%s %s: %s", flag, value, rule))
	}
	between := func(flag string, v int, r intRange) {
		if v < r.lo || v > r.hi {
			bad(flag, strconv.Itoa(v), "out of range: "+r.String())
		}
	}
	between("max-labs", f.maxLabs, maxLabsRange)
	between("max-inflight", f.maxInFlight, maxInFlightRange)
	between("max-streams", f.maxStreams, maxStreamsRange)
	if f.labIdle < labIdleRange.lo || f.labIdle > labIdleRange.hi {
		bad("lab-idle", short(f.labIdle), "out of range: "+labIdleRange.String())
	}
	if f.db == "" {
		bad("db", `""`, "empty: give a SQLite file, :memory: or a postgres:// URL")
	}
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		bad("addr", f.addr, "must be host:port, such as 127.0.0.1:8080 (port 0: any free one)")
	}
	if f.smtp != "" && !hostPort(f.smtp) {
		bad("smtp", f.smtp, "must be host:port with a port from 1 to 65535, such as 127.0.0.1:1025")
	}
	if f.redis != "" {
		if _, err := redis.ParseURL(f.redis); err != nil {
			bad("redis", secretless(f.redis), "must be a URL such as redis://host:6379/0")
		}
	}
	if f.debug != "" && !loopback(f.debug) {
		bad("debug", f.debug, "must be a loopback address, such as 127.0.0.1:6060")
	}
	return errors.Join(errs...)
}

// hostPort reports whether s is a host and a port number to dial.
func hostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	return err == nil && host != "" && perr == nil && n >= 1 && n <= 65535
}

// secretless is a URL as an error may show it: without its password,
// even when it does not parse.
func secretless(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	if at := strings.LastIndex(s, "@"); at >= 0 {
		scheme, _, found := strings.Cut(s[:at], "://")
		if !found {
			scheme = ""
		} else {
			scheme += "://"
		}
		return scheme + "…@" + s[at+1:]
	}
	return s
}

// loopback reports whether addr is a loopback IP address and a port.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}
