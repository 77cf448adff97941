package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/client"
)

// Each fate does to a real HTTP exchange what its name says: how many copies
// reach the server, and what the client gets back.
func TestNetworkFates(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(20 * time.Millisecond)
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":1}`))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		fate      sim.Fate
		hits      int32
		clientErr error
		status    int
		observed  int
	}{
		{sim.FateOK, 1, nil, 201, 1},
		{sim.FateRequestLost, 0, client.ErrRequestLost, 0, 0},
		{sim.FateResponseLost, 1, client.ErrResponseLost, 0, 1},
		{sim.FateSlow, 1, client.ErrTooSlow, 0, 1},
		{sim.FateDuplicate, 2, nil, 201, 2},
	} {
		t.Run(string(tc.fate), func(t *testing.T) {
			hits.Store(0)
			var (
				mu   sync.Mutex
				seen []sim.Delivery
				wg   sync.WaitGroup
			)
			n := &client.Network{
				Fate: tc.fate, Next: http.DefaultTransport,
				Observe: func(d sim.Delivery) { mu.Lock(); seen = append(seen, d); mu.Unlock() },
				Spawn:   func(f func()) { wg.Go(f) },
			}
			timeout := time.Second
			if tc.fate == sim.FateSlow {
				timeout = 5 * time.Millisecond // the client gives up before the 20 ms answer
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL, strings.NewReader(`{}`))
			resp, err := n.RoundTrip(req)
			if !errors.Is(err, tc.clientErr) || (tc.clientErr == nil) != (err == nil) {
				t.Fatalf("client error %v, want %v", err, tc.clientErr)
			}
			if resp != nil && resp.StatusCode != tc.status {
				t.Errorf("client status %d, want %d", resp.StatusCode, tc.status)
			}
			wg.Wait() // a slow answer arrives after the client gave up
			if got := hits.Load(); got != tc.hits {
				t.Errorf("server received %d copies, want %d", got, tc.hits)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != tc.observed {
				t.Errorf("observed %d answers, want %d", len(seen), tc.observed)
			}
			for _, d := range seen {
				if d.Outcome != sim.OutcomeCharged {
					t.Errorf("observed %+v, want charged", d)
				}
			}
		})
	}
}
