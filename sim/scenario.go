package sim

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Action is one thing done to a lab that a scenario replays.
type Action struct {
	Kind     string         `json:"k"` // base, settings, charge, retry, race, direct, clock (N: seconds)
	Base     *Settings      `json:"b,omitempty"`
	Settings *SettingsPatch `json:"s,omitempty"`
	OrderID  string         `json:"o,omitempty"`
	Amount   int64          `json:"a,omitempty"`
	Fate     Fate           `json:"f,omitempty"`
	Op       int            `json:"op,omitempty"` // the operation's number in the lab, from 1
	WithKey  *bool          `json:"w,omitempty"`
	N        int            `json:"n,omitempty"`
	Key      *string        `json:"key,omitempty"` // direct: the Idempotency-Key sent, if any
	Method   string         `json:"m,omitempty"`   // charge: PUT or DELETE of the order ("" for POST)
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

// record appends an action to the lab's list in tx; "base" starts the list
// anew. Past MaxScenarioActions since the base, actions are counted but no
// longer kept: no link could carry them.
func (e *Engine) record(ctx context.Context, tx *sql.Tx, lab string, a Action) error {
	base := a.Kind == "base"
	var seq, baseSeq int64
	err := in(ctx, tx, e.store.q.nextAction).QueryRowContext(ctx, base, lab).Scan(&seq, &baseSeq)
	if err != nil {
		return err
	}
	if base {
		if _, err := tx.ExecContext(ctx, `DELETE FROM lab_actions WHERE lab_id = ?`, lab); err != nil {
			return err
		}
	}
	if seq-baseSeq > MaxScenarioActions {
		return nil
	}
	_, err = in(ctx, tx, e.store.q.insertAction).ExecContext(ctx, lab, seq, mustJSON(a))
	return err
}

// scenarioCache is a lab's scenario code as of one action.
type scenarioCache struct {
	seq     int64 // labs.action_seq the code was made at
	actions int
	code    string
	ok      bool
}

// ScenarioCode returns the lab's scenario as a code for a link, and how many
// actions it holds. ok is false when it holds more than a link carries (the
// link could not be opened). The code is made once per change of the lab:
// a page rendered again costs one read.
func (e *Engine) ScenarioCode(ctx context.Context, l *Lab) (code string, actions int, ok bool, err error) {
	var seq, baseSeq int64
	err = e.store.r.QueryRowContext(ctx, `SELECT action_seq, base_seq FROM lab_counts WHERE lab_id = ?`, l.ID).Scan(&seq, &baseSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, noLab(l.ID)
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("scenario of %s: %w", l.ID, err)
	}
	if c := l.scenario.Load(); c != nil && c.seq == seq {
		return c.code, c.actions, c.ok, nil
	}
	c := &scenarioCache{seq: seq, actions: int(seq - baseSeq)}
	if c.actions <= MaxScenarioActions {
		sc, err := e.Scenario(ctx, l)
		if err != nil {
			return "", 0, false, err
		}
		c.code, c.ok = e.encode(sc), true
		c.actions = len(sc.Actions)
	}
	l.scenario.Store(c)
	return c.code, c.actions, c.ok, nil
}

// Scenario returns what the lab was given and what was done to it since.
func (e *Engine) Scenario(ctx context.Context, l *Lab) (Scenario, error) {
	sc := Scenario{Base: l.Settings(), Actions: []Action{}}
	rows, err := e.store.r.QueryContext(ctx, `
SELECT action FROM lab_actions WHERE lab_id = ?1 AND seq >= (SELECT base_seq FROM lab_counts WHERE lab_id = ?1) ORDER BY seq`, l.ID)
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

// encode is sc.Encode with a deflate writer of the engine's: a new writer
// allocates about a megabyte.
func (e *Engine) encode(sc Scenario) string {
	w, ok := e.flaters.Get().(*flate.Writer)
	if !ok {
		w, _ = flate.NewWriter(nil, flate.BestCompression)
	}
	defer e.flaters.Put(w)
	return sc.encode(w)
}

// DecodeScenario unpacks a scenario, or says why it cannot.
func DecodeScenario(code string) (Scenario, error) {
	bad := func(rule string, args ...any) (Scenario, error) {
		return Scenario{}, Invalid(Broke("scenario", rule, args...))
	}
	raw, err := base64.RawURLEncoding.DecodeString(code)
	if err != nil {
		return bad("scenario-code")
	}
	b, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxScenarioBytes+1))
	if err != nil || len(b) > maxScenarioBytes {
		return bad("scenario-damaged")
	}
	var sc Scenario
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return bad("scenario-damaged")
	}
	if len(sc.Actions) > MaxScenarioActions {
		return bad("scenario-long", MaxScenarioActions)
	}
	if err := sc.Base.Validate(); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

// OpenScenario builds a new private lab of the opener's own from the
// scenario, replaying its actions in order on its base settings, and
// returns it only once it is whole. A rebuild that is refused half-way (a
// bad action), or whose opener hangs up, leaves no lab behind: the lab is
// of kind "building", unseen by the lab's housekeeping and removed at the
// next start if the server dies meanwhile, until it is done.
func (e *Engine) OpenScenario(ctx context.Context, sc Scenario) (*Lab, error) {
	l, err := e.createLab(ctx, kindBuilding, sc.Base)
	if err != nil {
		return nil, err
	}
	built := func() error {
		for i, a := range sc.Actions {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := e.replay(ctx, l, a); err != nil {
				return fmt.Errorf("action %d: %w", i+1, err)
			}
		}
		_, err := e.store.exec(ctx, `UPDATE labs SET kind = ? WHERE id = ? AND kind = ?`, kindPrivate, l.ID, kindBuilding)
		return err
	}()
	if built != nil {
		if err := e.remove(context.WithoutCancel(ctx), l.ID); err != nil && ErrorCode(err) != ENotFound {
			e.log.Warn("remove a scenario's half-built lab", "lab", l.ID, "err", err)
		}
		return nil, built
	}
	return l, nil
}

func (e *Engine) replay(ctx context.Context, l *Lab, a Action) error {
	switch a.Kind {
	case "settings":
		if a.Settings == nil {
			return Invalid(Broke("settings", "required"))
		}
		_, err := e.UpdateSettings(ctx, l, *a.Settings)
		return err
	case "charge":
		_, err := e.StartOperation(ctx, l, OperationRequest{OrderID: a.OrderID, Amount: a.Amount, Fate: a.Fate, Method: a.Method})
		return err
	case "clock":
		_, err := e.AdvanceClock(ctx, l, int64(a.N))
		return err
	case "direct":
		_, err := e.ChargeRequest(ctx, l, Charge{OrderID: a.OrderID, Amount: a.Amount, Key: a.Key, Direct: true})
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
	return Invalid(Broke("kind", "action", clip(a.Kind)))
}

// operationID is the id of the lab's operation number seq; 0 names the latest.
func (e *Engine) operationID(ctx context.Context, l *Lab, seq int) (string, error) {
	if seq == 0 {
		return LatestOperation, nil
	}
	var id string
	err := e.store.r.QueryRowContext(ctx, `SELECT id FROM operations WHERE lab_id = ? AND seq = ?`, l.ID, seq).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", Invalid(Broke("op", "no-operation", seq))
	}
	return id, err
}
