package cluster

import (
	"encoding/json"
	"testing"
	"time"

	"idemlab/sim"
)

// A new charge's live event, as another process hears it under load.
func chargeEvent() sim.Event {
	k := "load-123456"
	return sim.Event{Lab: "2-JULBrIrIBoYPtXXk6Ndw", Kind: sim.EventCharge, At: time.Now(), Outcome: sim.OutcomeCharged,
		Payment: &sim.Payment{ID: 123456, OrderID: "order-123456", Amount: 100, IdempotencyKey: &k, CreatedAt: time.Now().UTC()},
		Key:     &k, OrderID: "order-123456"}
}

// What a live event costs the process that sends it (encoding) and each
// process that hears it (decoding a notice as the sender packs it): under
// a charge load every new charge is one, so both are on the charge's bill.
//
//	go test -run '^$' -bench Notice -benchmem ./sim/cluster
func BenchmarkNoticeEncode(b *testing.B) {
	ev := chargeEvent()
	c := &Cluster{}
	for b.Loop() {
		c.event(ev)
	}
	b.ReportMetric(float64(len(c.event(ev))), "bytes/event")
}

// BenchmarkNoticeEncodeJSON is the baseline: the same event through
// encoding/json, as every event went before codec.go.
func BenchmarkNoticeEncodeJSON(b *testing.B) {
	ev := chargeEvent()
	for b.Loop() {
		if _, err := json.Marshal(ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNoticeDecode(b *testing.B) {
	benchDecode(b, func(data []byte) (notice, error) { return readNotice(string(data)) })
}

// BenchmarkNoticeDecodeJSON is the baseline: the same notice through
// encoding/json.
func BenchmarkNoticeDecodeJSON(b *testing.B) {
	benchDecode(b, func(data []byte) (notice, error) {
		var n notice
		err := json.Unmarshal(data, &n)
		return n, err
	})
}

func benchDecode(b *testing.B, read func([]byte) (notice, error)) {
	c := &Cluster{own: `{"from":"a-process"`}
	evs := make([]string, 30)
	for i := range evs {
		evs[i] = string(c.event(chargeEvent()))
	}
	data := []byte(c.pack(evs)[0]) // the first notice, as full as the sender packs it
	var in int
	for b.Loop() {
		n, err := read(data)
		if err != nil || len(n.Evs) == 0 || n.Evs[0].Payment == nil {
			b.Fatalf("decode: %v", err)
		}
		in = len(n.Evs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(in), "ns/event")
	b.ReportMetric(float64(in), "events/notice")
}
