package class

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/store"
)

// Vote takes a voter's choice on question n of the class with the join
// code; a second vote of the voter on it replaces the first. An unknown or
// ended code is ENotFound, a question no longer open EClosed, a choice the
// question does not offer EInvalid: nothing is counted then.
func (cs *Classes) Vote(ctx context.Context, code, voter string, n int, choice string) error {
	p, err := cs.phones.get(ctx, cs, code)
	if err != nil {
		return err
	}
	lab := p.lab
	now := cs.clock.Now().UnixMilli()
	err = cs.store.Write(ctx, func(tx *store.Tx) error {
		// The question's row is the vote's lock: the reveal's closing
		// write waits for the votes under way, and a vote that comes
		// after it finds the vote closed.
		res, err := tx.Exec(`UPDATE class_questions SET stamp = stamp + 1 WHERE lab_id = ? AND n = ? AND state = ?`, lab, n, Open)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k == 0 {
			return errors.Join(err, sim.Errorf(sim.EClosed, "class-closed"))
		}
		var choices string
		var voters int
		if err := tx.QueryRow(`SELECT choices, (SELECT count(*) FROM class_votes WHERE lab_id = ?1 AND n = ?2)
FROM class_questions WHERE lab_id = ?1 AND n = ?2`, lab, n).Scan(&choices, &voters); err != nil {
			return err
		}
		if !slices.Contains(strings.Split(choices, ","), choice) {
			return sim.Invalid(sim.Broke("choice", RuleChoice, choices))
		}
		if voters >= MaxVoters {
			var had int
			if err := tx.QueryRow(`SELECT count(*) FROM class_votes WHERE lab_id = ? AND n = ? AND voter = ?`, lab, n, voter).Scan(&had); err != nil {
				return err
			}
			if had == 0 {
				return sim.Busy("class-voters", 10*time.Second, "class-voters", MaxVoters)
			}
		}
		_, err = tx.Exec(`INSERT INTO class_votes (lab_id, n, voter, choice, at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (lab_id, n, voter) DO UPDATE SET choice = excluded.choice, at = excluded.at`, lab, n, voter, choice, now)
		return err
	})
	if err != nil {
		return failed(lab, "vote in", err)
	}
	cs.bus.Publish(sim.Event{Lab: lab, Kind: sim.EventClass})
	return nil
}

// Phone is a class as a student's phone shows it: never its lab.
type Phone struct {
	lab      string
	Code     string
	Origin   string    // where phones join: scheme and host
	Question *Question // the latest; its votes per choice only once revealed
	Mine     string    // the voter's choice on it, "" none
}

// Version says what a phone shows, apart from its own vote: a page that
// shows this version has nothing new to show.
func (p Phone) Version() string {
	if p.Question == nil {
		return "0"
	}
	return p.Question.State + strconv.Itoa(p.Question.N) // running and revealed both begin with r
}

// Phone reads the class with the join code for a voter's phone. Many
// phones ask for one class at once: what they share is read at most once
// per phoneFresh for all of them.
func (cs *Classes) Phone(ctx context.Context, code, voter string) (Phone, error) {
	p, err := cs.phones.get(ctx, cs, code)
	if err != nil || p.Question == nil || voter == "" {
		return p, err
	}
	err = cs.store.QueryRow(ctx, `SELECT choice FROM class_votes WHERE lab_id = ? AND n = ? AND voter = ?`, p.lab, p.Question.N, voter).Scan(&p.Mine)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return p, failed(p.lab, "read a vote in", err)
	}
	return p, nil
}

// PhoneVersion is the version of what the class's phones show; a page
// that shows it may skip reading its own vote again.
func (cs *Classes) PhoneVersion(ctx context.Context, code string) (string, error) {
	p, err := cs.phones.get(ctx, cs, code)
	return p.Version(), err
}

// phoneFresh is how old what phones are shown may be.
const phoneFresh = 500 * time.Millisecond

// phonesKept is how many classes' phone views are kept at most.
const phonesKept = 1000

// phoneCache is what the phones of each class are shown, read at most
// once per phoneFresh: three hundred phones asking every second cost the
// database two reads a second.
type phoneCache struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]phoneEntry
}

type phoneEntry struct {
	p  Phone
	at time.Time
}

func newPhoneCache(now func() time.Time) *phoneCache {
	return &phoneCache{now: now, m: map[string]phoneEntry{}}
}

// get returns the phone view of the class with the code, read afresh when
// older than phoneFresh. The lock is not held while the database reads.
func (c *phoneCache) get(ctx context.Context, cs *Classes, code string) (Phone, error) {
	code = strings.ToUpper(code)
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[code]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < phoneFresh && now.Sub(e.at) >= 0 {
		return e.p, nil
	}
	p, err := cs.readPhone(ctx, code)
	if err != nil {
		return p, err
	}
	c.mu.Lock()
	if len(c.m) >= phonesKept {
		for k, e := range c.m {
			if now.Sub(e.at) >= phoneFresh {
				delete(c.m, k)
			}
		}
		if len(c.m) >= phonesKept {
			clear(c.m)
		}
	}
	c.m[code] = phoneEntry{p, now}
	c.mu.Unlock()
	return p, nil
}

// forget drops what is kept of the lab's class: it changed.
func (c *phoneCache) forget(lab string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if e.p.lab == lab {
			delete(c.m, k)
		}
	}
}

// readPhone reads the class with the code for its phones.
func (cs *Classes) readPhone(ctx context.Context, code string) (Phone, error) {
	p := Phone{Code: code}
	var ends int64
	var asked int
	err := cs.store.QueryRow(ctx, `SELECT lab_id, origin, ends_at, asked FROM classes WHERE code = ?`, code).Scan(&p.lab, &p.Origin, &ends, &asked)
	if errors.Is(err, sql.ErrNoRows) || err == nil && ends <= cs.clock.Now().UnixMilli() {
		return p, sim.Errorf(sim.ENotFound, "no-class-code")
	}
	if err != nil {
		return p, fmt.Errorf("class: read the phones of %s: %w", code, err)
	}
	if asked > 0 {
		q, err := cs.question(ctx, p.lab, asked)
		if err != nil {
			return p, err
		}
		if q.State != Revealed { // a phone sees no count before the reveal
			q.Votes, q.Counts = 0, nil
		}
		p.Question = &q
	}
	return p, nil
}
