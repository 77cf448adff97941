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
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	heapStart, goStart := s.heap(true), s.goroutines()

	// The toucher keeps the labs whose 201s are checked alive until the
	// end; everything else is left to idle out.
	touchCtx, stopTouching := context.WithCancel(context.Background())
	touching := make(chan struct{})
	go func() {
		defer close(touching)
		tick := time.NewTicker(soakIdle / 3)
		defer tick.Stop()
		for {
			for _, id := range keptLabs {
				s.judge("touch", s.get("/api/v1/labs/"+id+"/settings"), http.StatusOK)
			}
			select {
			case <-touchCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { stopTouching(); <-touching }()

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
	var heapAtKill, heapAfterRestart uint64
	wg.Go(func() { // heap sampler
		for ctx.Err() == nil {
			if h := s.heap(false); h > peak.Load() {
				peak.Store(h)
			}
			sleep(ctx, time.Second)
		}
	})
	wg.Go(func() { // the kill -9 in the middle, and the restart
		if !sleep(ctx, *soakFor/2) {
			return
		}
		heapAtKill = s.heap(false)
		s.outage(true)
		s.children[0].kill()
		start := time.Now()
		for {
			c, err := launch(t, "lab", s.args(s.addr)...)
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
		heapAfterRestart = s.heap(false)
	})
	wg.Wait()
	loaded := time.Since(loadStart)

	afterLoad := s.verifyKept()
	// Let the other labs idle out: probe the newest ones, one lab per probe
	// (a probe of a lab that is still there touches it), until three in a
	// row are gone or 40 s have passed.
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
	idled := time.Since(idleStart)
	heapEnd, goEnd := s.heap(true), s.goroutines()
	atEnd := s.verifyKept()
	letGone, letPresent := s.verifyLetGo()

	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("soak: %v of load on %s (-lab-idle %v -max-labs %d -max-inflight %d -max-streams %d), killed at %v and restarted in %d ms",
		loaded.Round(time.Second), s.addr, soakIdle, soakMaxLabs, soakInFlight, soakMaxStreams, (*soakFor / 2).Round(time.Second), s.counts["restart ms"])
	t.Logf("answers seen: %s", s.summary())
	t.Logf("heap in use: start %s, peak %s, at the kill %s, after the restart %s, end %s (after %v of idling and a GC)",
		mib(heapStart), mib(peak.Load()), mib(heapAtKill), mib(heapAfterRestart), mib(heapEnd), idled.Round(time.Second))
	slices.Sort(s.opens)
	if n := len(s.opens); n > 0 {
		t.Logf("streams answered (200) in: median %v, p99 %v, max %v (%d streams)", s.opens[n/2].Round(time.Millisecond),
			s.opens[n*99/100].Round(time.Millisecond), s.opens[n-1].Round(time.Millisecond), n)
	}
	t.Logf("goroutines of the lab: start %d, end %d", goStart, goEnd)
	if goEnd > goStart+50 { // say where they wait, to tell idle connections from a leak
		a := send(context.Background(), s.api, "GET", s.cur.Load().Debug+"/debug/pprof/goroutine?debug=1", nil)
		t.Logf("the lab's goroutines at the end:\n%.4000s", a.body)
	}
	t.Logf("201s of kept labs in the ledger: %d of %d right after the load, %d of %d at the end", afterLoad[0], afterLoad[1], atEnd[0], atEnd[1])
	t.Logf("labs left to idle out: %d gone, %d still there (their 201s present)", letGone, letPresent)
	for _, c := range s.children {
		out := c.out.String()
		if n := strings.Count(out, "level=ERROR"); n > 0 {
			t.Logf("the lab logged %d errors; the first: %s", n, firstLine(out, "level=ERROR"))
		}
	}
	for kind, samples := range s.problems {
		t.Errorf("%s: %d, e.g.:\n  %s", kind, s.counts["problem "+kind], strings.Join(samples, "\n  "))
	}
	if afterLoad[0] != afterLoad[1] || atEnd[0] != atEnd[1] {
		t.Errorf("201s missing from the ledger of labs kept alive: %d after the load, %d at the end", afterLoad[1]-afterLoad[0], atEnd[1]-atEnd[0])
	}
	if heapEnd > heapStart+64<<20 {
		t.Errorf("heap in use at the end %s, more than 64 MiB over the start %s", mib(heapEnd), mib(heapStart))
	}
}

// soak is the state of TestSoak: the lab, its clients and what they saw.
type soak struct {
	t        *testing.T
	db, addr string
	api, sse *http.Client
	cur      atomic.Pointer[child]
	children []*child // every lab process, in order

	mu       sync.Mutex
	counts   map[string]int64    // answers by kind, and other figures
	problems map[string][]string // by kind: the first few, each a request and its answer
	kept     map[string][]string // lab → paths of its 201s (payments, operations)
	letGo    [][2]string         // lab, path of a 201 in a lab left to idle out
	recent   []string            // the newest labs left to idle out, for streams
	opens    []time.Duration     // how long each stream took to be answered
	downAt   time.Time           // when the lab was killed
	upAt     time.Time           // when it served again
}

// args are the lab's flags for a listen address.
func (s *soak) args(addr string) []string {
	return []string{"-addr", addr, "-db", s.db, "-debug", "127.0.0.1:0", "-lab-idle", soakIdle.String(),
		"-max-labs", strconv.Itoa(soakMaxLabs), "-max-inflight", strconv.Itoa(soakInFlight), "-max-streams", strconv.Itoa(soakMaxStreams)}
}

func (s *soak) start(addr string) *child {
	c := startChild(s.t, "lab", s.args(addr)...)
	s.cur.Store(c)
	return c
}

func (s *soak) url(path string) string { return s.cur.Load().URL + path }

func (s *soak) get(path string) answer {
	return send(context.Background(), s.api, "GET", s.url(path), nil)
}

// newLab creates a lab with settings for the whole soak, waiting out refusals.
func (s *soak) newLab(settings string) string {
	s.t.Helper()
	for range 50 {
		a := send(context.Background(), s.api, "POST", s.url("/api/v1/labs"), nil)
		if d, ok := limited(a); ok {
			time.Sleep(min(d, 5*time.Second))
			continue
		}
		id, ok := labID(a)
		if !ok {
			s.t.Fatalf("create lab: %d %v %s", a.status, a.err, a.body)
		}
		if a := send(context.Background(), s.api, "PATCH", s.url("/api/v1/labs/"+id+"/settings"), []byte(settings)); a.status != http.StatusOK {
			s.t.Fatalf("settings: %d %v %s", a.status, a.err, a.body)
		}
		return id
	}
	s.t.Fatal("could not create a lab: refused 50 times")
	return ""
}

// verdict is what judge made of an answer.
const (
	bad   = iota // counted as a problem, or a refusal the caller need not retry
	right        // one of the wanted statuses
	again        // refused with Retry-After (waited out), or the lab was down: send it again
)

// judge counts an answer under what, waits out a refusal, records anything
// SPEC does not allow, and says what to do next.
func (s *soak) judge(what string, a answer, want ...int) bool {
	return s.verdict(what, a, want...) == right
}

func (s *soak) verdict(what string, a answer, want ...int) int {
	if a.err != nil {
		if s.inOutage() {
			s.add(what+" during restart", 1)
			time.Sleep(100 * time.Millisecond)
			return again
		}
		s.problem("transport error", what+": "+a.err.Error())
		return bad
	}
	for _, w := range want {
		if a.status == w {
			s.add(fmt.Sprintf("%s %d", what, a.status), 1)
			return right
		}
	}
	if d, ok := limited(a); ok {
		s.add(fmt.Sprintf("%s %d", what, a.status), 1)
		time.Sleep(min(d, 5*time.Second))
		return again
	}
	kind := "unexpected status"
	switch {
	case a.status == http.StatusTooManyRequests || a.status == http.StatusServiceUnavailable:
		kind = "refusal without Retry-After"
	case a.status >= 500:
		kind = "5xx"
	}
	s.problem(kind, fmt.Sprintf("%s: %d %.300s", what, a.status, a.body))
	return bad
}

func (s *soak) add(name string, n int64) {
	s.mu.Lock()
	s.counts[name] += n
	s.mu.Unlock()
}

func (s *soak) problem(kind, sample string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts["problem "+kind]++
	if len(s.problems[kind]) < 5 {
		s.problems[kind] = append(s.problems[kind], sample)
	}
}

// outage marks the lab down (just before the kill) or up again.
func (s *soak) outage(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if down {
		s.downAt = time.Now()
	} else {
		s.upAt = time.Now()
	}
}

// inOutage reports whether a failure now belongs to the restart: from the
// kill until 3 s after the lab serves again.
func (s *soak) inOutage() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.downAt.IsZero() && (s.upAt.IsZero() || time.Since(s.upAt) < 3*time.Second)
}

// creator creates labs, charges each once and leaves it to idle out. Its
// labs come from 64 client addresses of the loopback network (127.0.w.2 to
// 127.0.w.65), as a class's do: each address has its own rate limit.
func (s *soak) creator(ctx context.Context, w int) {
	students := make([]*http.Client, 64)
	for i := range students {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(w+1), byte(i+2))}}
		tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1}
		defer tr.CloseIdleConnections()
		students[i] = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	}
	for n := 0; ctx.Err() == nil; n++ {
		a := send(context.Background(), students[n%len(students)], "POST", s.url("/api/v1/labs"), nil)
		if s.verdict("create lab", a, http.StatusCreated) != right {
			continue
		}
		id, _ := labID(a)
		s.mu.Lock()
		s.recent = append(s.recent, id)
		if len(s.recent) > 400 {
			s.recent = s.recent[200:]
		}
		s.mu.Unlock()
		key := fmt.Sprintf("create-%d-%d", w, n)
		for range 20 {
			a := send(context.Background(), s.api, "POST", s.url("/api/v1/labs/"+id+"/charges"), []byte(`{"order_id":"order-1","amount":100}`), "Idempotency-Key", key)
			v := s.verdict("charge new lab", a, http.StatusCreated)
			if v == right {
				s.mu.Lock()
				s.letGo = append(s.letGo, [2]string{id, a.header.Get("Location")})
				s.mu.Unlock()
			}
			if v != again {
				break
			}
		}
	}
}

// charger sends new charges with keys to the kept labs; a charge whose
// answer did not come (the kill) is sent again with its key until it is
// answered, as a client should.
func (s *soak) charger(ctx context.Context, w int, labs []string) {
	for n := 0; ctx.Err() == nil; n++ {
		id := labs[(w+n*4)%len(labs)]
		key := fmt.Sprintf("charge-%d-%d", w, n)
		body := []byte(`{"order_id":"order-` + strconv.Itoa(n) + `","amount":` + strconv.Itoa(100+n%50) + `}`)
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			a := send(context.Background(), s.api, "POST", s.url("/api/v1/labs/"+id+"/charges"), body, "Idempotency-Key", key)
			if a.err == nil && a.status == http.StatusConflict && a.header.Get("Retry-After") != "" {
				s.add("charge 409 (in flight)", 1) // the claim of a request the kill cut off
				time.Sleep(time.Second)
				continue
			}
			v := s.verdict("charge", a, http.StatusCreated)
			if v == right {
				if a.header.Get("Idempotent-Replayed") == "true" {
					s.add("charge 201 replayed (a retry after the kill)", 1)
				}
				s.keep(id, a.header.Get("Location"))
			}
			if v != again {
				break
			}
		}
	}
}

// racer fires bursts of races: an operation, then 64 attempts of it at once.
func (s *soak) racer(ctx context.Context, w int, labs []string) {
	for n := 0; ctx.Err() == nil; n++ {
		id := labs[(w+n)%len(labs)]
		a := send(context.Background(), s.api, "POST", s.url("/api/v1/labs/"+id+"/operations"),
			[]byte(`{"order_id":"race-`+strconv.Itoa(w)+"-"+strconv.Itoa(n)+`","amount":500}`))
		if s.verdict("operation", a, http.StatusCreated) != right {
			continue
		}
		op := a.header.Get("Location")
		s.keep(id, op)
		s.judge("race", send(context.Background(), s.api, "POST", s.url(op+"/race"), []byte(`{"parallel":64}`)), http.StatusOK)
		sleep(ctx, 100*time.Millisecond)
	}
}

// streamer keeps a live stream open, on a new lab mostly, for 2–8 s at a
// time, reading it all the while.
func (s *soak) streamer(ctx context.Context, kept []string) {
	for ctx.Err() == nil {
		id, which := kept[rand.IntN(len(kept))], "kept lab"
		s.mu.Lock()
		if n := len(s.recent); n > 0 && rand.IntN(4) > 0 {
			id, which = s.recent[n-1-rand.IntN(min(n, 100))], "new lab"
		}
		s.mu.Unlock()
		open, stop := context.WithTimeout(ctx, time.Duration(2000+rand.IntN(6000))*time.Millisecond)
		req, _ := http.NewRequestWithContext(open, "GET", s.url("/labs/"+id+"/events"), nil)
		start := time.Now()
		resp, err := s.sse.Do(req)
		a := answer{err: err}
		if err == nil {
			a = answer{status: resp.StatusCode, header: resp.Header}
			if resp.StatusCode == http.StatusOK {
				s.mu.Lock()
				s.opens = append(s.opens, time.Since(start))
				s.mu.Unlock()
				_, err = io.Copy(io.Discard, resp.Body)
			} else {
				a.body, _ = io.ReadAll(resp.Body)
			}
			resp.Body.Close()
		}
		switch {
		case open.Err() != nil: // our own end of the stream, or of the soak
			if a.status != 0 {
				s.add(fmt.Sprintf("stream %d", a.status), 1)
			} else {
				s.add("stream not answered within our 2-8 s, "+which, 1)
			}
		case a.err == nil && err != nil:
			s.verdict("stream read", answer{err: err})
		case a.status == http.StatusOK:
			s.add("stream ended by the server", 1)
		default:
			s.verdict("stream", a, http.StatusOK, http.StatusNotFound)
		}
		stop()
	}
}

func (s *soak) keep(id, path string) {
	if path == "" {
		s.problem("201 without Location", id)
		return
	}
	s.mu.Lock()
	s.kept[id] = append(s.kept[id], path)
	s.mu.Unlock()
}

// newestLetGo returns up to n of the labs created last, newest first.
func (s *soak) newestLetGo(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for i := len(s.recent) - 1; i >= 0 && len(ids) < n; i-- {
		ids = append(ids, s.recent[i])
	}
	return ids
}

// verifyKept checks every 201 seen in the kept labs: each must be there.
// It returns how many were found, and of how many.
func (s *soak) verifyKept() [2]int {
	s.mu.Lock()
	var paths []string
	for _, ps := range s.kept {
		paths = append(paths, ps...)
	}
	s.mu.Unlock()
	found := s.each(paths, func(p string) bool {
		a := s.get(p)
		if a.err != nil || a.status != http.StatusOK {
			s.problem("201 lost from a kept lab", fmt.Sprintf("GET %s: %d %v %.200s", p, a.status, a.err, a.body))
			return false
		}
		return true
	})
	return [2]int{found, len(paths)}
}

// verifyLetGo checks the 201s of the labs left to idle out: a lab may be
// gone (404), but a lab still there must hold its payment.
func (s *soak) verifyLetGo() (gone, present int) {
	s.mu.Lock()
	recs := append([][2]string(nil), s.letGo...)
	s.mu.Unlock()
	paths := make([]string, len(recs))
	for i, r := range recs {
		paths[i] = r[0] + " " + r[1]
	}
	present = s.each(paths, func(p string) bool {
		id, path, _ := strings.Cut(p, " ")
		a := s.get(path)
		switch {
		case a.err == nil && a.status == http.StatusOK:
			return true
		case a.err == nil && a.status == http.StatusNotFound:
			if l := s.get("/api/v1/labs/" + id + "/settings"); l.err == nil && l.status == http.StatusNotFound {
				return false // idled out, as designed
			}
		}
		s.problem("201 lost from a lab that is still there", fmt.Sprintf("GET %s: %d %v %.200s", path, a.status, a.err, a.body))
		return false
	})
	return len(recs) - present, present
}

// each runs check on every item from 16 goroutines and counts the trues.
func (s *soak) each(items []string, check func(string) bool) int {
	var next, ok atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(items)); i = next.Add(1) - 1 {
				if check(items[i]) {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(ok.Load())
}

// heap returns the lab's heap in use (runtime.MemStats.HeapInuse, from
// /debug/vars), after a GC when gc is set (the heap profile's ?gc=1).
func (s *soak) heap(gc bool) uint64 {
	c := s.cur.Load()
	if gc {
		for range 2 {
			send(context.Background(), s.api, "GET", c.Debug+"/debug/pprof/heap?gc=1", nil)
			time.Sleep(500 * time.Millisecond)
		}
	}
	a := send(context.Background(), s.api, "GET", c.Debug+"/debug/vars", nil)
	var v struct{ Memstats struct{ HeapInuse uint64 } }
	if a.err != nil || json.Unmarshal(a.body, &v) != nil {
		return 0
	}
	return v.Memstats.HeapInuse
}

// goroutines returns the number of the lab's goroutines.
func (s *soak) goroutines() int {
	a := send(context.Background(), s.api, "GET", s.cur.Load().Debug+"/debug/pprof/goroutine?debug=1", nil)
	_, rest, _ := strings.Cut(string(a.body), "total ")
	n, _ := strconv.Atoi(strings.TrimSpace(firstLine(rest, "")))
	return n
}

// summary lists the counts of the soak, sorted by name.
func (s *soak) summary() string {
	var names []string
	for k := range s.counts {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "\n  %-50s %d", k, s.counts[k])
	}
	return b.String()
}

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// firstLine returns the first line of s that contains sub.
func firstLine(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}
