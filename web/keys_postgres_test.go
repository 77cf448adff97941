package web_test

import (
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/sim"
)

// On PostgreSQL the replay records and the UNIQUE column's keys live in
// PostgreSQL, and the API and the keys panel, in both languages, say so.
func TestKeysNamePostgres(t *testing.T) {
	t.Parallel()
	s := startServer(t, withPostgres(t))
	lab := s.newLab(`{"protection":"replay"}`)
	s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", "k-replay")
	s.must(http.StatusOK, "PATCH", lab+"/settings", `{"protection":"unique"}`)
	s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", "k-unique")
	ks := s.keysOf(lab)
	if len(ks) != 2 {
		t.Fatalf("keys: %+v; want two", ks)
	}
	for _, k := range ks {
		if k.Store != sim.StorePostgres {
			t.Errorf("key %s (%s) lives in %q, want postgres", k.Key, k.State, k.Store)
		}
	}
	for lang, want := range map[string]string{"en": "PostgreSQL", "ru": "PostgreSQL"} {
		r := s.must(http.StatusOK, "GET", "/labs/"+path.Base(lab)+"?lang="+lang, "")
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(r.Body)))
		if err != nil {
			t.Fatal(err)
		}
		rows := doc.Find(`[data-testid="key-row"]`)
		if rows.Length() != 2 {
			t.Fatalf("%s: %d key rows, want 2", lang, rows.Length())
		}
		rows.Each(func(_ int, row *goquery.Selection) {
			if st, _ := row.Attr("data-store"); st != sim.StorePostgres || !strings.Contains(row.Text(), want) || strings.Contains(row.Text(), "SQLite") {
				t.Errorf("%s: a key row of store %q says %q; want postgres, %s", lang, st, strings.TrimSpace(row.Text()), want)
			}
		})
	}
}
