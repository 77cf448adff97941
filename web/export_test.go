package web_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"idemlab/sim"
)

// The lab goes home as a CSV ledger, a JSON history and a Markdown report,
// each the same as what the API and the page say.
func TestExports(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	api := s.newLab(`{"protection":"none","key_strategy":"uuid"}`)
	page := "/labs/" + strings.TrimPrefix(api, "/api/v1/labs/")
	op := s.operation(api, `{"order_id":"order-42","amount":1500,"fate":"response-lost"}`)
	s.retry(api, op.ID, "")
	s.must(http.StatusCreated, "POST", api+"/charges", `{"order_id":"-A1","amount":7}`, "Idempotency-Key", "=cmd|x")

	r := s.must(http.StatusOK, "GET", page+"/export/ledger.csv", "")
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, r.Body)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != "id,order_id,amount,idempotency_key,created_at" {
		t.Fatalf("CSV rows %v, want a header and 3 payments", rows)
	}
	if rows[1][1] != "order-42" || rows[1][2] != "1500" || rows[3][1] != "'-A1" || rows[3][3] != "'=cmd|x" {
		t.Errorf("CSV: %v (oldest first; formula-like cells quoted)", rows)
	}
	if !strings.Contains(r.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("CSV is not a download: %v", r.Header)
	}

	r = s.must(http.StatusOK, "GET", page+"/export/history.json", "")
	var h struct {
		Settings   sim.Settings    `json:"settings"`
		Operations []sim.Operation `json:"operations"`
		Payments   int64           `json:"payments"`
		Total      int64           `json:"total"`
	}
	if err := json.Unmarshal(r.Body, &h); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if len(h.Operations) != 1 || len(h.Operations[0].Attempts) != 2 || h.Payments != 3 || h.Total != 3007 || h.Settings.KeyStrategy != sim.KeyUUID {
		t.Errorf("history: %+v", h)
	}

	en := string(s.must(http.StatusOK, "GET", page+"/export/report.md?lang=en", "").Body)
	ru := string(s.must(http.StatusOK, "GET", page+"/export/report.md?lang=ru", "").Body)
	for _, want := range []string{"Charge order-42 ₽1,500 (key strategy uuid)", "3 charges, ₽3,007 in all.", "Attempt 2", "✗ No."} {
		if !strings.Contains(en, want) {
			t.Errorf("English report lacks %q:\n%s", want, en)
		}
	}
	for _, want := range []string{"Списание 1\u00a0500\u00a0₽ за заказ order-42", "Всего 3 списания на сумму 3\u00a0007\u00a0₽.", "Попытка 2", "✗ Нет."} {
		if !strings.Contains(ru, want) {
			t.Errorf("Russian report lacks %q:\n%s", want, ru)
		}
	}
	s.must(http.StatusNotFound, "GET", "/labs/AAAAAAAAAAAAAAAAAAAAAA/export/ledger.csv", "")
}
