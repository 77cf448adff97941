package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
)

// labState is what a bad request must leave untouched.
type labState struct {
	Ledger     ledger
	Settings   map[string]any
	Operations []sim.Operation
}

func (s *testServer) state(prefix string) labState {
	s.tb.Helper()
	var st labState
	st.Ledger = s.ledger(prefix)
	st.Settings = s.must(http.StatusOK, "GET", prefix+"/settings", "").JSON(s.tb)
	ops := decode[struct {
		Operations []sim.Operation `json:"operations"`
	}](s.tb, s.must(http.StatusOK, "GET", prefix+"/operations?limit=100", "").Body)
	st.Operations = ops.Operations
	return st
}

// send makes the request of a case against the lab at prefix.
func (s *testServer) send(c badCase, prefix, opID string) response {
	s.tb.Helper()
	path := c.path
	if path == "" {
		path = "{lab}/charges"
	}
	path = strings.NewReplacer("{lab}", prefix, "{op}", opID).Replace(path)
	if c.build != nil {
		req := c.build(s.URL + path)
		resp, err := s.client.Do(req)
		if err != nil {
			s.tb.Fatalf("%s %s: %v", req.Method, path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			s.tb.Fatalf("%s %s: read body: %v", req.Method, path, err)
		}
		return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	headers := c.headers
	if headers == nil {
		headers = key(badKey)
	}
	return s.do(method, path, c.body, headers...)
}

// TestBadInput sends every bad request of the table to a lab under each of
// the protections replay and unique, and checks that each gets its problem
// answer and that none of them changed anything.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	type labUnder struct {
		protection, prefix, opID string
	}
	var labs []labUnder
	for _, prot := range []string{"replay", "unique"} {
		prefix := s.newLab(`{"protection":"` + prot + `","key_strategy":"uuid"}`)
		// A ledger that is not empty, and an operation for the retry and race cases.
		s.must(http.StatusCreated, "POST", prefix+"/charges", `{"order_id":"order-1","amount":100}`, "Idempotency-Key", "setup-1")
		op := s.operation(prefix, `{"order_id":"order-2","amount":200}`)
		labs = append(labs, labUnder{prot, prefix, op.ID})
	}
	before := map[string]labState{}
	for _, l := range labs {
		before[l.prefix] = s.state(l.prefix)
		if got := before[l.prefix].Ledger.Count; got != 2 {
			t.Fatalf("lab %s: setup made %d payments, want 2", l.protection, got)
		}
	}

	var pages problemPages
	var fivexx []string
	ran := 0
	for _, c := range badCases {
		for _, l := range labs {
			if c.only != "" && c.only != l.protection {
				continue
			}
			t.Run(l.protection+"/"+c.name, func(t *testing.T) {
				ts := *s
				ts.tb = t
				r := ts.send(c, l.prefix, l.opID)
				ran++
				if r.Status >= 500 {
					fivexx = append(fivexx, c.name)
				}
				p := checkProblem(t, r, c.status, c.typ, c.field)
				pages.check(t, &ts, p.Type)
			})
		}
	}
	if ran < 60 {
		t.Errorf("only %d requests ran", ran)
	}
	if len(fivexx) > 0 {
		t.Errorf("5xx answers to %q", fivexx)
	}

	for _, l := range labs {
		if diff := cmp.Diff(before[l.prefix], s.state(l.prefix)); diff != "" {
			t.Errorf("lab %s changed under bad requests (-before +after):\n%s", l.protection, diff)
		}
	}
	// Nothing was written for the rejected requests: the key they all
	// carried is still free, so a valid charge with it is a new charge.
	for _, l := range labs {
		r := s.do("POST", l.prefix+"/charges", `{"order_id":"order-3","amount":300}`, "Idempotency-Key", badKey)
		if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("lab %s: a valid charge with the key of the rejected requests: %d %v\n%s", l.protection, r.Status, r.Header, r.Body)
		}
		if got := s.ledger(l.prefix).Count; got != 3 {
			t.Errorf("lab %s: %d payments after one more valid charge, want 3", l.protection, got)
		}
	}
}
