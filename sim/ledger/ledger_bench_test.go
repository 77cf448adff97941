package ledger_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"idemlab/sim"
	"idemlab/sim/housetest"
)

// BenchmarkLedgerCharges is new charges under replay from 16 callers at
// once, straight into the ledger on a SQLite file (no HTTP): what the
// charge endpoint could reach if the request around it cost nothing. Its
// charges/s beside the load benchmark's (docs/load.md) says how much of a
// charge's time is the ledger's.
func BenchmarkLedgerCharges(b *testing.B) {
	const callers = 16
	h := housetest.Open(b, filepath.Join(b.TempDir(), "lab.db"))
	l := h.NewLab(b, sim.ProtectReplay, nil)
	ctx := context.Background()
	var next atomic.Int64
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				k := fmt.Sprint("key-", i)
				c := sim.Charge{OrderID: fmt.Sprint("order-", i), Amount: 100, Key: &k, Direct: true}
				if res, err := h.H.Ledger.Charge(ctx, l, c); err != nil || res.Payment == nil {
					failed.Store(fmt.Sprintf("charge %d: %v, %+v", i, err, res))
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
}

// BenchmarkRemoveLab is a small lab's removal (three charges, their
// records and counts): what a comparison does for each of its cells.
func BenchmarkRemoveLab(b *testing.B) {
	h := housetest.Open(b, filepath.Join(b.TempDir(), "lab.db"))
	ctx := context.Background()
	for i := range b.N {
		b.StopTimer()
		l := h.NewLab(b, sim.ProtectReplay, nil)
		for j := range 3 {
			k := fmt.Sprint("key-", i, "-", j)
			if _, err := h.H.Ledger.Charge(ctx, l, sim.Charge{OrderID: "order-42", Amount: 100, Key: &k, Direct: true}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := h.H.Labs.Remove(ctx, l.ID); err != nil {
			b.Fatal(err)
		}
	}
}
