package web_test

import (
	"net/http"
	"strconv"
	"testing"
)

// BenchmarkSetNX puts set-nx beside unique in one run: a new charge (a
// fresh key) and a duplicate (one key, already charged) under each, over
// loopback HTTP to a file-backed lab. set-nx adds a round trip to its
// key-value store (the embedded one, or $IDEMLAB_TEST_REDIS) before the
// INSERT; its duplicate never reaches the database.
//
//	go test -run '^$' -bench SetNX -count 6 -benchtime 3000x ./web/ | tee setnx.txt
func BenchmarkSetNX(b *testing.B) {
	for _, p := range []string{"unique", "set-nx"} {
		b.Run(p+"/new", func(b *testing.B) {
			c := newChargeClient(b, `{"protection":"`+p+`"}`, withParts())
			c.charge(http.StatusCreated, "warm", false)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c.charge(http.StatusCreated, "n"+strconv.Itoa(i), false)
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
			c.done(int64(b.N) + 1)
		})
		b.Run(p+"/duplicate", func(b *testing.B) {
			c := newChargeClient(b, `{"protection":"`+p+`"}`, withParts())
			c.charge(http.StatusCreated, "once", false)
			c.charge(http.StatusOK, "once", false)
			b.ReportAllocs()
			for b.Loop() {
				c.charge(http.StatusOK, "once", false)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "charges/s")
			c.done(1)
		})
	}
}
