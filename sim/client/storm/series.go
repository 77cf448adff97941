package storm

import (
	"slices"
	"sync"
	"time"
)

// Step is the width of a series' bucket.
const Step = 100 * time.Millisecond

// Bucket is what happened in one Step of a storm, by when each attempt
// left its client (its answer counts where the attempt left).
type Bucket struct {
	First      int `json:"first_tries"`
	Retries    int `json:"retries"`
	Admitted   int `json:"admitted"`    // the server took it: any answer but a refusal for capacity, and none for a loss after the server
	Busy       int `json:"unavailable"` // 503: past the capacity, or another of the server's limits
	Down       int `json:"down"`        // sent while the server was down (the outage): no answer
	Successes  int `json:"successes"`   // a final 2xx
	DupStopped int `json:"duplicates_stopped"`
	Doubles    int `json:"double_charges"` // a payment for an order that had one already, by when it was made
}

// Summary is a storm's totals.
type Summary struct {
	Operations    int     `json:"operations"`
	Completed     int     `json:"completed"` // ended on a 2xx
	Attempts      int     `json:"attempts"`
	Amplification float64 `json:"amplification"` // attempts ÷ operations
	CompletionP50 int64   `json:"completion_p50_ms"`
	CompletionP99 int64   `json:"completion_p99_ms"`
	DoubleCharges int     `json:"double_charges"`
	// DrainMS is how long the backlog took to clear once the outage
	// ended: until 99 % of the operations begun by then had ended, done or
	// given up; 0 without an outage.
	DrainMS int64 `json:"drain_ms"`
}

// record is a storm's counts as they come, safe for its clients at once.
// Its series has a bucket for each Step of the storm and its drain, no
// more: its size is fixed when the storm starts.
type record struct {
	mu        sync.Mutex
	start     time.Time
	series    []Bucket
	ops, done int
	attempts  int
	took      []int64 // completed operations' times, ms; at most maxTook kept
	calm      time.Time
	backlog   []int64 // when each operation begun by the calm ended, ms after it
}

// maxTook bounds the completion times kept for the percentiles.
const maxTook = 100_000

func (r *record) at(t time.Time) *Bucket {
	i := int(t.Sub(r.start) / Step)
	return &r.series[min(max(i, 0), len(r.series)-1)]
}

// sent counts an attempt leaving at t.
func (r *record) sent(t time.Time, first bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts++
	if first {
		r.ops++
		r.at(t).First++
	} else {
		r.at(t).Retries++
	}
}

// answered counts the answer of the attempt that left at t.
func (r *record) answered(t time.Time, a answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.at(t)
	if a.admitted {
		b.Admitted++
	}
	if a.status == 503 {
		b.Busy++
	}
	if a.down {
		b.Down++
	}
	if a.status/100 == 2 {
		b.Successes++
	}
	if a.stopped {
		b.DupStopped++
	}
}

// ended counts the end of an operation that began then; ok when it ended
// on a 2xx.
func (r *record) ended(began time.Time, ok bool) {
	now := time.Now()
	took := now.Sub(began)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.calm.IsZero() && !began.After(r.calm) && len(r.backlog) < maxTook {
		r.backlog = append(r.backlog, now.Sub(r.calm).Milliseconds())
	}
	if ok {
		r.done++
		if len(r.took) < maxTook {
			r.took = append(r.took, took.Milliseconds())
		}
	}
}

// doubled counts a second payment of an order, made at t.
func (r *record) doubled(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at(t).Doubles++
}

// view is the series so far and the summary.
func (r *record) view() ([]Bucket, Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{Operations: r.ops, Completed: r.done, Attempts: r.attempts}
	if r.ops > 0 {
		s.Amplification = float64(r.attempts) / float64(r.ops)
	}
	s.CompletionP50, s.CompletionP99 = percentile(r.took, 50), percentile(r.took, 99)
	s.DrainMS = max(percentile(r.backlog, 99), 0)
	for _, b := range r.series {
		s.DoubleCharges += b.Doubles
	}
	return slices.Clone(r.series), s
}

// percentile is the p-th percentile of ms, 0 when there are none.
func percentile(ms []int64, p int) int64 {
	n := len(ms)
	if n == 0 {
		return 0
	}
	sorted := slices.Clone(ms)
	slices.Sort(sorted)
	return sorted[min(n-1, n*p/100)]
}
