package web_test

import (
	"net/http"
	"testing"
	"time"
)

// PUT and DELETE are idempotent by contract: sent twice, each leaves the
// state as once. PUT answers 201, then 200; DELETE 204, then 404; GET shows
// the state.
func TestOrdersMethods(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	orders := func() map[string]any { return s.must(http.StatusOK, "GET", lab+"/orders", "").JSON(t) }
	s.must(http.StatusCreated, "PUT", lab+"/orders/order-42", `{"amount":1500}`)
	s.must(http.StatusOK, "PUT", lab+"/orders/order-42", `{"amount":1500}`)
	got := orders()
	list, _ := got["orders"].([]any)
	if got["count"] != float64(1) || len(list) != 1 || list[0].(map[string]any)["amount"] != float64(1500) {
		t.Errorf("after PUT twice: %v, want one order of 1500", got)
	}
	s.must(http.StatusOK, "PUT", lab+"/orders/order-42", `{"amount":2000}`)
	if a := orders()["orders"].([]any)[0].(map[string]any)["amount"]; a != float64(2000) {
		t.Errorf("PUT of a new state: amount %v, want 2000", a)
	}
	s.must(http.StatusNoContent, "DELETE", lab+"/orders/order-42", "")
	checkProblem(t, s.do("DELETE", lab+"/orders/order-42", ""), http.StatusNotFound, "/problems/not-found", "")
	if got := orders(); got["count"] != float64(0) {
		t.Errorf("after DELETE twice: %v, want no order", got)
	}
	if led := s.ledger(lab); led.Count != 0 {
		t.Errorf("the orders charged: %d payments", led.Count)
	}
}

// The client retries a PUT and a DELETE through the same network fates as a
// charge: the answer lost, then the retry. PUT leaves one order, as after
// one PUT (201, then 200); DELETE leaves none (204 lost, then 404); no
// charge is made. The same script with POST charges twice (lesson 1).
func TestMethodsThroughTheNetwork(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for range trials { // lesson 9's counts, the same every time
		methodsOnce(t, s)
	}
	checkProblem(t, s.do("POST", s.newLab("")+"/operations", `{"order_id":"order-42","amount":1500,"method":"PATCH"}`), http.StatusBadRequest, "/problems/validation-error", "method")
}

func methodsOnce(t *testing.T, s *testServer) {
	t.Helper()
	lab := s.newLab(`{"network":"response-lost"}`)
	put := s.operation(lab, `{"order_id":"order-42","amount":1500,"method":"PUT"}`)
	put = s.retry(lab, put.ID, `{"fate":"ok"}`)
	if len(put.Attempts) != 2 || put.Attempts[0].Outcome != "created" || put.Attempts[1].Status != 200 || put.Attempts[1].Outcome != "updated" {
		t.Errorf("PUT's attempts: %+v; want created (answer lost), then 200 updated", put.Attempts)
	}
	if got := s.must(http.StatusOK, "GET", lab+"/orders", "").JSON(t); got["count"] != float64(1) {
		t.Errorf("after PUT and its retry: %v, want one order", got)
	}
	del := s.operation(lab, `{"order_id":"order-42","amount":1500,"method":"DELETE"}`)
	del = s.retry(lab, del.ID, `{"fate":"ok"}`)
	if len(del.Attempts) != 2 || del.Attempts[0].Outcome != "deleted" || del.Attempts[1].Status != 404 || del.Attempts[1].Outcome != "absent" {
		t.Errorf("DELETE's attempts: %+v; want deleted (answer lost), then 404 absent", del.Attempts)
	}
	if got := s.must(http.StatusOK, "GET", lab+"/orders", "").JSON(t); got["count"] != float64(0) {
		t.Errorf("after DELETE and its retry: %v, want no order", got)
	}
	if led := s.ledger(lab); led.Count != 0 {
		t.Errorf("PUT and DELETE charged %d times", led.Count)
	}
	post := s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	s.retry(lab, post.ID, `{"fate":"ok"}`)
	if led := s.ledger(lab); led.Count != 2 {
		t.Errorf("POST and its retry: %d charges, want 2 (lesson 1)", led.Count)
	}
}

// PUT is idempotent by contract: a PUT of the state the order already has
// changes nothing, its updated_at included, and answers with the order as
// it stands; a PUT of another state changes it.
func TestIdenticalPutChangesNothing(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startServer(t, withClock(clock))
	lab := s.newLab("")
	stored := func() any {
		list, _ := s.must(http.StatusOK, "GET", lab+"/orders", "").JSON(t)["orders"].([]any)
		if len(list) != 1 {
			t.Fatalf("orders %v, want one", list)
		}
		return list[0].(map[string]any)["updated_at"]
	}
	first := s.must(http.StatusCreated, "PUT", lab+"/orders/order-42", `{"amount":1500}`).JSON(t)["updated_at"]
	clock.Advance(time.Minute)
	again := s.must(http.StatusOK, "PUT", lab+"/orders/order-42", `{"amount":1500}`).JSON(t)["updated_at"]
	if got := stored(); got != first || again != first {
		t.Errorf("after the same PUT a minute later: stored %v, answered %v; want both %v", got, again, first)
	}
	clock.Advance(time.Minute)
	changed := s.must(http.StatusOK, "PUT", lab+"/orders/order-42", `{"amount":2000}`).JSON(t)["updated_at"]
	if got := stored(); got != changed || changed == first {
		t.Errorf("after a PUT of a new amount: stored %v, answered %v; want a new time, not %v", got, changed, first)
	}
}
