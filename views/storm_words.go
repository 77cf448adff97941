package views

import (
	"context"
	"strconv"
	"strings"
)

// StormNotice is where the storm panel's refusals are told.
const StormNotice = "storm-notice"

// stormCaption says what a storm was: its clients and what they ran under.
func stormCaption(ctx context.Context, r StormRun) string {
	l := LangOf(ctx)
	parts := []string{
		l.T("storm.cap.clients", r.Clients, r.DurationS),
		l.T("storm.cap.jitter", l.T("opt.jitter."+r.Jitter)),
	}
	switch r.Budget {
	case "ratio":
		parts = append(parts, l.T("storm.cap.ratio", r.BudgetPercent))
	case "token-bucket":
		parts = append(parts, l.T("storm.cap.bucket"))
	default:
		parts = append(parts, l.T("storm.cap.no-budget"))
	}
	if r.Capacity > 0 {
		parts = append(parts, l.T("storm.cap.capacity", r.Capacity))
	}
	if r.Key {
		parts = append(parts, l.T("storm.cap.keys"))
	} else {
		parts = append(parts, l.T("storm.cap.no-keys"))
	}
	if r.OutageFor > 0 {
		parts = append(parts, l.T("storm.cap.outage", l.Decimal(r.OutageAt), l.Decimal(r.OutageAt+r.OutageFor)))
	}
	if r.Lost > 0 {
		parts = append(parts, l.T("storm.cap.lost", int(r.Lost*100+0.5)))
	}
	return strings.Join(parts, " · ")
}

// stormSums says a storm's totals.
func stormSums(ctx context.Context, r StormRun) string {
	l := LangOf(ctx)
	if r.OutageFor == 0 {
		return l.T("storm.sums.calm", count(l, r.Operations, "storm.ops"), count(l, r.Attempts, "storm.attempts"),
			l.Decimal(r.Amplification), r.Peak, count(l, r.DoubleCharges, "storm.doubles"))
	}
	return l.T("storm.sums", count(l, r.Operations, "storm.ops"), count(l, r.Attempts, "storm.attempts"),
		l.Decimal(r.Amplification), r.Peak, l.Decimal(float64(r.DrainMS)/1000), count(l, r.DoubleCharges, "storm.doubles"))
}

func count(l Lang, n int, key string) string {
	return l.Number(int64(n)) + " " + l.Plural(int64(n), key)
}

// Decimal is a number with at most two decimals, as the language writes
// it: "1.05", «1,05».
func (l Lang) Decimal(f float64) string {
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if l == Russian {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}
