package cluster

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"idemlab/sim"
)

// Under load almost every live event between processes is a charge's, and
// encoding/json's reflection was a tenth of a lab process's CPU under
// replays (marshalling what it sends, unmarshalling what it hears). A
// charge event whose texts need no escaping is written here byte for byte
// as json.Marshal writes it, and a notice made of such events is read here
// as json.Unmarshal reads it; anything else (another kind, a text with an
// escape, a field out of its place) goes to encoding/json. The wire stays
// JSON: processes of either kind read each other. codec_test.go holds both
// ways to encoding/json's, and fuzzes them.

// appendCharge appends ev as json.Marshal writes it, when ev is a charge
// event that the fast way can write; false, and b as it was, otherwise.
func appendCharge(b []byte, ev *sim.Event) ([]byte, bool) {
	if ev.Kind != sim.EventCharge || ev.Operation != nil || ev.Attempt != nil || ev.Late || ev.Settings != nil ||
		ev.Retry != nil || ev.Lesson != nil || ev.Delivery != nil || ev.Subject != "" || ev.GiveBack != "" {
		return b, false
	}
	out := b
	ok := true
	str := func(name, s string) {
		out = append(out, name...)
		if !plain(s) {
			ok = false
		}
		out = append(append(append(out, '"'), s...), '"')
	}
	at := func(name string, t time.Time) {
		out = append(out, name...)
		// what encoding/json refuses to write: a year of other than four
		// digits, a zone offset with seconds
		if _, off := t.Zone(); t.Year() < 0 || t.Year() > 9999 || off%60 != 0 {
			ok = false
		}
		out = t.AppendFormat(append(out, '"'), time.RFC3339Nano)
		out = append(out, '"')
	}
	str(`{"Lab":`, ev.Lab)
	str(`,"Kind":`, string(ev.Kind))
	at(`,"At":`, ev.At)
	if ev.Outcome != "" {
		str(`,"Outcome":`, string(ev.Outcome))
	}
	if p := ev.Payment; p != nil {
		out = strconv.AppendInt(append(out, `,"Payment":{"id":`...), p.ID, 10)
		str(`,"order_id":`, p.OrderID)
		out = strconv.AppendInt(append(out, `,"amount":`...), p.Amount, 10)
		if p.IdempotencyKey == nil {
			out = append(out, `,"idempotency_key":null`...)
		} else {
			str(`,"idempotency_key":`, *p.IdempotencyKey)
		}
		at(`,"created_at":`, p.CreatedAt)
		out = append(out, '}')
	}
	if ev.Key != nil {
		str(`,"Key":`, *ev.Key)
	}
	if ev.OrderID != "" {
		str(`,"OrderID":`, ev.OrderID)
	}
	if ev.Queued {
		out = append(out, `,"Queued":true`...)
	}
	if !ok {
		return b, false
	}
	return append(out, '}'), true
}

// plain reports whether s is written in JSON as it is: printable ASCII
// with no quote, backslash or character that encoding/json escapes for
// HTML.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// readNotice reads a notice as json.Unmarshal does.
func readNotice(payload string) (notice, error) {
	if n, ok := readEvents(payload); ok {
		return n, nil
	}
	var n notice
	err := json.Unmarshal([]byte(payload), &n)
	return n, err
}

// readEvents reads a notice of charge events as the sender packs it
// ({"from":…,"evs":[…]}); false when it is not one.
func readEvents(s string) (notice, bool) {
	r := reader{s: s}
	var n notice
	if !r.lit(`{"from":`) || !r.str(&n.From) || !r.lit(`,"evs":[`) {
		return notice{}, false
	}
	n.Evs = make([]sim.Event, 0, strings.Count(r.s, `{"Lab":`))
	for {
		var ev sim.Event
		if !r.charge(&ev) {
			return notice{}, false
		}
		n.Evs = append(n.Evs, ev)
		if r.lit(`]}`) {
			return n, r.s == ""
		}
		if !r.lit(",") {
			return notice{}, false
		}
	}
}

// reader reads the JSON that appendCharge writes, from the front of s.
type reader struct{ s string }

func (r *reader) lit(p string) bool {
	if !strings.HasPrefix(r.s, p) {
		return false
	}
	r.s = r.s[len(p):]
	return true
}

// str reads a string with no escape in it, of valid UTF-8 (json.Unmarshal
// would replace what is not).
func (r *reader) str(into *string) bool {
	if !r.lit(`"`) {
		return false
	}
	i := strings.IndexByte(r.s, '"')
	if i < 0 || !utf8.ValidString(r.s[:i]) {
		return false
	}
	for j := 0; j < i; j++ {
		if c := r.s[j]; c < 0x20 || c == '\\' {
			return false
		}
	}
	*into, r.s = r.s[:i], r.s[i+1:]
	return true
}

func (r *reader) int(into *int64) bool {
	i := 0
	if i < len(r.s) && r.s[i] == '-' {
		i++
	}
	for i < len(r.s) && r.s[i] >= '0' && r.s[i] <= '9' {
		i++
	}
	v, err := strconv.ParseInt(r.s[:i], 10, 64)
	if err != nil || (i > 1 && r.s[0] == '0') || (i > 2 && r.s[:2] == "-0") {
		return false
	}
	*into, r.s = v, r.s[i:]
	return true
}

func (r *reader) time(into *time.Time) bool {
	var s string
	if !r.str(&s) {
		return false
	}
	return into.UnmarshalJSON([]byte(`"`+s+`"`)) == nil
}

// charge reads one event as appendCharge writes it.
func (r *reader) charge(ev *sim.Event) bool {
	var kind, outcome string
	if !r.lit(`{"Lab":`) || !r.str(&ev.Lab) || !r.lit(`,"Kind":`) || !r.str(&kind) || kind != string(sim.EventCharge) ||
		!r.lit(`,"At":`) || !r.time(&ev.At) {
		return false
	}
	ev.Kind = sim.EventCharge
	if r.lit(`,"Outcome":`) {
		if !r.str(&outcome) {
			return false
		}
		ev.Outcome = sim.Outcome(outcome)
	}
	if r.lit(`,"Payment":{"id":`) {
		p := new(sim.Payment)
		if !r.int(&p.ID) || !r.lit(`,"order_id":`) || !r.str(&p.OrderID) || !r.lit(`,"amount":`) || !r.int(&p.Amount) ||
			!r.lit(`,"idempotency_key":`) {
			return false
		}
		if !r.lit("null") {
			p.IdempotencyKey = new(string)
			if !r.str(p.IdempotencyKey) {
				return false
			}
		}
		if !r.lit(`,"created_at":`) || !r.time(&p.CreatedAt) || !r.lit("}") {
			return false
		}
		ev.Payment = p
	}
	if r.lit(`,"Key":`) {
		ev.Key = new(string)
		if !r.str(ev.Key) {
			return false
		}
	}
	if r.lit(`,"OrderID":`) && !r.str(&ev.OrderID) {
		return false
	}
	if r.lit(`,"Queued":true`) {
		ev.Queued = true
	}
	return r.lit("}")
}
