package keys

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"idemlab/sim/keys/keystest"
)

// Another local user who finds the embedded store's port is refused: a raw
// KEYS * and a go-redis client without the password both get NOAUTH, and
// see no lab's key. The lab itself, with the password, works.
func TestEmbeddedStoreRefusesOtherUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ok, err := take(t, s, "secret-lab", "k", "v", time.Minute, time.Now()); err != nil || !ok {
		t.Fatalf("the lab's own SET NX: %v, %v", ok, err)
	}
	addr := s.embedded.Addr()

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "-NOAUTH") {
		t.Errorf("raw KEYS *: %q, %v; want -NOAUTH", line, err)
	}

	other := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer other.Close()
	ks, err := other.Keys(ctx, "*").Result()
	if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("go-redis without the password: %v, %v; want NOAUTH", ks, err)
	}
	if err := other.FlushAll(ctx).Err(); err == nil {
		t.Error("FLUSHALL without the password was taken")
	}
	if ok, err := take(t, s, "secret-lab", "k", "v", time.Minute, time.Now()); err != nil || ok {
		t.Errorf("the lab's key after the stranger: taken again %v, %v; want it still held", ok, err)
	}
}

// A real Redis that asks for a password is used with the credentials its
// URL gives, and refuses a URL without them.
func TestRealRedisWithItsURLsCredentials(t *testing.T) {
	t.Parallel()
	r := keystest.RealRedis(t, "--requirepass", "s3cret")
	ctx := context.Background()
	s, err := Start(ctx, Config{URL: strings.Replace(r.URL, "redis://", "redis://:s3cret@", 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ok, err := take(t, s, "lab", "k", "fp", time.Minute, time.Now()); !ok || err != nil {
		t.Errorf("SET NX with the URL's password: %v, %v", ok, err)
	}
	bare, err := Start(ctx, Config{URL: r.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if bare.Healthy(ctx) {
		t.Error("a URL without the password is let in")
	}
}
