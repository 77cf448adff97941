package member

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/sim/clock"
	"idemlab/sim/logtest"
)

// The membership's bookkeeping between the database's answers, on a fake
// clock: what its renewals leave it holding, what a writing transaction's
// first statement gets, and what it logs. Its SQL runs in sim/store's
// tests, on PostgreSQL (lease_test.go, lead_test.go, join_test.go).

// fresh is a membership of a one-second lease on a fake clock, its log kept.
func fresh() (*Member, *clock.Fake, *logtest.Buffer) {
	c := clock.NewFake(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	l := &logtest.Buffer{}
	return New(time.Second, c, l.Logger()), c, l
}

// count is how many of the log's lines hold s.
func count(l *logtest.Buffer, s string) int { return strings.Count(l.String(), s) }

// A renewal holds the lease for a lease from when it was sent; a writing
// transaction's first statement carries this process's id first, then
// the statement's own arguments, and is refused at once, with the loss
// logged once, when the lease has run out by this process's clock; a
// renewal then lets it write again, and says so.
func TestHoldWhileTheLeaseLasts(t *testing.T) {
	m, c, l := fresh()
	if _, err := m.Hold("SELECT " + Step); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("before any renewal: %v, want ErrLeaseLost", err)
	}
	if n := count(l, "lease on the database lost"); n != 1 {
		t.Fatalf("a lease never taken: its loss logged %d times, want once", n)
	}
	sent := c.Now()
	c.Advance(300 * time.Millisecond) // the renewal's answer came late
	m.renewed(sent, false)
	if n := count(l, "renewed: this process writes again"); n != 1 {
		t.Errorf("the renewal after the loss logged %d times, want once", n)
	}
	st, err := m.Hold("SELECT "+Step+", $2", "lab-1")
	if err != nil || !reflect.DeepEqual(st.Args, []any{m.ID(), "lab-1"}) {
		t.Fatalf("while held: %+v, %v; want the process, then the lab", st, err)
	}
	c.Advance(699 * time.Millisecond)
	if !m.Holds() {
		t.Error("a millisecond before the lease's end, counted from the renewal's sending: not held")
	}
	c.Advance(time.Millisecond)
	for range 3 {
		if _, err := m.Hold("SELECT " + Step); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("at the lease's end: %v, want ErrLeaseLost", err)
		}
	}
	if n := count(l, "lease on the database lost"); n != 2 {
		t.Errorf("the second loss, three writes refused: %d loss lines in all, want 2, one for each loss", n)
	}
}

// A renewal that fails before the lease's end loses nothing; one after it
// logs the loss, once however many fail.
func TestFailedRenewalsLogTheLossOnce(t *testing.T) {
	m, c, l := fresh()
	m.renewed(c.Now(), false)
	m.failed(errors.New("connection refused"))
	if !m.Holds() || count(l, "lost") != 0 {
		t.Fatalf("a renewal failed within the lease: holds %v, log %q", m.Holds(), l.String())
	}
	c.Advance(time.Second)
	for range 3 {
		m.failed(errors.New("connection refused"))
	}
	if m.Holds() || count(l, "lease on the database lost") != 1 {
		t.Errorf("three renewals failed past the lease: holds %v, the loss logged %d times; want not held, once", m.Holds(), count(l, "lease on the database lost"))
	}
}

// The lead is logged when it changes, not at each renewal that finds it
// unchanged; Leads holds only while the renewal's lease does.
func TestLeadLoggedWhenItChanges(t *testing.T) {
	m, c, l := fresh()
	m.renewed(c.Now(), false)
	for range 3 {
		m.renewed(c.Now(), true)
	}
	if !m.Leads() || count(l, "this process leads") != 1 {
		t.Errorf("three renewals that lead: leads %v, said %d times; want true, once", m.Leads(), count(l, "this process leads"))
	}
	c.Advance(time.Second)
	if m.Leads() {
		t.Error("leads after its lease ran out")
	}
	m.renewed(c.Now(), false)
	m.renewed(c.Now(), false)
	if m.Leads() || count(l, "another process leads now") != 1 {
		t.Errorf("renewals that find another leading: leads %v, said %d times; want false, once", m.Leads(), count(l, "another process leads now"))
	}
	m.renewed(c.Now(), true)
	if count(l, "this process leads") != 2 {
		t.Errorf("the lead taken again: said %d times in all, want 2", count(l, "this process leads"))
	}
}

// A refusal to take the lease again beside a process keeping a part to
// itself is logged once, however many renewals meet it.
func TestCrowdedLoggedOnce(t *testing.T) {
	m, _, l := fresh()
	crowd := &Crowded{Mine: []string{"broker"}, Peer: "host/42"}
	for range 3 {
		m.failed(fmt.Errorf("renew: %w", crowd))
	}
	if n := count(l, "cannot take its lease again"); n != 1 {
		t.Errorf("three renewals refused: said %d times, want once", n)
	}
}

// Who may run beside whom: a process keeping a part to itself runs with no
// other, and one sharing everything beside none that keeps one.
func TestCrowding(t *testing.T) {
	sharing := peer{id: "b", name: "host/2"}
	keeping := peer{id: "c", name: "host/3", parts: "broker mailbox"}
	for _, tc := range []struct {
		name  string
		parts string
		peers []peer
		want  *Crowded
	}{
		{"alone, keeping parts", "broker", nil, nil},
		{"both share everything", "", []peer{sharing}, nil},
		{"this one keeps a part", "broker", []peer{sharing}, &Crowded{Mine: []string{"broker"}, Peer: "host/2", Theirs: []string{}}},
		{"the other keeps parts", "", []peer{sharing, keeping}, &Crowded{Mine: []string{}, Peer: "host/3", Theirs: []string{"broker", "mailbox"}}},
	} {
		if got := crowding(tc.parts, tc.peers); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %#v, want %#v", tc.name, got, tc.want)
		}
	}
	if msg := (&Crowded{Mine: []string{"kv"}, Peer: "host/2"}).Error(); !strings.Contains(msg, "host/2") || !strings.Contains(msg, "kv") {
		t.Errorf("the refusal does not name the other process and the parts: %q", msg)
	}
}

// The parts are kept as the table processes holds them, sorted, and taking
// the lease again checks them.
func TestPartsSorted(t *testing.T) {
	m, _, _ := fresh()
	if got := m.Parts([]string{"mailbox", "broker", "kv"}); got != "broker kv mailbox" {
		t.Errorf("parts: %q, want sorted", got)
	}
	if !m.joined || m.parts != "broker kv mailbox" {
		t.Errorf("not recorded: joined %v, parts %q", m.joined, m.parts)
	}
}

// The database's refusal of a lease (SQLSTATE IL001 from hold_lease) is
// ErrLeaseLost, its cause kept; another error is left as it is.
func TestRefused(t *testing.T) {
	pgErr := &pgconn.PgError{Code: lostCode, Message: "lease not current"}
	err := Refused(fmt.Errorf("begin: %w", pgErr))
	if !errors.Is(err, ErrLeaseLost) || !IsLost(err) || !errors.As(err, new(*pgconn.PgError)) {
		t.Errorf("IL001: %v; want ErrLeaseLost with the database's error kept", err)
	}
	other := &pgconn.PgError{Code: "40001"}
	if err := Refused(other); err != error(other) || IsLost(err) {
		t.Errorf("a serialization failure: %v, lost %v; want it unchanged", err, IsLost(err))
	}
}

// A membership not started has nothing to stop.
func TestStopBeforeStart(t *testing.T) {
	m, _, _ := fresh()
	if m.Stop() {
		t.Error("Stop before Start reports renewals that had started")
	}
}
