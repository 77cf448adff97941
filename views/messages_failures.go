package views

// failureMessages are the words of the failures told truthfully: a part the
// lab depends on that does not answer (the database, Redis, the broker), a
// key given back after its charge failed, a clock at its limit.
var failureMessages = map[string]message{
	"rule.clock-limit": {"cannot move the clock further: it is at its limit, %d years ahead (reset the lab to start it over)",
		"часы дальше не двигаются: они на пределе, на %d лет впереди (сбросьте лабораторию, чтобы начать заново)"},
}
