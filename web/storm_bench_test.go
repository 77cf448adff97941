package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	herd "idemlab/sim/client/storm"
)

// BenchmarkStormIsolation: while a storm of 2,000 clients runs in lab A
// (IDEMLAB_STORM_CLIENTS to change it), a charge in lab B until B's open
// page shows it, for as long as the storm runs, against the same with no
// storm anywhere. Reported:
// live-ms-idle, live-ms-storm (medians) and storm/idle (issue 25's bound:
// at most 1.5), with the storm's attempts.
func BenchmarkStormIsolation(b *testing.B) {
	clients := 2000
	if n, err := strconv.Atoi(os.Getenv("IDEMLAB_STORM_CLIENTS")); err == nil {
		clients = n
	}
	s := startServer(b, withDB(filepath.Join(b.TempDir(), "lab.db")))
	a := s.newLab(`{"protection":"replay","retry":{"mode":"auto"}}`)
	lb := s.newLab(`{"protection":"none"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wb := watchLab(b, ctx, s, lb, 1)
	var n int64
	charge := func() time.Duration {
		start := time.Now()
		s.must(http.StatusCreated, "POST", lb+"/charges", `{"order_id":"order-b","amount":100}`)
		n++
		if !wb.waitFor(n, 10*time.Second) {
			return 10 * time.Second
		}
		return time.Since(start)
	}
	charge() // warm
	var idle, storm []time.Duration
	var attempts int
	for b.Loop() {
		for range 10 {
			idle = append(idle, charge())
		}
		r := s.must(http.StatusCreated, "POST", a+"/storms", fmt.Sprintf(`{"clients":%d,"duration_s":8,"key":true}`, clients))
		var v herd.View
		json.Unmarshal(r.Body, &v)
		view := func() herd.View {
			json.Unmarshal(s.must(http.StatusOK, "GET", a+"/storms/"+v.ID, "").Body, &v)
			return v
		}
		if !poll(30*time.Second, func() bool { return view().Summary.Operations >= clients }) {
			b.Fatalf("the storm's first burst: %+v", v.Summary)
		}
		for view().State == "running" { // B's charges, one after another, for as long as the storm runs
			storm = append(storm, charge())
		}
		attempts += v.Summary.Attempts
	}
	b.ReportMetric(ms(median(idle)), "live-ms-idle")
	b.ReportMetric(ms(median(storm)), "live-ms-storm")
	b.ReportMetric(float64(median(storm))/float64(median(idle)), "storm/idle")
	b.ReportMetric(float64(attempts)/float64(b.N), "storm-attempts")
}
