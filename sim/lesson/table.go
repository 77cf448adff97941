package lesson

import (
	"slices"
	"strings"

	"idemlab/sim"
)

// Lesson is one of the article's lessons as the lab plays it: the settings
// it starts from, the actions a learner takes, one by one, and what the
// article says comes of them. The outcome is never computed from the lesson:
// the actions go through the lab's client, network and ledger like anyone's,
// and CheckLesson reads the ledger to compare.
type Lesson struct {
	N        int
	Postgres bool         // the lesson needs the lab on PostgreSQL
	Settings sim.Settings // from the defaults; the lab's seed is kept
	Steps    []sim.Action // "retry" and "race" act on the latest operation
	Expect   Expect
}

// Expect is what the article says a lesson ends with.
type Expect struct {
	Charges int64
	Total   int64
	Orders  []OrderCharges    // how many times each order is charged
	Answers []Answer          // what the last attempt of an order's latest operation got
	Emails  []sim.OrderEmails // how many "order placed" emails each order gets
	// Storms is what the lesson's storms show, by their own counts; a
	// lesson with storms is not held to the ledger's totals (Charges,
	// Total): those are its storms'.
	Storms []StormExpect
}

// OrderCharges is how many payments an order has.
type OrderCharges struct {
	OrderID string
	Charges int64
}

// Answer is what the server did with the last attempt of an order's latest
// operation.
type Answer struct {
	OrderID string
	Outcome sim.Outcome
}

func lessonSettings(f func(s *sim.Settings)) sim.Settings {
	s := sim.DefaultSettings()
	f(&s)
	return s
}

func charge(order string, fate sim.Fate) sim.Action {
	return sim.Action{Kind: "charge", OrderID: order, Amount: 1500, Fate: fate}
}

func retry(fate sim.Fate) sim.Action {
	yes := true
	return sim.Action{Kind: "retry", WithKey: &yes, Fate: fate}
}

func switchTo(p sim.SettingsPatch) sim.Action { return sim.Action{Kind: "settings", Settings: &p} }

// table is the article's lessons (SPEC.md, "Lessons" and "Past the
// ledger"), in order: a value, read by All and Number.
var table = []Lesson{{
	// The article's first listing: no key, no guard; the answer is lost.
	N: 1,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy = sim.ProtectNone, sim.KeyNone
	}),
	Steps:  []sim.Action{charge("order-42", sim.FateResponseLost), retry(sim.FateOK)},
	Expect: Expect{Charges: 2, Total: 3000, Orders: []OrderCharges{{"order-42", 2}}},
}, {
	// The second listing: a key the retry reuses, UNIQUE on it.
	N: 2,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy = sim.ProtectUnique, sim.KeyUUID
	}),
	Steps: []sim.Action{charge("order-42", sim.FateResponseLost), retry(sim.FateOK)},
	Expect: Expect{Charges: 1, Total: 1500, Orders: []OrderCharges{{"order-42", 1}},
		Answers: []Answer{{"order-42", sim.OutcomeDuplicate}}},
}, {
	// SELECT, then INSERT: two retries at once both find nothing. The
	// first request is lost on its way, so there is nothing to find. A
	// second between the two statements keeps the race there to see on a
	// busy server (300 ms was not always enough under load).
	N: 3,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy, s.CheckGapMS = sim.ProtectCheckThenInsert, sim.KeyUUID, 1000
		s.ClientTimeoutMS = 5000 // the racers' answers come after the gap
	}),
	Steps: []sim.Action{
		charge("order-42", sim.FateRequestLost), {Kind: "race", N: 2},
		switchTo(sim.SettingsPatch{Protection: ptr(sim.ProtectUnique)}),
		charge("order-43", sim.FateRequestLost), {Kind: "race", N: 2},
	},
	Expect: Expect{Charges: 3, Total: 4500, Orders: []OrderCharges{{"order-42", 2}, {"order-43", 1}}},
}, {
	// A new UUID for every request: the guard sees a new operation each time.
	N: 4,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy, s.Network = sim.ProtectUnique, sim.KeyUUIDPerRequest, sim.FateResponseLost
	}),
	Steps:  []sim.Action{charge("order-42", sim.FateResponseLost), retry(sim.FateResponseLost), retry(sim.FateOK)},
	Expect: Expect{Charges: 3, Total: 4500, Orders: []OrderCharges{{"order-42", 3}}},
}, {
	// A second, legitimate purchase of the same goods, under three key sources.
	N: 5,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy = sim.ProtectUnique, sim.KeyNatural
	}),
	Steps: []sim.Action{
		charge("order-42", sim.FateOK), charge("order-42", sim.FateOK),
		switchTo(sim.SettingsPatch{KeyStrategy: ptr(sim.KeyHash)}),
		charge("order-43", sim.FateOK), charge("order-43", sim.FateOK),
		switchTo(sim.SettingsPatch{KeyStrategy: ptr(sim.KeyUUID)}),
		charge("order-44", sim.FateOK), charge("order-44", sim.FateOK),
	},
	Expect: Expect{Charges: 4, Total: 6000,
		Orders:  []OrderCharges{{"order-42", 1}, {"order-43", 1}, {"order-44", 2}},
		Answers: []Answer{{"order-42", sim.OutcomeDuplicate}, {"order-43", sim.OutcomeDuplicate}, {"order-44", sim.OutcomeCharged}}},
}, {
	// "Already done" is safe; the first answer again is what the client wanted.
	N: 6,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy = sim.ProtectUnique, sim.KeyUUID
	}),
	Steps: []sim.Action{
		charge("order-42", sim.FateResponseLost), retry(sim.FateOK),
		switchTo(sim.SettingsPatch{Protection: ptr(sim.ProtectReplay)}),
		charge("order-43", sim.FateResponseLost), retry(sim.FateOK),
	},
	Expect: Expect{Charges: 2, Total: 3000,
		Orders:  []OrderCharges{{"order-42", 1}, {"order-43", 1}},
		Answers: []Answer{{"order-42", sim.OutcomeDuplicate}, {"order-43", sim.OutcomeReplayed}}},
}, {
	// At least once: the consumer sends the email and dies before its
	// ack; the broker delivers the message again. Then the consumer
	// remembers the messages it has done.
	N: 7,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Notify, s.ConsumerDedup, s.Delivery, s.AckWaitMS = sim.NotifyQueue, sim.DedupNone, sim.DeliveryCrashBeforeAck, 300
	}),
	Steps: []sim.Action{
		charge("order-42", sim.FateOK),
		switchTo(sim.SettingsPatch{ConsumerDedup: ptr(sim.DedupMessageID)}),
		charge("order-43", sim.FateOK),
	},
	Expect: Expect{Charges: 2, Total: 3000,
		Orders: []OrderCharges{{"order-42", 1}, {"order-43", 1}},
		Emails: []sim.OrderEmails{{OrderID: "order-42", Emails: 2}, {OrderID: "order-43", Emails: 1}}},
}, {
	// The producer publishes twice (its own retry after a lost publish
	// ack). The broker's duplicate window drops the copy by its
	// Nats-Msg-Id; or the consumer recognises it.
	N: 8,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Notify, s.ConsumerDedup, s.Delivery, s.AckWaitMS = sim.NotifyQueue, sim.DedupNone, sim.DeliveryDuplicatePublish, 300
	}),
	Steps: []sim.Action{
		charge("order-42", sim.FateOK),
		switchTo(sim.SettingsPatch{PublishDedup: ptr(true)}),
		charge("order-43", sim.FateOK),
		switchTo(sim.SettingsPatch{PublishDedup: ptr(false), ConsumerDedup: ptr(sim.DedupMessageID)}),
		charge("order-44", sim.FateOK),
	},
	Expect: Expect{Charges: 3, Total: 4500,
		Orders: []OrderCharges{{"order-42", 1}, {"order-43", 1}, {"order-44", 1}},
		Emails: []sim.OrderEmails{{OrderID: "order-42", Emails: 2}, {OrderID: "order-43", Emails: 1}, {OrderID: "order-44", Emails: 1}}},
}, {
	// The methods' contract: PUT and DELETE are idempotent, POST is not.
	// The same lost answer and retry: PUT sets the order twice to one
	// state; DELETE removes it, then answers 404; POST charges twice.
	N:        9,
	Settings: sim.DefaultSettings(),
	Steps: []sim.Action{
		withMethod(charge("order-42", sim.FateResponseLost), sim.MethodPut), retry(sim.FateOK),
		withMethod(charge("order-42", sim.FateResponseLost), sim.MethodDelete), retry(sim.FateOK),
		charge("order-43", sim.FateResponseLost), retry(sim.FateOK),
	},
	Expect: Expect{Charges: 2, Total: 3000,
		Orders:  []OrderCharges{{"order-42", 0}, {"order-43", 2}},
		Answers: []Answer{{"order-42", sim.OutcomeAbsent}}},
}, {
	// The key lives in Redis: SET NX PX takes it atomically, as UNIQUE
	// does, and the retry is a duplicate.
	N: 10,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy = sim.ProtectSetNX, sim.KeyUUID
	}),
	Steps: []sim.Action{charge("order-42", sim.FateResponseLost), retry(sim.FateOK)},
	Expect: Expect{Charges: 1, Total: 1500, Orders: []OrderCharges{{"order-42", 1}},
		Answers: []Answer{{"order-42", sim.OutcomeDuplicate}}},
}, {
	// The key's TTL runs out before the retry comes: the retry is new.
	N: 11,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy, s.KeyTTLS = sim.ProtectSetNX, sim.KeyUUID, 60
	}),
	Steps: []sim.Action{charge("order-42", sim.FateResponseLost), {Kind: "clock", N: 120}, retry(sim.FateOK)},
	Expect: Expect{Charges: 2, Total: 3000, Orders: []OrderCharges{{"order-42", 2}},
		Answers: []Answer{{"order-42", sim.OutcomeCharged}}},
}, {
	// The guard in one store, the charge in another: the server takes
	// the key and dies before the payment commits. The key stays, so the
	// retry is told "duplicate" and nobody paid. Under replay the guard
	// and the payment share the database: the claim waits out its lock
	// (the clock moves past it), and the retry charges once. The lock
	// holds two minutes, longer than a teacher talks between two steps:
	// the retry before the clock moves must still find it held.
	N: 12,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy, s.ServerFault = sim.ProtectSetNX, sim.KeyUUID, sim.FaultCrashAfterGuard
		s.LockTimeoutMS = 120_000
	}),
	Steps: []sim.Action{
		charge("order-42", sim.FateOK), switchTo(sim.SettingsPatch{ServerFault: ptr(sim.FaultNone)}), retry(sim.FateOK),
		switchTo(sim.SettingsPatch{Protection: ptr(sim.ProtectReplay), ServerFault: ptr(sim.FaultCrashAfterGuard)}),
		charge("order-43", sim.FateOK), switchTo(sim.SettingsPatch{ServerFault: ptr(sim.FaultNone)}), retry(sim.FateOK),
		{Kind: "clock", N: 121}, retry(sim.FateOK),
	},
	Expect: Expect{Charges: 1, Total: 1500,
		Orders:  []OrderCharges{{"order-42", 0}, {"order-43", 1}},
		Answers: []Answer{{"order-42", sim.OutcomeDuplicate}, {"order-43", sim.OutcomeCharged}}},
}, {
	// Lesson 3's race in one transaction on PostgreSQL: under READ
	// COMMITTED both racers' SELECTs find nothing and both charge; under
	// SERIALIZABLE the database sees that the two cannot have run one
	// after the other and fails the second with 40001: a 409, and its
	// retry finds the first's payment.
	N:        13,
	Postgres: true,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy, s.CheckGapMS, s.Isolation = sim.ProtectCheckThenInsert, sim.KeyUUID, 1000, sim.IsolationReadCommitted
		s.ClientTimeoutMS = 5000
	}),
	Steps: []sim.Action{
		charge("order-42", sim.FateRequestLost), {Kind: "race", N: 2},
		switchTo(sim.SettingsPatch{Isolation: ptr(sim.IsolationSerializable)}),
		charge("order-43", sim.FateRequestLost), {Kind: "race", N: 2}, retry(sim.FateOK),
	},
	Expect: Expect{Charges: 3, Total: 4500,
		Orders:  []OrderCharges{{"order-42", 2}, {"order-43", 1}},
		Answers: []Answer{{"order-43", sim.OutcomeDuplicate}}},
}, {
	// The race under a microscope: a person steps two retries of one
	// payment, statement by statement, and the database decides. The
	// article's interleaving (both SELECTs, then both INSERTs) charges
	// twice; under UNIQUE the same interleaving charges once, B's INSERT
	// breaking the constraint; and A run to its end before B starts
	// charges once, B's SELECT finding A's payment.
	N: 14,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy = sim.ProtectCheckThenInsert, sim.KeyUUID
	}),
	Steps: slices.Concat(
		steppedRace("order-42", "A", "B", "A*", "B*"),
		[]sim.Action{switchTo(sim.SettingsPatch{Protection: ptr(sim.ProtectUnique)})},
		steppedRace("order-43", "A", "B", "A*", "B*"),
		[]sim.Action{switchTo(sim.SettingsPatch{Protection: ptr(sim.ProtectCheckThenInsert)})},
		steppedRace("order-44", "A*", "B*"),
	),
	Expect: Expect{Charges: 4, Total: 6000,
		Orders:  []OrderCharges{{"order-42", 2}, {"order-43", 1}, {"order-44", 1}},
		Answers: []Answer{{"order-43", sim.OutcomeDuplicate}, {"order-44", sim.OutcomeDuplicate}}},
}, stormLesson}

// steppedRace is a stepped race of two racers on the order, then its
// steps: "A" takes racer A to its next point, "A*" to its answer.
func steppedRace(order string, steps ...string) []sim.Action {
	acts := []sim.Action{{Kind: "stepped", OrderID: order, Amount: 1500, N: 2}}
	for _, st := range steps {
		a := sim.Action{Kind: "step", Racer: strings.TrimSuffix(st, "*")}
		if strings.HasSuffix(st, "*") {
			a.To = "end"
		}
		acts = append(acts, a)
	}
	return acts
}

func withMethod(a sim.Action, method string) sim.Action {
	a.Method = method
	return a
}

func ptr[T any](v T) *T { return &v }
