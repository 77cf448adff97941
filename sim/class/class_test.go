package class_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"idemlab/sim"
	"idemlab/sim/class"
	"idemlab/sim/housetest"
)

// Votes racing the reveal: each vote is either taken, and counted once, or
// refused as closed; none is taken once the vote is closed. On both stores.
func TestVotesRaceTheReveal(t *testing.T) {
	t.Parallel()
	housetest.EachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		b := housetest.Open(t, dsn(t))
		ctx := context.Background()
		cs := b.H.Classes
		l := b.NewLab(t, sim.ProtectNone, nil)
		c, created, err := cs.Start(ctx, l, "teacher", "http://lab.example")
		if err != nil || !created {
			t.Fatalf("start: %v, created %v", err, created)
		}
		// The generic question about a retry: with no operation to retry,
		// the step fails once the vote is closed, which is all this needs.
		q, err := cs.Open(ctx, l, "teacher", &sim.Action{Kind: "retry"})
		if err != nil {
			t.Fatalf("ask: %v", err)
		}
		var taken, closed atomic.Int64
		var wg sync.WaitGroup
		start, some := make(chan struct{}), make(chan struct{})
		for i := range 200 {
			wg.Go(func() {
				<-start
				err := cs.Vote(ctx, c.Code, fmt.Sprintf("v%d", i), q.N, q.Choices[i%len(q.Choices)])
				switch {
				case err == nil:
					if taken.Add(1) == 20 {
						close(some) // the reveal closes the vote while the rest come
					}
				case sim.ErrorCode(err) == sim.EClosed:
					closed.Add(1)
				default:
					t.Errorf("vote %d: %v", i, err)
				}
			})
		}
		close(start)
		<-some
		if _, err := cs.Reveal(ctx, l, "teacher"); sim.ErrorCode(err) != sim.ENotFound {
			t.Errorf("reveal of a retry with nothing to retry: %v", err)
		}
		atClose, err := cs.Get(ctx, l) // the vote is closed: no vote counts from here on
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		got, err := cs.Get(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		if got.Question.State != class.Running || int64(got.Question.Votes) != taken.Load() || taken.Load()+closed.Load() != 200 {
			t.Errorf("%d votes taken, %d closed; the question %s counts %d", taken.Load(), closed.Load(), got.Question.State, got.Question.Votes)
		}
		if got.Question.Votes != atClose.Question.Votes {
			t.Errorf("%d votes when the vote closed, %d once the voters were done: votes were taken after the close", atClose.Question.Votes, got.Question.Votes)
		}
		if err := cs.Vote(ctx, c.Code, "late", q.N, q.Choices[0]); sim.ErrorCode(err) != sim.EClosed {
			t.Errorf("a vote after the close: %v", err)
		}
		t.Logf("%d votes taken before the close, %d refused after it", taken.Load(), closed.Load())
	})
}

// A join code is six letters without look-alikes, and codes differ.
func TestJoinCodes(t *testing.T) {
	t.Parallel()
	b := housetest.Open(t, ":memory:")
	ctx := context.Background()
	seen := map[string]bool{}
	for range 50 {
		l := b.NewLab(t, sim.ProtectNone, nil)
		c, _, err := b.H.Classes.Start(ctx, l, "t", "http://x")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.Code {
			if !(r >= 'A' && r <= 'Z' || r >= '2' && r <= '9') || r == 'O' || r == 'I' || r == 'L' {
				t.Errorf("code %q has %q", c.Code, r)
			}
		}
		if len(c.Code) != class.CodeLen || seen[c.Code] {
			t.Errorf("code %q: wrong length, or seen before", c.Code)
		}
		seen[c.Code] = true
	}
}

// A phone that read a question while its step ran sees the reveal: every
// state of a question is a version of its own (running and revealed once
// shared one, and such a phone was told "nothing new" until the next
// question).
func TestPhoneVersionsTellEveryState(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, state := range []string{class.Open, class.Running, class.Revealed} {
		v := class.Phone{Question: &class.Question{N: 1, State: state}}.Version()
		if other, ok := seen[v]; ok {
			t.Errorf("question 1 %s and %s: both version %q", other, state, v)
		}
		seen[v] = state
	}
}
