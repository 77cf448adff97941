package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"idemlab/sim/pgtest"
)

// A process that cannot renew its lease (here every renewal fails: a
// trigger refuses them) stops writing once the lease has run out: a charge
// is 503 with Retry-After, the problem naming the database, and /healthz
// is 503; once it renews again, it charges again, each charge once.
func TestLostLeaseStopsWrites(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the lab as a child process")
	}
	dsn := pgtest.Database(t)
	a := member(t, dsn) // alone: it may keep Redis and NATS to itself
	lab := "/api/v1/labs/" + postJSON(t, a.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	c := &http.Client{}
	charge := func(i int) answer {
		return send(context.Background(), c, "POST", a.URL+lab+"/charges", []byte(fmt.Sprintf(`{"order_id":"order-%d","amount":100}`, i)))
	}
	if r := charge(0); r.status != http.StatusCreated {
		t.Fatalf("a charge with the lease: %d %s", r.status, r.body)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE FUNCTION no_renewal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no renewal'; END $$;
CREATE TRIGGER no_renewal BEFORE UPDATE ON processes FOR EACH ROW EXECUTE FUNCTION no_renewal()`); err != nil {
		t.Fatal(err)
	}
	var refused answer
	i := 1
	if !waitUntil(4*childLease, func() bool { refused = charge(i); i++; return refused.status != http.StatusCreated }) {
		t.Fatalf("charges still taken %s after the renewals stopped", 4*childLease)
	}
	if refused.status != http.StatusServiceUnavailable || refused.header.Get("Retry-After") == "" || !strings.Contains(string(refused.body), "database-unavailable") {
		t.Errorf("a charge without a lease: %d (Retry-After %q) %s; want 503 database-unavailable with Retry-After", refused.status, refused.header.Get("Retry-After"), refused.body)
	}
	if h := send(context.Background(), c, "GET", a.URL+"/healthz", nil); h.status != http.StatusServiceUnavailable {
		t.Errorf("/healthz without a lease: %d, want 503", h.status)
	}
	if _, err := db.Exec(`DROP TRIGGER no_renewal ON processes`); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(4*childLease, func() bool { return charge(i).status == http.StatusCreated }) {
		t.Fatalf("no charge taken %s after the renewals could go on", 4*childLease)
	}
	keys := map[string]int{}
	for _, p := range getJSON(t, a.URL+lab+"/payments?limit=1000")["payments"].([]any) {
		keys[p.(map[string]any)["order_id"].(string)]++
	}
	for order, n := range keys {
		if n != 1 {
			t.Errorf("%s charged %d times", order, n)
		}
	}
	if !strings.Contains(a.out.String(), "lease on the database lost") || !strings.Contains(a.out.String(), "lease on the database renewed") {
		t.Errorf("the log does not say the lease was lost and renewed:\n%s", a.out.String())
	}
}
