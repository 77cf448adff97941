package sim

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Action is one thing done to a lab that a scenario replays.
type Action struct {
	Kind     string         `json:"k"` // base, settings, charge, retry, race
	Base     *Settings      `json:"b,omitempty"`
	Settings *SettingsPatch `json:"s,omitempty"`
	OrderID  string         `json:"o,omitempty"`
	Amount   int64          `json:"a,omitempty"`
	Fate     Fate           `json:"f,omitempty"`
	Op       int            `json:"op,omitempty"` // the operation's number in the lab, from 1
	WithKey  *bool          `json:"w,omitempty"`
	N        int            `json:"n,omitempty"`
}

// Scenario is a lab's settings at its start and what was done to it since.
type Scenario struct {
	Base    Settings `json:"b"`
	Actions []Action `json:"a"`
}

// Limits of a scenario, so that a URL cannot make the server work for ever.
const (
	MaxScenarioActions = 500
	maxScenarioBytes   = 1 << 20
)

// record appends an action to the lab's list; "base" starts the list anew.
func (e *Engine) record(ctx context.Context, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, lab string, a Action) error {
	if a.Kind == "base" {
		if _, err := q.ExecContext(ctx, `DELETE FROM lab_actions WHERE lab_id = ?`, lab); err != nil {
			return err
		}
	}
	_, err := q.ExecContext(ctx, `
INSERT INTO lab_actions (lab_id, seq, action)
VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM lab_actions WHERE lab_id = ?1), ?2)`, lab, mustJSON(a))
	return err
}

// Scenario returns what the lab was given and what was done to it.
func (e *Engine) Scenario(ctx context.Context, l *Lab) (Scenario, error) {
	// The settings first: the lab's lock is never taken while a connection is
	// held (UpdateSettings holds the lock while it waits for the connection).
	sc := Scenario{Base: l.Settings(), Actions: []Action{}}
	rows, err := e.store.r.QueryContext(ctx, `SELECT action FROM lab_actions WHERE lab_id = ? ORDER BY seq`, l.ID)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario of %s: %w", l.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw string
		var a Action
		if err := rows.Scan(&raw); err != nil {
			return Scenario{}, err
		}
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			return Scenario{}, fmt.Errorf("scenario of %s: %w", l.ID, err)
		}
		if a.Kind == "base" && a.Base != nil {
			sc.Base, sc.Actions = *a.Base, []Action{}
			continue
		}
		sc.Actions = append(sc.Actions, a)
	}
	return sc, rows.Err()
}

// shareable reports whether the scenario fits in a link: a code carries at
// most MaxScenarioActions actions (DecodeScenario refuses more).
func (sc Scenario) shareable() bool { return len(sc.Actions) <= MaxScenarioActions }

// Encode packs the scenario into a URL-safe string.
func (sc Scenario) Encode() string {
	w, _ := flate.NewWriter(nil, flate.BestCompression)
	return sc.encode(w)
}

// encode packs the scenario with w, a deflate writer at best compression,
// which it resets first.
func (sc Scenario) encode(w *flate.Writer) string {
	var buf bytes.Buffer
	w.Reset(&buf)
	w.Write([]byte(mustJSON(sc)))
	w.Close()
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// ScenarioCode is sc.Encode with a deflate writer of the engine's: a new
// writer allocates about a megabyte, and every render of a lab's page
// encodes its scenario. ok is false, and nothing is encoded, when the
// scenario does not fit in a link (it could not be opened).
func (e *Engine) ScenarioCode(sc Scenario) (code string, ok bool) {
	if !sc.shareable() {
		return "", false
	}
	w, ok := e.flaters.Get().(*flate.Writer)
	if !ok {
		w, _ = flate.NewWriter(nil, flate.BestCompression)
	}
	defer e.flaters.Put(w)
	return sc.encode(w), true
}

// DecodeScenario unpacks a scenario, or says why it cannot.
func DecodeScenario(code string) (Scenario, error) {
	bad := func(why string) (Scenario, error) {
		return Scenario{}, Invalid(FieldError{Field: "scenario", Detail: why})
	}
	raw, err := base64.RawURLEncoding.DecodeString(code)
	if err != nil {
		return bad("is not a scenario code")
	}
	b, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxScenarioBytes+1))
	if err != nil || len(b) > maxScenarioBytes {
		return bad("is damaged or too large")
	}
	var sc Scenario
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return bad("is damaged")
	}
	if len(sc.Actions) > MaxScenarioActions {
		return bad(fmt.Sprintf("has more than %d actions", MaxScenarioActions))
	}
	if err := sc.Base.Validate(); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

// ScenarioLabID is the lab a scenario code rebuilds: the same code always
// names the same lab, so opening a shared link twice builds it once.
func ScenarioLabID(code string) string {
	sum := sha256.Sum256([]byte("idemlab scenario\x00" + code))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// Rebuild makes the lab id from the scenario, unless it exists already, by
// replaying its actions in order on its base settings.
func (e *Engine) Rebuild(ctx context.Context, id string, sc Scenario) (*Lab, error) {
	if l, err := e.Lab(ctx, id); err == nil {
		return l, nil
	}
	if err := sc.Base.Validate(); err != nil {
		return nil, err
	}
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO labs (id, settings, created_at) VALUES (?, ?, ?)`, id, mustJSON(sc.Base), e.stamp()); err != nil {
			return err
		}
		base := sc.Base
		return e.record(ctx, tx, id, Action{Kind: "base", Base: &base})
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild %s: %w", id, err)
	}
	l, err := e.Lab(ctx, id)
	if err != nil {
		return nil, err
	}
	for i, a := range sc.Actions {
		if err := e.replay(ctx, l, a); err != nil {
			return l, fmt.Errorf("rebuild %s: action %d: %w", id, i+1, err)
		}
	}
	return l, nil
}

func (e *Engine) replay(ctx context.Context, l *Lab, a Action) error {
	switch a.Kind {
	case "settings":
		if a.Settings == nil {
			return Invalid(FieldError{Field: "settings", Detail: "is missing"})
		}
		_, err := e.UpdateSettings(ctx, l, *a.Settings)
		return err
	case "charge":
		_, err := e.StartOperation(ctx, l, OperationRequest{OrderID: a.OrderID, Amount: a.Amount, Fate: a.Fate})
		return err
	case "retry", "race":
		id, err := e.operationID(ctx, l, a.Op)
		if err != nil {
			return err
		}
		if a.Kind == "race" {
			_, err = e.Race(ctx, l, id, a.N)
			return err
		}
		withKey := a.WithKey == nil || *a.WithKey
		_, err = e.Retry(ctx, l, id, withKey, a.Fate)
		return err
	}
	return Invalid(FieldError{Field: "kind", Detail: fmt.Sprintf("%q is not an action", a.Kind)})
}

// operationID is the id of the lab's operation number seq; 0 names the latest.
func (e *Engine) operationID(ctx context.Context, l *Lab, seq int) (string, error) {
	if seq == 0 {
		return LatestOperation, nil
	}
	var id string
	err := e.store.r.QueryRowContext(ctx, `SELECT id FROM operations WHERE lab_id = ? AND seq = ?`, l.ID, seq).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", Errorf(ENotFound, "There is no operation number %d in this lab.", seq)
	}
	return id, err
}
