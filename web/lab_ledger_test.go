package web_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"idemlab/sim"
)

// Payments are numbered in their lab, from 1: a fresh lab's first payment
// is #1 whatever other labs did.
func TestPaymentNumbersAreTheLabs(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for range 3 {
		s.must(http.StatusCreated, "POST", "/api/v1/labs/demo/charges", `{"order_id":"order-1","amount":100}`)
	}
	lab := s.newLab("")
	r := s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-1","amount":100}`)
	if id := r.JSON(t)["id"]; id != float64(1) {
		t.Errorf("a fresh lab's first payment is %v, want 1", id)
	}
	if loc := r.Header.Get("Location"); loc != lab+"/payments/1" {
		t.Errorf("Location %q", loc)
	}
	s.must(http.StatusOK, "GET", lab+"/payments/1", "")
}

// The counts kept by triggers (payments, total, orders charged more than
// once, orders charged more often than bought) always equal what counting
// the ledger says, through charges, purchases and resets in any order; on
// SQLite (a trigger for each row) and on PostgreSQL (one for each
// statement, which counts a batch's payments together: some steps charge
// one order from several clients at once).
func TestKeptCountsEqualTheLedger(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		keptCountsEqualTheLedger(t, startServer(t, withDB(filepath.Join(t.TempDir(), "lab.db"))))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		keptCountsEqualTheLedger(t, startServer(t, withPostgres(t)))
	})
}

func keptCountsEqualTheLedger(t *testing.T, s *testServer) {
	lab := s.newLab(`{"protection":"none"}`)
	ctx := context.Background()
	check := func(step int) {
		t.Helper()
		var want sim.Totals
		q := `SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM payments WHERE lab_id = ?`
		if err := s.House.Store.QueryRow(ctx, q, labID(lab)).Scan(&want.Payments, &want.Total); err != nil {
			t.Fatal(err)
		}
		q = `SELECT COUNT(*), COALESCE(SUM(CASE WHEN c > (SELECT COUNT(*) FROM operations o WHERE o.lab_id = ?1 AND o.order_id = p.order_id) THEN 1 ELSE 0 END), 0)
FROM (SELECT order_id, COUNT(*) AS c FROM payments WHERE lab_id = ?1 GROUP BY order_id HAVING COUNT(*) > 1) p`
		if err := s.House.Store.QueryRow(ctx, q, labID(lab)).Scan(&want.Doubled, &want.Overcharged); err != nil {
			t.Fatal(err)
		}
		l, err := s.House.Labs.Lab(ctx, labID(lab))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.House.Ledger.Totals(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("after step %d: kept %+v, counted %+v", step, got, want)
		}
	}
	for step := range 120 {
		order := fmt.Sprintf("order-%d", step*7%5)
		switch step % 6 {
		case 0:
			s.must(http.StatusCreated, "POST", lab+"/charges", fmt.Sprintf(`{"order_id":%q,"amount":%d}`, order, 100+step))
		case 1: // one order charged by several clients at once, and another beside it
			var wg sync.WaitGroup
			for i := range 5 {
				wg.Go(func() {
					o := order
					if i == 4 {
						o = "order-other"
					}
					s.must(http.StatusCreated, "POST", lab+"/charges", fmt.Sprintf(`{"order_id":%q,"amount":%d}`, o, 100+i))
				})
			}
			wg.Wait()
		case 2, 3:
			s.operation(lab, fmt.Sprintf(`{"order_id":%q,"amount":100,"fate":"response-lost"}`, order))
		case 4:
			s.retry(lab, "latest", "")
		case 5:
			if step%30 == 5 {
				s.must(http.StatusNoContent, "POST", lab+"/reset", "")
			} else {
				s.operation(lab, fmt.Sprintf(`{"order_id":%q,"amount":100,"fate":"request-lost"}`, order))
			}
		}
		check(step)
	}
}

// The report taken home names the charges sent straight to the API too.
func TestReportNamesDirectCharges(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-77","amount":700}`, "Idempotency-Key", "curl-key")
	s.operation(lab, `{"order_id":"order-1","amount":100}`)
	page := "/labs/" + labID(lab)
	for lang, want := range map[string]string{"en": "Charges sent straight to the API (not by the lab's client): 1.", "ru": "Списания, отправленные прямо в API (не клиентом лаборатории): 1."} {
		r := s.must(http.StatusOK, "GET", page+"/export/report.md?lang="+lang, "")
		if !strings.Contains(string(r.Body), want) || !strings.Contains(string(r.Body), "order-77") || !strings.Contains(string(r.Body), "curl-key") {
			t.Errorf("%s report does not name the direct charge:\n%s", lang, r.Body)
		}
		if strings.Count(string(r.Body), "order-1`") > 0 && strings.Contains(string(r.Body), "payment 2") {
			t.Errorf("%s report lists the client's charge as a direct one:\n%s", lang, r.Body)
		}
	}
}

// The double-charge alert names at most ten orders and says how many more:
// a lab with thousands of doubly charged orders has a page of the same size.
func TestAlertIsBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	for i := range 13 {
		for range 2 {
			s.must(http.StatusCreated, "POST", lab+"/charges", fmt.Sprintf(`{"order_id":"order-%d","amount":1500}`, i))
		}
	}
	for lang, more := range map[string]string{"en": "…and 3 more orders charged more than once.", "ru": "…и ещё 3 заказа с повторным списанием."} {
		doc := getPage(t, http.DefaultClient, s.URL+"/labs/"+labID(lab), lang)
		alert := doc.Find(`[data-testid="double-charge-alert"]`)
		if n := alert.Find("li").Length(); n != 10 {
			t.Errorf("%s: the alert names %d orders, want 10", lang, n)
		}
		if !strings.Contains(alert.Text(), more) {
			t.Errorf("%s: the alert does not say %q: %s", lang, more, alert.Text())
		}
	}
}
