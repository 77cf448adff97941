package class

import (
	"slices"
	"strconv"

	"idemlab/sim"
	"idemlab/sim/lesson"
)

// Measure is what decides a question's right choice: a number or an answer
// read from the lab after the step (lesson.Seen), never a stored letter.
type Measure string

// The measures.
const (
	MeasureOrder  Measure = "order"  // the step's order's payments after it
	MeasureAdded  Measure = "added"  // the payments the step added to the lab
	MeasureAnswer Measure = "answer" // what the server did with the order's last attempt
	MeasureEmails Measure = "emails" // the "order placed" emails of the step's order

	MeasureAmplification Measure = "amplification" // the storm's attempts ÷ operations
	MeasurePeak          Measure = "peak"          // the storm's retry peak after the outage, against the storm's before it
	MeasureDoubles       Measure = "doubles"       // the orders the storm charged twice
)

// The choices of a question, by their codes: counts ("0" … "3+"), a
// distractor that the mechanism never makes true ("depends": the outcome
// of these steps does not depend on chance), or answers (sim.Outcome).
const (
	ChoiceMany    = "3+"
	ChoiceDepends = "depends"
)

var (
	counts       = []string{"0", "1", "2", ChoiceMany}
	retryCounts  = []string{"1", "2", ChoiceDepends}
	lostCounts   = []string{"0", "1"}
	raceCounts   = []string{"1", "2", ChoiceMany}
	emailCounts  = []string{"0", "1", "2"}
	dupAnswers   = []string{string(sim.OutcomeCharged), string(sim.OutcomeDuplicate)}
	replyAnswers = []string{string(sim.OutcomeCharged), string(sim.OutcomeDuplicate), string(sim.OutcomeReplayed)}
	lockAnswers  = []string{string(sim.OutcomeCharged), string(sim.OutcomeDuplicate), string(sim.OutcomeInFlight)}
	raceAnswers  = []string{string(sim.OutcomeCharged), string(sim.OutcomeDuplicate), string(sim.OutcomeConflict)}
	delAnswers   = []string{string(sim.OutcomeDeleted), string(sim.OutcomeAbsent)}
	ampChoices   = []string{"x1", "x1-2", "x2+"}
	peakChoices  = []string{"higher", "same", "lower"}
	dblChoices   = []string{"none", "some"}
)

// Ask is how a step is asked about: what decides the right choice, and the
// choices offered.
type Ask struct {
	Measure Measure
	Choices []string
}

// asks are the lessons' questions that differ from their steps' usual one
// (usual): where the answer, not the count, is the lesson. By lesson, then
// step (from 0).
var asks = map[int]map[int]Ask{
	1:  {1: {MeasureOrder, retryCounts}},
	2:  {1: {MeasureOrder, retryCounts}},
	3:  {0: {MeasureOrder, lostCounts}, 3: {MeasureOrder, lostCounts}},
	5:  {1: {MeasureAnswer, dupAnswers}, 3: {MeasureAnswer, dupAnswers}, 5: {MeasureAnswer, dupAnswers}},
	6:  {1: {MeasureAnswer, replyAnswers}, 4: {MeasureAnswer, replyAnswers}},
	9:  {3: {MeasureAnswer, delAnswers}},
	10: {1: {MeasureOrder, retryCounts}},
	12: {0: {MeasureOrder, lostCounts}, 2: {MeasureAnswer, dupAnswers}, 4: {MeasureOrder, lostCounts}, 6: {MeasureAnswer, lockAnswers}},
	13: {0: {MeasureOrder, lostCounts}, 5: {MeasureAnswer, raceAnswers}},
	15: {0: {MeasureAmplification, ampChoices}, 2: {MeasurePeak, peakChoices}, 4: {MeasureAmplification, ampChoices},
		6: {MeasureAmplification, ampChoices}, 8: {MeasureDoubles, dblChoices}, 9: {MeasureDoubles, dblChoices}},
}

// StepAsk is the question of a lesson's step, and the order it is about;
// ok is false for a step without an outcome to predict (a switch of the
// settings, a move of the clock).
func StepAsk(ls lesson.Lesson, step int) (a Ask, order string, ok bool) {
	if step < 0 || step >= len(ls.Steps) {
		return Ask{}, "", false
	}
	act := ls.Steps[step]
	switch {
	case act.Kind == "charge", act.Kind == "retry", act.Kind == "race":
	case act.Kind == "step" && act.To == "end" && act.Racer == "B": // the stepped race's end
	case act.Kind == "storm":
	default:
		return Ask{}, "", false
	}
	order = orderOf(ls.Steps, step)
	if a, ok := asks[ls.N][step]; ok {
		return a, order, true
	}
	switch {
	case len(ls.Expect.Emails) > 0:
		return Ask{MeasureEmails, emailCounts}, order, true
	case act.Kind == "race":
		return Ask{MeasureOrder, raceCounts}, order, true
	}
	return Ask{MeasureOrder, counts}, order, true
}

// GenericAsk is the question outside lessons: how many payments will this
// action add?
func GenericAsk() Ask { return Ask{MeasureAdded, counts} }

// orderOf is the order a step acts on: a charge's own, a retry's or a
// race's the latest charge's before it.
func orderOf(steps []sim.Action, i int) string {
	for ; i >= 0; i-- {
		if steps[i].Kind == "charge" || steps[i].Kind == "stepped" {
			return steps[i].OrderID
		}
	}
	return ""
}

// Right is the choice that what the step did makes right: the measure
// read before (asked) and after the step (seen); "" when none of the
// choices says what happened.
func (a Ask) Right(asked, seen lesson.Seen) string {
	var got string
	switch a.Measure {
	case MeasureOrder:
		got = countChoice(seen.Order)
	case MeasureAdded:
		got = countChoice(seen.Payments - asked.Payments)
	case MeasureEmails:
		got = countChoice(seen.Emails)
	case MeasureAnswer:
		got = string(seen.Answer)
	case MeasureAmplification, MeasurePeak, MeasureDoubles:
		got = stormChoice(a.Measure, seen.Storm)
	}
	if got == "" || !slices.Contains(a.Choices, got) {
		return ""
	}
	return got
}

// countChoice is the choice a count makes true.
func countChoice(n int64) string {
	if n >= 3 {
		return ChoiceMany
	}
	return strconv.FormatInt(n, 10)
}

// stormChoice is the choice a storm's facts make true: its amplification
// about ×1 (at most 1.2), up to ×2, or more; its retry peak higher, about
// the same or lower than the storm's before it (by half as much again, or
// less than two thirds); whether it charged any order twice.
func stormChoice(m Measure, f *lesson.StormFacts) string {
	if f == nil {
		return ""
	}
	switch m {
	case MeasureAmplification:
		switch {
		case f.Amplification <= 1.2:
			return "x1"
		case f.Amplification <= 2:
			return "x1-2"
		}
		return "x2+"
	case MeasurePeak:
		switch {
		case f.Storms < 2:
			return ""
		case 2*f.Peak >= 3*f.PrevPeak:
			return "higher"
		case 3*f.Peak < 2*f.PrevPeak:
			return "lower"
		}
		return "same"
	case MeasureDoubles:
		if f.Doubles > 0 {
			return "some"
		}
		return "none"
	}
	return ""
}
