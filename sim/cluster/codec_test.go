package cluster

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
)

// codecEvent is a charge event made of the fuzzer's values.
func codecEvent(lab, outcome, order, key string, id, amount, atNs int64, zone int, withPayment, withKey, nilPaymentKey, queued bool) sim.Event {
	at := time.Unix(0, atNs).In(time.FixedZone("z", zone))
	ev := sim.Event{Lab: lab, Kind: sim.EventCharge, At: at, Outcome: sim.Outcome(outcome), OrderID: order, Queued: queued}
	if withKey {
		ev.Key = &key
	}
	if withPayment {
		ev.Payment = &sim.Payment{ID: id, OrderID: order, Amount: amount, IdempotencyKey: &key, CreatedAt: at.UTC()}
		if nilPaymentKey {
			ev.Payment.IdempotencyKey = nil
		}
	}
	return ev
}

// The fast way writes a charge event byte for byte as json.Marshal does,
// or declines; what it writes, the fast reader reads as json.Unmarshal
// reads it.
func checkCodec(t *testing.T, ev sim.Event) {
	t.Helper()
	want, err := json.Marshal(ev)
	got, ok := appendCharge(nil, &ev)
	if !ok {
		return // encoding/json's to write
	}
	if err != nil {
		t.Fatalf("wrote %s where encoding/json refuses: %v", got, err)
	}
	if string(got) != string(want) {
		t.Fatalf("wrote\n%s\nencoding/json writes\n%s", got, want)
	}
	checkRead(t, `{"from":"p-1","evs":[`+string(got)+`,`+string(got)+`]}`, true)
}

// checkRead reads payload both ways: the same notice, or the same refusal;
// fast says the fast reader must take it.
func checkRead(t *testing.T, payload string, fast bool) {
	t.Helper()
	var want notice
	werr := json.Unmarshal([]byte(payload), &want)
	got, ok := readEvents(payload)
	if fast && !ok {
		t.Fatalf("the fast reader declined %s", payload)
	}
	if !ok {
		return
	}
	if werr != nil {
		t.Fatalf("read %s, which encoding/json refuses: %v", payload, werr)
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(notice{}, ack{})); d != "" {
		t.Fatalf("read %s unlike encoding/json (-json +fast):\n%s", payload, d)
	}
}

func TestCodecMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	k := "load-1"
	checkCodec(t, chargeEvent())
	checkCodec(t, sim.Event{Lab: "l", Kind: sim.EventCharge, At: time.Date(2026, 12, 5, 1, 2, 3, 0, time.UTC)})
	checkCodec(t, sim.Event{Lab: "l", Kind: sim.EventCharge, At: time.Now(), Outcome: sim.OutcomeReplayed, Key: &k, Queued: true})
	checkCodec(t, codecEvent("l", "charged", "o-1", "k", -5, 0, 0, 3600, true, true, true, false))
	// declined, each for encoding/json to write
	for name, ev := range map[string]sim.Event{
		"another kind":        {Lab: "l", Kind: sim.EventReset, At: time.Now()},
		"an escaped text":     codecEvent("l", "charged", `o"1`, "k", 1, 1, 0, 0, true, true, false, false),
		"html in a key":       codecEvent("l", "charged", "o", "<k>", 1, 1, 0, 0, false, true, false, false),
		"a zone with seconds": codecEvent("l", "charged", "o", "k", 1, 1, 0, 30, false, false, false, false),
		"a late answer":       {Lab: "l", Kind: sim.EventCharge, At: time.Now(), Late: true},
	} {
		if b, ok := appendCharge(nil, &ev); ok {
			t.Errorf("%s: written the fast way: %s", name, b)
		}
	}
	// read the slow way, or refused alike
	for _, p := range []string{
		`{"from":"p","evs":[]}`,
		`{"from":"p","n":3,"ev":{"Lab":"l","Kind":"reset","At":"2026-12-05T01:02:03Z"}}`,
		`{"from":"p","evs":[{"Lab":"l","Kind":"charge","At":"2026-12-05T01:02:03Z"}],"hello":true}`,
		`{"from":"p","evs":[{"Lab":"l\u0031","Kind":"charge","At":"2026-12-05T01:02:03Z"}]}`,
		`{"from":"p","evs":[{"Lab":"l","Kind":"charge","At":"2026-12-05T01:02:03Z","Payment":{"id":01,"order_id":"o","amount":1,"idempotency_key":null,"created_at":"2026-12-05T01:02:03Z"}}]}`,
		`{"from":"p","evs":[{"Lab":"l","Kind":"charge","At":"2026-12-05T01:02:03Z","Payment":{"id":-0,"order_id":"o","amount":1,"idempotency_key":null,"created_at":"2026-12-05T01:02:03Z"}}]}`,
		`{"from":"p","evs":[{"Lab":"l","Kind":"charge","At":"not a time"}]}`,
		`{"from":"p","evs":[{"Lab":"l","Kind":"charge","At":"2026-12-05T01:02:03Z"}]} `,
	} {
		checkRead(t, p, false)
	}
	checkRead(t, `{"from":"p","evs":[{"Lab":"l","Kind":"charge","At":"2026-12-05T01:02:03+01:00","Key":"k","OrderID":"o","Queued":true}]}`, true)
}

func FuzzCodecMatchesEncodingJSON(f *testing.F) {
	f.Add("2-JULBrIrIBoYPtXXk6Ndw", "charged", "order-1", "load-1", int64(1), int64(100), int64(1796442558388000000), 0, true, true, false, false)
	f.Add("l", "", "", "", int64(-1), int64(0), int64(0), -3600, false, false, true, true)
	f.Fuzz(func(t *testing.T, lab, outcome, order, key string, id, amount, atNs int64, zone int, withPayment, withKey, nilPaymentKey, queued bool) {
		checkCodec(t, codecEvent(lab, outcome, order, key, id, amount, atNs, zone%100000, withPayment, withKey, nilPaymentKey, queued))
	})
}

func FuzzReadNoticeMatchesEncodingJSON(f *testing.F) {
	c := &Cluster{own: `{"from":"a-process"`}
	f.Add(c.pack([]string{string(c.event(chargeEvent())), string(c.event(chargeEvent()))})[0])
	f.Add(`{"from":"p","evs":[{"Lab":"l","Kind":"charge","At":"2026-12-05T01:02:03Z","Outcome":"replayed","Payment":{"id":7,"order_id":"o","amount":1,"idempotency_key":null,"created_at":"2026-12-05T01:02:03.5Z"}}]}`)
	f.Fuzz(func(t *testing.T, payload string) {
		if strings.Count(payload, "{") > 64 {
			return
		}
		checkRead(t, payload, false)
	})
}
