package scenario

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"io"

	"idemlab/sim"
)

// maxBytes is the most a scenario's code may unpack to.
const maxBytes = 1 << 20

// Encode packs the scenario into a URL-safe string.
func Encode(sc sim.Scenario) string {
	w, _ := flate.NewWriter(nil, flate.BestCompression)
	return encode(sc, w)
}

// encode packs the scenario with w, a deflate writer at best compression,
// which it resets first.
func encode(sc sim.Scenario, w *flate.Writer) string {
	var buf bytes.Buffer
	w.Reset(&buf)
	b, _ := json.Marshal(sc) // plain structs: they always marshal
	w.Write(b)
	w.Close()
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// Decode unpacks a scenario, or says why it cannot.
func Decode(code string) (sim.Scenario, error) {
	bad := func(rule string, args ...any) (sim.Scenario, error) {
		return sim.Scenario{}, sim.Invalid(sim.Broke("scenario", rule, args...))
	}
	raw, err := base64.RawURLEncoding.DecodeString(code)
	if err != nil {
		return bad("scenario-code")
	}
	b, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxBytes+1))
	if err != nil || len(b) > maxBytes {
		return bad("scenario-damaged")
	}
	var sc sim.Scenario
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return bad("scenario-damaged")
	}
	if len(sc.Actions) > sim.MaxScenarioActions {
		return bad("scenario-long", sim.MaxScenarioActions)
	}
	if err := sc.Base.Validate(); err != nil {
		return sim.Scenario{}, err
	}
	return sc, nil
}
