package stepped

import (
	"context"
	"strconv"
	"strings"
	"time"

	"idemlab/sim"
)

// settle waits until no racer runs: each stands at a point, has its
// answer, or (PostgreSQL) waits for a lock, which it names; at most
// settleWait.
func (rc *Race) settle(ctx context.Context) {
	deadline := time.NewTimer(settleWait)
	defer deadline.Stop()
	pg := rc.rs.Store.Postgres()
	for {
		rc.mu.Lock()
		var running []*racer
		for i, v := range rc.v.Racers {
			if v.State == sim.RacerRunning || v.State == sim.RacerWaiting {
				running = append(running, rc.racers[i])
			}
		}
		changed := rc.changed
		rc.mu.Unlock()
		if len(running) == 0 {
			return
		}
		var poll <-chan time.Time
		if pg {
			if rc.waiting(ctx, running) {
				return
			}
			poll = time.After(lockPoll)
		}
		select {
		case <-changed:
		case <-poll:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// waiting reports whether every running racer waits for a lock, and marks
// each that does as waiting, naming whose lock (logged once per wait).
func (rc *Race) waiting(ctx context.Context, running []*racer) bool {
	holders := make([]string, len(running))
	for i, r := range running {
		pid := r.pid.Load()
		if pid == 0 {
			return false // no transaction yet: it runs
		}
		var pids string
		err := rc.rs.Store.QueryRow(ctx, `SELECT array_to_string(pg_blocking_pids(?), ',')`, pid).Scan(&pids)
		if err != nil || pids == "" {
			return false
		}
		holders[i] = rc.holder(pids)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, r := range running {
		v := &rc.v.Racers[r.i]
		if v.State == sim.RacerReady || v.State == sim.RacerDone {
			return false // it moved on meanwhile
		}
		if v.State != sim.RacerWaiting {
			v.State, v.Waits = sim.RacerWaiting, holders[i]
			rc.v.Log = append(rc.v.Log, sim.StepLog{Racer: v.Name, Point: v.Next,
				StepResult: sim.StepResult{Code: sim.StepWaits, Racer: holders[i]}})
			rc.change()
		}
	}
	return true
}

// holder names the racer among the backends pids ("1,2") that holds the
// lock; "" when none of them is a racer (another transaction).
func (rc *Race) holder(pids string) string {
	for _, p := range strings.Split(pids, ",") {
		n, err := strconv.Atoi(p)
		if err != nil {
			continue
		}
		for i, r := range rc.racers {
			if r.pid.Load() == int32(n) {
				return rc.v.Racers[i].Name // names never change
			}
		}
	}
	return ""
}
