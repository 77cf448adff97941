package web

import (
	"idemlab/sim"
	"idemlab/views"
)

// giveBackText says what became of a set-nx key whose charge did not
// happen: given back now, owed back while Redis does not answer, or free
// once it answers again.
func giveBackText(ev sim.Event) views.Msg {
	if ev.GiveBack == sim.GaveBackLate {
		return m("log.give-back.given-later", keyWords(ev.Key))
	}
	head := m("log.charge", ev.OrderID, keyWords(ev.Key))
	if ev.GiveBack == sim.GiveBackOwed {
		return m("log.give-back.owed", head)
	}
	return m("log.give-back.given", head)
}
