package store

import (
	"context"
	"testing"
	"time"

	"idemlab/sim/pgtest"
)

// The database's clock is read again now and then (each sweep). A reading
// that agrees with the skew in use, within the readings' round trips, keeps
// it: the lab's clock does not step back and forth by each reading's
// noise. One that does not (this process's clock set back an hour)
// replaces it.
func TestSkewKeptWithinItsNoise(t *testing.T) {
	t.Parallel()
	s := openMember(t, pgtest.Database(t), nil)
	ctx := context.Background()
	if err := s.MeasureSkew(ctx, time.Now); err != nil {
		t.Fatal(err)
	}
	first := s.skew.Of()
	for i := range 20 { // the database on this machine: the same clock
		if err := s.MeasureSkew(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if got := s.skew.Of(); got != first {
			t.Fatalf("reading %d moved the skew from %v to %v: the same clocks, read again", i+2, first, got)
		}
	}
	behind := func() time.Time { return time.Now().Add(-time.Hour) }
	if err := s.MeasureSkew(ctx, behind); err != nil {
		t.Fatal(err)
	}
	if got := s.skew.Of(); (got - time.Hour).Abs() > time.Second {
		t.Errorf("with this process's clock an hour behind, the skew is %v; want about an hour", got)
	}
}
