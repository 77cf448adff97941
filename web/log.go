package web

import (
	"fmt"

	"idemlab/sim"
	"idemlab/views"
)

// logText is one line of the event log and who it is about.
type logText struct {
	kind string // client, network, server, lab
	msg  views.Msg
}

var m = views.M

// describe says in plain words what an event means, and why. A charge's
// line is not said here: the log keeps its event and says it when read
// (logRing.addCharge).
func describe(ev sim.Event, prev *sim.Settings) []logText {
	switch ev.Kind {
	case sim.EventReset:
		return []logText{{"lab", m("log.reset")}}
	case sim.EventSettings:
		return settingsChanges(prev, ev.Settings)
	case sim.EventOperation:
		op := ev.Operation
		key := m("log.no-key")
		if op.Key != nil {
			key = m("log.key", short(*op.Key))
		} else if op.KeyStrategy != sim.KeyNone {
			key = m("log.keys-by", string(op.KeyStrategy))
		}
		return []logText{{"client", m("log.operation", op.OrderID, views.Amount(op.Amount), key)}}
	case sim.EventAttempt:
		switch a := ev.Attempt; {
		case a == nil || a.FinishedAt == nil: // just sent: said when it ends
		case ev.Late:
			return []logText{{"network", m("log.late", a.N, outcomeWords(a.Outcome))}}
		default:
			return []logText{{"client", attemptText(a)}}
		}
	case sim.EventLesson:
		return lessonText(ev.Lesson)
	case sim.EventMessage:
		if d := ev.Delivery; d != nil {
			return []logText{{"consumer", m("log.delivery."+d.Outcome, d.N, ev.OrderID)}}
		}
	case sim.EventEmail:
		return []logText{{"mail", m("log.email", ev.Subject, ev.OrderID)}}
	case sim.EventClock:
		return []logText{{"lab", m("log.clock")}}
	case sim.EventGiveBack:
		return []logText{{"server", giveBackText(ev)}}
	}
	return nil
}

func short(k string) string {
	if len(k) > 10 {
		return k[:8] + "…"
	}
	return k
}

func keyWords(k *string) views.Msg {
	if k == nil {
		return m("log.no-key")
	}
	return m("log.key", short(*k))
}

func outcomeWords(o sim.Outcome) views.Msg {
	switch o {
	case sim.OutcomeCharged, sim.OutcomeDuplicate, sim.OutcomeReplayed, sim.OutcomeInFlight, sim.OutcomeConflict,
		sim.OutcomeMismatch, sim.OutcomeRejected, sim.OutcomeNotReached, sim.OutcomeFailed, sim.OutcomeUnknown, sim.OutcomeDropped,
		sim.OutcomeCreated, sim.OutcomeUpdated, sim.OutcomeDeleted, sim.OutcomeAbsent, sim.OutcomeUnavailable:
		return m("log.did." + string(o))
	}
	return m("log.did.pending")
}

// attemptText is what the client saw of one attempt, and what really happened.
func attemptText(a *sim.Attempt) views.Msg {
	head := m("log.attempt", a.N, keyWords(a.Key), m("log.fate."+string(a.Fate)))
	switch {
	case a.Status != 0:
		return m("log.attempt.answer", head, a.Status, outcomeWords(a.Outcome))
	case a.Outcome == sim.OutcomeNotReached:
		return m("log.attempt.lost", head)
	case a.Outcome == sim.OutcomePending:
		return m("log.attempt.timeout", head)
	}
	return m("log.attempt.unseen", head, outcomeWords(a.Outcome))
}

func chargeText(ev sim.Event) views.Msg {
	head := m("log.charge", ev.OrderID, keyWords(ev.Key))
	switch ev.Outcome {
	case sim.OutcomeCharged:
		if ev.Payment != nil {
			return m("log.charge.commit", head, ev.Payment.ID, views.Amount(ev.Payment.Amount))
		}
	case sim.OutcomeDuplicate, sim.OutcomeReplayed, sim.OutcomeInFlight, sim.OutcomeConflict, sim.OutcomeMismatch, sim.OutcomeRejected, sim.OutcomeDropped,
		sim.OutcomeUnavailable:
		return m("log.charge."+string(ev.Outcome), head)
	}
	return m("log.charge.failed", head)
}

// settingsChanges names each setting that changed.
func settingsChanges(prev, next *sim.Settings) []logText {
	if next == nil {
		return nil
	}
	if prev == nil {
		return []logText{{"lab", m("log.settings", string(next.Protection), string(next.KeyStrategy), m("log.fate."+string(next.Network)), m("log.retry."+next.Retry.Mode))}}
	}
	var out []logText
	add := func(name string, a, b any) {
		if a != b {
			out = append(out, logText{"lab", m("log.setting", m("log.setting."+name), str(a), str(b))})
		}
	}
	add("protection", prev.Protection, next.Protection)
	add("key", prev.KeyStrategy, next.KeyStrategy)
	if prev.Network != next.Network {
		out = append(out, logText{"lab", m("log.setting", m("log.setting.network"), m("log.fate."+string(prev.Network)), m("log.fate."+string(next.Network)))})
	}
	if prev.Retry.Mode != next.Retry.Mode {
		out = append(out, logText{"lab", m("log.setting", m("log.setting.retry"), m("log.retry."+prev.Retry.Mode), m("log.retry."+next.Retry.Mode))})
	}
	add("max-attempts", prev.Retry.MaxAttempts, next.Retry.MaxAttempts)
	add("base", prev.Retry.BaseMS, next.Retry.BaseMS)
	add("cap", prev.Retry.CapMS, next.Retry.CapMS)
	add("jitter", prev.Retry.Jitter, next.Retry.Jitter)
	if prev.Retry.Budget != next.Retry.Budget {
		out = append(out, logText{"lab", m("log.setting", m("log.setting.budget"), m("opt.budget."+string(prev.Retry.Budget)), m("opt.budget."+string(next.Retry.Budget)))})
	}
	add("max-tokens", prev.Retry.MaxTokens, next.Retry.MaxTokens)
	add("token-ratio", prev.Retry.TokenRatio, next.Retry.TokenRatio)
	add("budget-percent", prev.Retry.BudgetPercent, next.Retry.BudgetPercent)
	add("respect-retry-after", prev.Retry.RespectRetryAfter, next.Retry.RespectRetryAfter)
	add("capacity", prev.CapacityRPS, next.CapacityRPS)
	add("timeout", prev.ClientTimeoutMS, next.ClientTimeoutMS)
	add("delay", prev.ServerDelayMS, next.ServerDelayMS)
	add("gap", prev.CheckGapMS, next.CheckGapMS)
	if prev.Isolation != next.Isolation {
		out = append(out, logText{"lab", m("log.setting", m("log.setting.isolation"), m("opt.isolation."+string(prev.Isolation)), m("opt.isolation."+string(next.Isolation)))})
	}
	add("ttl", prev.KeyTTLS, next.KeyTTLS)
	add("lock", prev.LockTimeoutMS, next.LockTimeoutMS)
	add("seed", prev.Seed, next.Seed)
	if prev.ServerFault != next.ServerFault {
		out = append(out, logText{"lab", m("log.setting", m("log.setting.fault"), m("opt.fault."+string(prev.ServerFault)), m("opt.fault."+string(next.ServerFault)))})
	}
	return out
}

func str(v any) string { return fmt.Sprint(v) }

// lessonText tells the class which lesson the lab opened or set up; the
// steps themselves are told by the client's and the server's lines.
func lessonText(st *sim.LessonState) []logText {
	switch {
	case st == nil || st.Next > 0:
		return nil
	case st.N == 0:
		return []logText{{"lab", m("log.lesson.closed")}}
	case st.Ready:
		return []logText{{"lab", m("log.lesson.setup", st.N, views.LessonTitle(st.N))}}
	}
	return []logText{{"lab", m("log.lesson.open", st.N, views.LessonTitle(st.N))}}
}
