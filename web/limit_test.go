package web

import (
	"strconv"
	"testing"
	"time"
)

// An address's bucket is forgotten once it has filled up again, so the
// limiter holds only the addresses of the last minute; and forgetting one
// changes nothing for it.
func TestLimiterForgetsIdleAddresses(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter("lab-rate", "new labs", Rate{Every: 2 * time.Second, Burst: 3}, func() time.Time { return now })
	for i := range 10_000 {
		if ok, _ := l.allow("10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256)); !ok {
			t.Fatalf("address %d refused its first request", i)
		}
	}
	if got := l.size(); got != 10_000 {
		t.Fatalf("%d addresses held, want 10000", got)
	}
	for range 3 {
		l.allow("192.0.2.1")
	}
	if ok, wait := l.allow("192.0.2.1"); ok || wait != 2*time.Second {
		t.Errorf("a 4th request at once: ok %v, wait %v; want refused, 2s", ok, wait)
	}
	now = now.Add(500 * time.Millisecond)
	if ok, wait := l.allow("192.0.2.1"); ok || wait != 1500*time.Millisecond {
		t.Errorf("half a second on: ok %v, wait %v; want refused, 1.5s", ok, wait)
	}
	now = now.Add(6 * time.Second) // 3 tokens' worth: everything has filled up again
	if ok, _ := l.allow("192.0.2.1"); !ok {
		t.Error("refused after the bucket filled up again")
	}
	if got := l.size(); got != 1 {
		t.Errorf("%d addresses held after they all went idle, want 1", got)
	}
}

// Past maxBuckets addresses at once (an attack from many addresses), a
// new address waits rather than growing the limiter without end.
func TestLimiterIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter("x", "x", Rate{Every: time.Second, Burst: 1}, func() time.Time { return now })
	l.limit = 100
	for i := range 100 {
		l.allow("10.0.0." + strconv.Itoa(i))
	}
	if ok, _ := l.allow("10.0.1.1"); ok || l.size() != 100 {
		t.Errorf("a new address past the bound: ok %v, %d held", ok, l.size())
	}
	now = now.Add(time.Second)
	if ok, _ := l.allow("10.0.1.1"); !ok || l.size() != 1 {
		t.Errorf("once the others are idle: ok %v, %d held", ok, l.size())
	}
}

// An IPv6 client is its /64, where one host is usually given the whole
// network: it cannot make new buckets by changing its last 64 bits.
func TestClientKey(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"192.0.2.7":                 "192.0.2.7",
		"::ffff:192.0.2.7":          "192.0.2.7",
		"2001:db8:1:2:3:4:5:6":      "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff::1": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":           "2001:db8:1:3::/64",
		"not an address":            "not an address",
	} {
		if got := clientKey(addr); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", addr, got, want)
		}
	}
}

// A limit says itself in words in the problem's detail.
func TestRateString(t *testing.T) {
	t.Parallel()
	for r, want := range map[Rate]string{
		{Every: 2 * time.Second, Burst: 30}:        "30 at once, then 30 a minute",
		{Every: 10 * time.Second, Burst: 3}:        "3 at once, then 6 a minute",
		{Every: time.Hour, Burst: 1}:               "1 at once, then one every 1 h",
		{Every: 5 * time.Minute, Burst: 2}:         "2 at once, then one every 5 min",
		{Every: 1700 * time.Millisecond, Burst: 4}: "4 at once, then one every 1.7 s",
	} {
		if got := r.String(); got != want {
			t.Errorf("%#v: %q, want %q", r, got, want)
		}
	}
}
