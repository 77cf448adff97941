package main

// TestSoak is a room full of people on one server, compressed into two
// minutes: the lab runs as a child process on a file database with small
// limits, and goroutines create thousands of labs, keep hundreds of live
// streams open, fire bursts of races and charge straight to /charges; in
// the middle the lab is killed (kill -9) and started again on the same
// database and port. It is opt-in and bounded in time, loopback only:
//
//	go test -run TestSoak -soak -v .             # or IDEMLAB_SOAK=1 go test -run TestSoak -v .
//	go test -run TestSoak -soak -soak.for 10m -timeout 30m -v .
//
// At the end it checks what SPEC.md promises a room: no 5xx but 503 with
// Retry-After (and 429 with Retry-After), every 201 a client saw still in the
// ledger unless its lab idled out by design, and the heap back near where it
// started once the labs have idled out. See docs/load.md.

import (
	"context"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	soakOn  = flag.Bool("soak", false, "run TestSoak (IDEMLAB_SOAK=1 does too)")
	soakFor = flag.Duration("soak.for", 75*time.Second, "how long TestSoak loads the lab; its checks take up to a minute more")
)

// The soak's lab: small limits, so that they are reached.
const (
	soakIdle       = 3 * time.Second
	soakMaxLabs    = 500
	soakInFlight   = 128
	soakMaxStreams = 150
	soakStreamers  = 200 // more than -max-streams: some are refused
)

func TestSoak(t *testing.T) {
	if !*soakOn && os.Getenv("IDEMLAB_SOAK") != "1" {
		t.Skip("the soak runs only with -soak or IDEMLAB_SOAK=1")
	}
	t.Setenv(labIdleEnv, soakIdle.String()) // the lab's labs idle out within the soak
	s := &soak{t: t, db: filepath.Join(t.TempDir(), "soak.db"), counts: map[string]int64{}, problems: map[string][]string{},
		kept: map[string][]string{},
		api:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}},
		sse:  &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
	defer s.api.CloseIdleConnections()
	first := s.start("127.0.0.1:0")
	s.addr = strings.TrimPrefix(first.URL, "http://")
	s.children = append(s.children, first)

	var chargeLabs, raceLabs []string
	for range 12 {
		chargeLabs = append(chargeLabs, s.newLab(`{"protection":"replay"}`))
	}
	for range 3 {
		raceLabs = append(raceLabs, s.newLab(`{"protection":"replay","key_strategy":"uuid","server_delay_ms":20}`))
	}
	keptLabs := append(append([]string(nil), chargeLabs...), raceLabs...)
	var f soakFigures
	f.heapStart, f.goStart = s.heap(true), s.goroutines()

	// The toucher keeps the labs whose 201s are checked alive until the
	// end; everything else is left to idle out.
	stopTouching := s.touch(keptLabs)
	defer stopTouching()

	s.load(&f, chargeLabs, raceLabs, keptLabs)
	f.afterLoad = s.verifyKept()
	f.idled = s.idleOut()
	f.heapEnd, f.goEnd = s.heap(true), s.goroutines()
	f.atEnd = s.verifyKept()
	f.letGone, f.letPresent = s.verifyLetGo()
	s.report(f)
}

// soakFigures are what TestSoak measured, for its report.
type soakFigures struct {
	loaded, idled       time.Duration // of load; of letting the labs idle out after it
	goStart, goEnd      int           // the lab's goroutines at the start and at the end
	afterLoad, atEnd    [2]int        // 201s of kept labs found in the ledger, of how many
	letGone, letPresent int           // labs left to idle out: gone, still there

	// the lab's heap in use: at the start, its peak under load, at the kill,
	// after the restart and at the end
	heapStart, peak, heapAtKill, heapAfterRestart, heapEnd uint64
}

// touch starts the toucher, which touches every one of labs each third of
// -lab-idle, and returns the function that stops it and waits for it.
func (s *soak) touch(labs []string) (stop func()) {
	touchCtx, stopTouching := context.WithCancel(context.Background())
	touching := make(chan struct{})
	go func() {
		defer close(touching)
		tick := time.NewTicker(soakIdle / 3)
		defer tick.Stop()
		for {
			for _, id := range labs {
				s.judge("touch", s.get("/api/v1/labs/"+id+"/settings"), http.StatusOK)
			}
			select {
			case <-touchCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { stopTouching(); <-touching }
}

// load runs the clients for -soak.for, with a heap sampler and the kill -9
// in the middle, and notes in f how long it ran and the heap's peak.
func (s *soak) load(f *soakFigures, chargeLabs, raceLabs, keptLabs []string) {
	loadStart := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), *soakFor)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { s.creator(ctx, w) })
		wg.Go(func() { s.charger(ctx, w, chargeLabs) })
	}
	for w := range 3 {
		wg.Go(func() { s.racer(ctx, w, raceLabs) })
	}
	for range soakStreamers {
		wg.Go(func() { s.streamer(ctx, keptLabs) })
	}
	var peak atomic.Uint64
	wg.Go(func() { // heap sampler
		for ctx.Err() == nil {
			if h := s.heap(false); h > peak.Load() {
				peak.Store(h)
			}
			sleep(ctx, time.Second)
		}
	})
	wg.Go(func() { s.killAndRestart(ctx, cancel, f) })
	wg.Wait()
	f.loaded = time.Since(loadStart)
	f.peak = peak.Load()
}

// killAndRestart is the kill -9 in the middle of the load, and the restart
// on the same database and port; it notes the heap at both in f. A lab
// that cannot start again within 30 s ends the load.
func (s *soak) killAndRestart(ctx context.Context, cancel context.CancelFunc, f *soakFigures) {
	if !sleep(ctx, *soakFor/2) {
		return
	}
	f.heapAtKill = s.heap(false)
	s.outage(true)
	s.children[0].kill()
	start := time.Now()
	for {
		c, err := launch(s.t, "lab", s.args(s.addr)...)
		if err == nil {
			s.children = append(s.children, c)
			s.cur.Store(c)
			break
		}
		if time.Since(start) > 30*time.Second {
			s.problem("restart", err.Error())
			cancel()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.outage(false)
	s.add("restart ms", time.Since(start).Milliseconds())
	f.heapAfterRestart = s.heap(false)
}

// idleOut lets the other labs idle out: it probes the newest ones, one lab
// per probe (a probe of a lab that is still there touches it), until three
// in a row are gone or 40 s have passed, and returns how long that took.
func (s *soak) idleOut() time.Duration {
	idleStart := time.Now()
	gone := 0
	for _, id := range s.newestLetGo(40) {
		if gone == 3 || time.Since(idleStart) > 40*time.Second {
			break
		}
		time.Sleep(time.Second)
		if a := s.get("/api/v1/labs/" + id + "/settings"); s.judge("idle probe", a, http.StatusOK, http.StatusNotFound) && a.status == http.StatusNotFound {
			gone++
		} else {
			gone = 0
		}
	}
	return time.Since(idleStart)
}
