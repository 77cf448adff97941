package web

import (
	"fmt"
	"strings"

	"idemlab/sim"
)

// logText is one line of the event log and who it is about.
type logText struct {
	kind string // client, network, server, lab
	text string
}

// describe says in plain words what an event means, and why.
func describe(ev sim.Event, prev *sim.Settings) []logText {
	switch ev.Kind {
	case sim.EventReset:
		return []logText{{"lab", "Reset: payments, keys and history emptied; settings kept."}}
	case sim.EventSettings:
		return settingsChanges(prev, ev.Settings)
	case sim.EventOperation:
		op := ev.Operation
		key := "no key"
		if op.Key != nil {
			key = "key " + short(*op.Key)
		} else if op.KeyStrategy != sim.KeyNone {
			key = "keys by " + string(op.KeyStrategy)
		}
		return []logText{{"client", fmt.Sprintf("New operation: charge %s %d ₽ (%s).", op.OrderID, op.Amount, key)}}
	case sim.EventAttempt:
		switch a := ev.Attempt; {
		case a == nil || a.FinishedAt == nil: // just sent: said when it ends
		case ev.Late:
			return []logText{{"network", fmt.Sprintf("Attempt %d: its answer arrived after the client had given up; the server %s.", a.N, outcomeWords(a.Outcome))}}
		default:
			return []logText{{"client", attemptText(a)}}
		}
	case sim.EventCharge:
		return []logText{{"server", chargeText(ev)}}
	}
	return nil
}

func short(k string) string {
	if len(k) > 10 {
		return k[:8] + "…"
	}
	return k
}

func keyWords(k *string) string {
	if k == nil {
		return "no key"
	}
	return "key " + short(*k)
}

func outcomeWords(o sim.Outcome) string {
	switch o {
	case sim.OutcomeCharged:
		return "charged (a new payment)"
	case sim.OutcomeDuplicate:
		return "refused a second payment for this key (duplicate)"
	case sim.OutcomeReplayed:
		return "replayed the first answer"
	case sim.OutcomeInFlight:
		return "answered 409: the first request with this key is still running"
	case sim.OutcomeMismatch:
		return "answered 422: this key came with another body"
	case sim.OutcomeRejected:
		return "rejected the request"
	case sim.OutcomeNotReached:
		return "never received it"
	case sim.OutcomeFailed:
		return "failed"
	}
	return "not answered yet"
}

// attemptText is what the client saw of one attempt, and what really happened.
func attemptText(a *sim.Attempt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Attempt %d (%s, network %s): ", a.N, keyWords(a.Key), a.Fate)
	switch {
	case a.Status != 0:
		fmt.Fprintf(&b, "the client got %d; the server %s.", a.Status, outcomeWords(a.Outcome))
	case a.Outcome == sim.OutcomeNotReached:
		b.WriteString("the request was lost on the way; the server never saw it. The client only sees an error.")
	case a.Outcome == sim.OutcomePending:
		b.WriteString("the client timed out while the server was still working.")
	default:
		fmt.Fprintf(&b, "the client saw no answer, but the server %s. From the client's side this looks just like a lost request.", outcomeWords(a.Outcome))
	}
	return b.String()
}

func chargeText(ev sim.Event) string {
	what := fmt.Sprintf("Charge %s with %s: ", ev.OrderID, keyWords(ev.Key))
	switch ev.Outcome {
	case sim.OutcomeCharged:
		if ev.Payment != nil {
			return what + fmt.Sprintf("COMMIT, payment #%d of %d ₽.", ev.Payment.ID, ev.Payment.Amount)
		}
		return what + "COMMIT."
	case sim.OutcomeDuplicate:
		return what + "the key is already in the ledger: no second payment."
	case sim.OutcomeReplayed:
		return what + "the key's stored answer is sent again, byte for byte."
	case sim.OutcomeInFlight:
		return what + "the first request with this key is still running: 409, retry later."
	case sim.OutcomeMismatch:
		return what + "the key was first used with another body: 422."
	case sim.OutcomeRejected:
		return what + "refused (replay needs an Idempotency-Key)."
	}
	return what + "failed."
}

// settingsChanges names each setting that changed.
func settingsChanges(prev, next *sim.Settings) []logText {
	if next == nil {
		return nil
	}
	if prev == nil {
		return []logText{{"lab", fmt.Sprintf("Settings: protection %s, key %s, network %s, retry %s.", next.Protection, next.KeyStrategy, next.Network, next.Retry.Mode)}}
	}
	var out []logText
	add := func(name string, a, b any) {
		if a != b {
			out = append(out, logText{"lab", fmt.Sprintf("Setting %s: %v → %v.", name, a, b)})
		}
	}
	add("protection", prev.Protection, next.Protection)
	add("key strategy", prev.KeyStrategy, next.KeyStrategy)
	add("network", prev.Network, next.Network)
	add("retry", prev.Retry.Mode, next.Retry.Mode)
	add("max attempts", prev.Retry.MaxAttempts, next.Retry.MaxAttempts)
	add("backoff base", prev.Retry.BaseMS, next.Retry.BaseMS)
	add("backoff cap", prev.Retry.CapMS, next.Retry.CapMS)
	add("jitter", prev.Retry.Jitter, next.Retry.Jitter)
	add("client timeout", prev.ClientTimeoutMS, next.ClientTimeoutMS)
	add("server work", prev.ServerDelayMS, next.ServerDelayMS)
	add("check gap", prev.CheckGapMS, next.CheckGapMS)
	add("key TTL", prev.KeyTTLS, next.KeyTTLS)
	add("lock timeout", prev.LockTimeoutMS, next.LockTimeoutMS)
	add("seed", prev.Seed, next.Seed)
	return out
}
