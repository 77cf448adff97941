package keys

import (
	"context"
	"testing"
	"time"
)

// The store's guard, its lab's index, the clock and the forgetting, on the
// embedded server: one lab's clock and reset never touch another lab's keys.
func TestKeysOfOneLab(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	for _, c := range []struct {
		lab, key string
		want     bool
	}{{"a", "k1", true}, {"a", "k1", false}, {"a", "k2", true}, {"b", "k1", true}} {
		got, err := take(t, s, c.lab, c.key, "fp", time.Minute, now)
		if err != nil || got != c.want {
			t.Fatalf("SetNX %s/%s: %v, %v; want %v", c.lab, c.key, got, err, c.want)
		}
	}
	ks, err := s.Keys(ctx, "a", 10)
	if err != nil || len(ks) != 2 {
		t.Fatalf("keys of a: %+v, %v; want 2", ks, err)
	}
	for _, k := range ks {
		if k.TTL <= 50*time.Second || k.TTL > time.Minute {
			t.Errorf("key %s has %v left; want about a minute", k.Key, k.TTL)
		}
	}
	if n, err := s.Advance(ctx, "a", 30*time.Second); err != nil || n != 0 {
		t.Fatalf("advance a by 30 s: %d expired, %v; want none", n, err)
	}
	ks, _ = s.Keys(ctx, "a", 10)
	if ks[0].TTL > 31*time.Second {
		t.Errorf("after 30 s, %v left; want at most 30 s", ks[0].TTL)
	}
	if n, err := s.Advance(ctx, "a", 45*time.Second); err != nil || n != 2 {
		t.Fatalf("advance a by 45 s more: %d expired, %v; want 2", n, err)
	}
	ks, _ = s.Keys(ctx, "a", 10)
	if len(ks) != 2 || ks[0].TTL != 0 || ks[1].TTL != 0 {
		t.Errorf("a's keys after the clock: %+v; want both listed, expired", ks)
	}
	if got, _ := take(t, s, "a", "k1", "fp", time.Minute, now); !got {
		t.Error("an expired key is not free again")
	}
	kb, _ := s.Keys(ctx, "b", 10)
	if len(kb) != 1 || kb[0].TTL < 50*time.Second {
		t.Errorf("b's keys: %+v; the clock of a moved them", kb)
	}
	if err := s.Forget(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if ks, _ := s.Keys(ctx, "a", 10); len(ks) != 0 {
		t.Errorf("a after Forget: %+v", ks)
	}
	if got, _ := take(t, s, "b", "k1", "fp", time.Minute, now); got {
		t.Error("Forget of a freed b's key")
	}
}

// take takes the lab's key and keeps it, as a charge that committed:
// whether it was taken.
func take(t *testing.T, s *Store, lab, key, fp string, ttl time.Duration, now time.Time) (bool, error) {
	t.Helper()
	h, err := s.Take(context.Background(), lab, key, fp, ttl, now)
	if h != nil {
		h.Keep()
	}
	return h != nil, err
}
