package storm

import (
	"fmt"
	"time"

	"idemlab/sim"
)

// Under is what of the lab's settings a storm ran under: its clients keep
// the retry policy and timeout they started with; the capacity is the
// server's, as it was at the start.
type Under struct {
	Protection  sim.Protection  `json:"protection"`
	CapacityRPS int             `json:"capacity_rps"`
	Retry       sim.RetryPolicy `json:"retry"`
	TimeoutMS   int             `json:"client_timeout_ms"`
}

// PeakRetries is the most retries sent in a tenth of a second after the
// outage (in the whole storm without one).
func (v View) PeakRetries() int {
	from := 0
	if o := v.Request.Outage; o != nil {
		from = int(seconds(o.AtS+o.ForS) / Step)
	}
	peak := 0
	for _, b := range v.Series[min(from, len(v.Series)):] {
		peak = max(peak, b.Retries)
	}
	return peak
}

// View is a storm as its API shows it.
type View struct {
	ID      string   `json:"id"`
	State   string   `json:"state"` // running, done
	Request Request  `json:"request"`
	Under   Under    `json:"under"`
	StepMS  int64    `json:"step_ms"`
	Series  []Bucket `json:"series"`
	Summary Summary  `json:"summary"`
}

// View is the storm now.
func (st *Storm) View() View {
	series, sum := st.rec.view()
	state := "done"
	if st.running() {
		state = "running"
		series = series[:min(len(series), int(time.Since(st.rec.start)/Step)+1)]
	}
	return View{ID: st.ID, State: state, Request: st.Req, Under: st.Under, StepMS: Step.Milliseconds(), Series: series, Summary: sum}
}

func (st *Storm) running() bool {
	select {
	case <-st.done:
		return false
	default:
		return true
	}
}

// ordersOf is the prefix of a storm's orders: s-{id}-{client}-{n}, no
// word of any language.
func ordersOf(id string) string { return fmt.Sprintf("s-%s-", id) }
