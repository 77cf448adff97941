package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// kill -9 between the consumer's commit (its memory of the message and the
// email's outbox row) and its ack: the lab kills itself there (the fault
// point), then starts again on the same database and the same broker
// store. The message comes again and is recognised; the email left in the
// outbox goes out; every charge acknowledged before the crash is in the
// ledger with exactly one email, nothing published before the crash lost.
func TestCrashBetweenOutboxAndAck(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the lab as a child process twice")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "lab.db")
	first := startChildWith(t, []string{faultEnv + "=" + faultConsumerOutbox}, "lab", "-db", db, "-addr", "127.0.0.1:0")
	lab := postJSON(t, first.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	api := first.URL + "/api/v1/labs/" + lab
	patch(t, api+"/settings", `{"notify":"queue","consumer_dedup":"message-id","ack_wait_ms":300}`)

	// Three charges at once; the first delivery kills the lab.
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	for i := range 3 {
		order := fmt.Sprintf("order-%d", 40+i)
		wg.Go(func() {
			resp, err := http.Post(api+"/charges", "application/json", strings.NewReader(`{"order_id":"`+order+`","amount":1500}`))
			if err != nil {
				return // the lab died first
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated {
				mu.Lock()
				acked = append(acked, order)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	select {
	case <-first.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the lab did not kill itself at %s:\n%s", faultConsumerOutbox, first.out.String())
	}
	if len(acked) == 0 {
		t.Fatal("no charge was acknowledged before the crash")
	}

	second := startChild(t, "lab", "-db", db, "-addr", "127.0.0.1:0")
	api = second.URL + "/api/v1/labs/" + lab
	var (
		emails map[string]int
		pays   map[string]int
	)
	deadline := time.Now().Add(30 * time.Second)
	for {
		pays = countBy(getJSON(t, api+"/payments"), "payments")
		emails = countBy(getJSON(t, api+"/emails"), "emails")
		if len(pays) > 0 && equalCounts(pays, emails) && allDone(getJSON(t, api+"/messages")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: payments %v, emails %v, messages %v", pays, emails, getJSON(t, api+"/messages"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// What must NOT happen cannot be polled for: let a second pass (over
	// three ack waits of 300 ms), in which a redelivery or a second email
	// would have come, then count the emails again.
	time.Sleep(time.Second)
	emails = countBy(getJSON(t, api+"/emails"), "emails")
	for order, n := range pays {
		if n != 1 || emails[order] != 1 {
			t.Errorf("%s: %d payments, %d emails; want one of each", order, n, emails[order])
		}
	}
	for _, order := range acked {
		if pays[order] != 1 {
			t.Errorf("%s was acknowledged (201) before the crash, and the ledger has %d payments of it", order, pays[order])
		}
	}
	t.Logf("acknowledged before the crash: %v; after the restart: payments %v, emails %v", acked, pays, emails)
}

func countBy(v map[string]any, list string) map[string]int {
	out := map[string]int{}
	items, _ := v[list].([]any)
	for _, it := range items {
		out[it.(map[string]any)["order_id"].(string)]++
	}
	return out
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

// allDone reports whether every message was delivered and acknowledged
// (its last delivery is not a crash).
func allDone(v map[string]any) bool {
	ms, _ := v["messages"].([]any)
	for _, m := range ms {
		ds, _ := m.(map[string]any)["deliveries"].([]any)
		if len(ds) == 0 || ds[len(ds)-1].(map[string]any)["outcome"] == "crashed" {
			return false
		}
	}
	return true
}

func getJSON(t *testing.T, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return v
}

func postJSON(t *testing.T, url, body string, want int) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %d %v, want %d", url, resp.StatusCode, v, want)
	}
	return v
}

func patch(t *testing.T, url, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPatch, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH %s: %d", url, resp.StatusCode)
	}
}
