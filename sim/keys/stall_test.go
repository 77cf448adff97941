package keys

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"idemlab/sim/keys/keystest"
	"idemlab/sim/logtest"
)

// A store that stalls (a stopped Redis: its socket still takes the bytes)
// while a charge sends its SET NX: the charge learns nothing in time, and
// the SET lands when the store goes on. The store owes it back, so "try
// again" is true: a retry while it still stalls is refused again, and the
// retry after it has gone on takes the key, whichever of the owed
// give-back, the late SET and the retry runs first.
func TestStalledSetIsGivenBack(t *testing.T) {
	t.Parallel()
	t.Run("real redis stopped", func(t *testing.T) {
		t.Parallel()
		r := keystest.RealRedis(t)
		stalledSet(t, r.URL, r.Stop, r.Cont)
	})
	t.Run("embedded behind a proxy that holds bytes", func(t *testing.T) {
		t.Parallel()
		m := miniredis.NewMiniRedis()
		m.RequireAuth("pw")
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		p := keystest.Proxy(t, m.Addr(), "redis://:pw@%s/0")
		stalledSet(t, p.URL, p.Stop, p.Cont)
	})
}

func stalledSet(t *testing.T, url string, stop, cont func()) {
	ctx := context.Background()
	var given sync.Map
	var log logtest.Buffer
	s, err := Start(ctx, Config{URL: url, Logger: log.Logger(), Timeout: stallTimeout,
		Given: func(lab, key string) { given.Store(lab+"/"+key, true) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A connection of the pool that has served: the SET is written, and
	// sits in the stalled store's socket (a new connection would stall in
	// its hand-shake, and never send it).
	if h, err := s.Take(ctx, "lab", "k-0", "fp", time.Minute, time.Now()); h == nil || err != nil {
		t.Fatalf("SET NX before the stall: %v, %v", h, err)
	}
	stop()
	h, err := s.Take(ctx, "lab", "k-1", "fp", time.Minute, time.Now())
	if h != nil || !errors.Is(err, ErrUnknown) {
		t.Fatalf("SET NX on a stalled store: %v, %v; want ErrUnknown", h, err)
	}
	if s.Owed() != 1 {
		t.Errorf("%d give-backs owed; want 1", s.Owed())
	}
	h, err = s.Take(ctx, "lab", "k-1", "fp", time.Minute, time.Now())
	if h != nil || !errors.Is(err, ErrDown) {
		t.Fatalf("the retry while it still stalls: %v, %v; want refused again", h, err)
	}
	cont()
	var taken *Hold
	waitUntil(t, 10*time.Second, "the retry to take the key", func() bool {
		taken, err = s.Take(ctx, "lab", "k-1", "fp", time.Minute, time.Now())
		return taken != nil
	})
	taken.Keep()
	if _, ok := given.Load("lab/k-1"); !ok {
		t.Error("the key was not said to be free")
	}
	waitUntil(t, 10*time.Second, "the give-backs to settle", func() bool { return s.Owed() == 0 })
	other := redis.NewClient(s.rdb.Options())
	defer other.Close()
	if v, err := other.Get(ctx, Key("lab", "k-1")).Result(); err != nil || v != taken.value {
		t.Errorf("the key holds %q, %v; want the retry's value %q", v, err, taken.value)
	}
	if h, err := s.Take(ctx, "lab", "k-1", "fp", time.Minute, time.Now()); h != nil || err != nil {
		t.Errorf("a third SET NX: %v, %v; want a duplicate", h, err)
	}
	lines := log.Lines()
	if len(lines) != 2 || !strings.Contains(lines[0], "redis does not answer") || !strings.Contains(lines[0], "flag=-redis") ||
		!strings.Contains(lines[1], "redis answers again") {
		t.Errorf("the log:\n%s\nwant one line when Redis stopped answering, naming -redis, one when it answered again", log.String())
	}
}

// A charge that failed after its SET NX gives the key back; when the store
// stalls at that moment, it owes it, and gives it back once it goes on,
// with no retry needed.
func TestGiveBackOwedUntilTheStoreAnswers(t *testing.T) {
	t.Parallel()
	m := miniredis.NewMiniRedis()
	m.RequireAuth("pw")
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p := keystest.Proxy(t, m.Addr(), "redis://:pw@%s/0")
	ctx := context.Background()
	given := make(chan string, 4)
	s, err := Start(ctx, Config{URL: p.URL, Given: func(lab, key string) { given <- key }, Timeout: stallTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Take(ctx, "lab", "k-2", "fp", time.Minute, time.Now())
	if h == nil || err != nil {
		t.Fatalf("SET NX: %v, %v", h, err)
	}
	p.Stop()
	if h.GiveBack(ctx) {
		t.Fatal("given back on a stalled store")
	}
	if s.Owed() != 1 {
		t.Errorf("%d owed; want 1", s.Owed())
	}
	p.Cont()
	select {
	case k := <-given:
		if k != "k-2" {
			t.Errorf("given back %q; want k-2", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the owed give-back never ran")
	}
	waitUntil(t, 5*time.Second, "nothing owed", func() bool { return s.Owed() == 0 })
	if m.Exists(Key("lab", "k-2")) {
		t.Error("the key is still held")
	}
}

// At its bound the list refuses a new SET NX before it is sent, and takes
// them again once give-backs are done.
func TestOwedListIsBounded(t *testing.T) {
	t.Parallel()
	m := miniredis.NewMiniRedis()
	m.RequireAuth("pw")
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p := keystest.Proxy(t, m.Addr(), "redis://:pw@%s/0")
	ctx := context.Background()
	s, err := Start(ctx, Config{URL: p.URL, MaxOwed: 2, Timeout: stallTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p.Stop()
	for i := range 2 {
		if _, err := s.Take(ctx, "lab", fmt.Sprint("k", i), "fp", time.Minute, time.Now()); !errors.Is(err, ErrUnknown) {
			t.Fatalf("SET NX %d: %v; want ErrUnknown", i, err)
		}
	}
	start := time.Now()
	if _, err := s.Take(ctx, "lab", "k9", "fp", time.Minute, time.Now()); !errors.Is(err, ErrOwedFull) || time.Since(start) > time.Second {
		t.Errorf("SET NX past the bound: %v after %v; want ErrOwedFull at once", err, time.Since(start))
	}
	p.Cont()
	waitUntil(t, 10*time.Second, "room again", func() bool {
		h, err := s.Take(ctx, "lab", "k9", "fp", time.Minute, time.Now())
		if h != nil {
			h.Keep()
		}
		return err == nil
	})
}

// stallTimeout is how long the tests' stores wait for a stalled store:
// the 2 s of the lab would be waited out for every command sent to it.
const stallTimeout = 500 * time.Millisecond

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v still waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
