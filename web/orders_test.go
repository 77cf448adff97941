package web_test

import (
	"net/http"
	"testing"
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
