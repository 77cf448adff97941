package sim

// Bounds of a storm's request.
const (
	MaxStormClients  = 2000
	MaxStormDuration = 60 // seconds of new operations
)

// StormRequest is what a retry storm is asked to be (SPEC, "The retry
// storm"): how many clients, for how long, how often each begins an
// operation, when the server is down, whether the clients send keys, and
// the network's chances.
type StormRequest struct {
	Clients   int          `json:"clients"`
	DurationS int          `json:"duration_s"`
	EveryS    float64      `json:"every_s,omitempty"` // a client begins an operation this often on average; 0 is 1
	Outage    *StormOutage `json:"outage,omitempty"`
	Key       bool         `json:"key"`
	Fates     StormFates   `json:"fates"`
}

// StormOutage is a window in which the server is down: every attempt sent
// in it fails at once, without reaching it.
type StormOutage struct {
	AtS  float64 `json:"at_s"`
	ForS float64 `json:"for_s"`
}

// StormFates are the network's chances for each attempt of a storm.
type StormFates struct {
	ResponseLost float64 `json:"response-lost"` // the server does the work, the answer is lost
}

// Validate names every field of r out of its range.
func (r StormRequest) Validate() error {
	var fs []FieldError
	if r.Clients < 1 || r.Clients > MaxStormClients {
		fs = append(fs, Broke("clients", "range", 1, MaxStormClients))
	}
	if r.DurationS < 1 || r.DurationS > MaxStormDuration {
		fs = append(fs, Broke("duration_s", "range", 1, MaxStormDuration))
	}
	if e := r.EveryS; !(e == 0 || e >= 0.1 && e <= float64(MaxStormDuration)) {
		fs = append(fs, Broke("every_s", "range-decimal", 0.1, float64(MaxStormDuration)))
	}
	if o := r.Outage; o != nil {
		if !(o.AtS >= 0 && o.AtS <= float64(MaxStormDuration)) {
			fs = append(fs, Broke("outage.at_s", "range-decimal", 0.0, float64(MaxStormDuration)))
		}
		if !(o.ForS > 0 && o.ForS <= float64(MaxStormDuration)) {
			fs = append(fs, Broke("outage.for_s", "range-decimal", 0.1, float64(MaxStormDuration)))
		}
	}
	if p := r.Fates.ResponseLost; !(p >= 0 && p <= 1) {
		fs = append(fs, Broke("fates.response-lost", "range-decimal", 0.0, 1.0))
	}
	if len(fs) > 0 {
		return Invalid(fs...)
	}
	return nil
}
