package sim

import "net/http"

// Lesson is one of the article's lessons as the lab plays it: the settings
// it starts from, the actions a learner takes, one by one, and what the
// article says comes of them. The outcome is never computed from the lesson:
// the actions go through the lab's client, network and ledger like anyone's,
// and CheckLesson reads the ledger to compare.
type Lesson struct {
	N        int
	Postgres bool     // the lesson needs the lab on PostgreSQL
	Settings Settings // from the defaults; the lab's seed is kept
	Steps    []Action // "retry" and "race" act on the latest operation
	Expect   Expect
}

// Expect is what the article says a lesson ends with.
type Expect struct {
	Charges int64
	Total   int64
	Orders  []OrderCharges // how many times each order is charged
	Answers []Answer       // what the last attempt of an order's latest operation got
	Emails  []OrderEmails  // how many "order placed" emails each order gets
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
	Outcome Outcome
}

func lessonSettings(f func(s *Settings)) Settings {
	s := DefaultSettings()
	f(&s)
	return s
}

func charge(order string, fate Fate) Action {
	return Action{Kind: "charge", OrderID: order, Amount: 1500, Fate: fate}
}

func retry(fate Fate) Action {
	yes := true
	return Action{Kind: "retry", WithKey: &yes, Fate: fate}
}

func switchTo(p SettingsPatch) Action { return Action{Kind: "settings", Settings: &p} }

// Lessons are the article's lessons (SPEC.md, "Lessons" and "Past the
// ledger"), in order.
func Lessons() []Lesson {
	unique, replay := ProtectUnique, ProtectReplay
	hash, uuid := KeyHash, KeyUUID
	byMessage, yes, no := DedupMessageID, true, false
	crash, noFault := FaultCrashAfterGuard, FaultNone
	serializable := IsolationSerializable
	return []Lesson{{
		// The article's first listing: no key, no guard; the answer is lost.
		N: 1,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectNone, KeyNone
		}),
		Steps:  []Action{charge("order-42", FateResponseLost), retry(FateOK)},
		Expect: Expect{Charges: 2, Total: 3000, Orders: []OrderCharges{{"order-42", 2}}},
	}, {
		// The second listing: a key the retry reuses, UNIQUE on it.
		N: 2,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectUnique, KeyUUID
		}),
		Steps: []Action{charge("order-42", FateResponseLost), retry(FateOK)},
		Expect: Expect{Charges: 1, Total: 1500, Orders: []OrderCharges{{"order-42", 1}},
			Answers: []Answer{{"order-42", OutcomeDuplicate}}},
	}, {
		// SELECT, then INSERT: two retries at once both find nothing. The
		// first request is lost on its way, so there is nothing to find.
		N: 3,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy, s.CheckGapMS = ProtectCheckThenInsert, KeyUUID, 300
		}),
		Steps: []Action{
			charge("order-42", FateRequestLost), {Kind: "race", N: 2},
			switchTo(SettingsPatch{Protection: &unique}),
			charge("order-43", FateRequestLost), {Kind: "race", N: 2},
		},
		Expect: Expect{Charges: 3, Total: 4500, Orders: []OrderCharges{{"order-42", 2}, {"order-43", 1}}},
	}, {
		// A new UUID for every request: the guard sees a new operation each time.
		N: 4,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy, s.Network = ProtectUnique, KeyUUIDPerRequest, FateResponseLost
		}),
		Steps:  []Action{charge("order-42", FateResponseLost), retry(FateResponseLost), retry(FateOK)},
		Expect: Expect{Charges: 3, Total: 4500, Orders: []OrderCharges{{"order-42", 3}}},
	}, {
		// A second, legitimate purchase of the same goods, under three key sources.
		N: 5,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectUnique, KeyNatural
		}),
		Steps: []Action{
			charge("order-42", FateOK), charge("order-42", FateOK),
			switchTo(SettingsPatch{KeyStrategy: &hash}),
			charge("order-43", FateOK), charge("order-43", FateOK),
			switchTo(SettingsPatch{KeyStrategy: &uuid}),
			charge("order-44", FateOK), charge("order-44", FateOK),
		},
		Expect: Expect{Charges: 4, Total: 6000,
			Orders:  []OrderCharges{{"order-42", 1}, {"order-43", 1}, {"order-44", 2}},
			Answers: []Answer{{"order-42", OutcomeDuplicate}, {"order-43", OutcomeDuplicate}, {"order-44", OutcomeCharged}}},
	}, {
		// "Already done" is safe; the first answer again is what the client wanted.
		N: 6,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectUnique, KeyUUID
		}),
		Steps: []Action{
			charge("order-42", FateResponseLost), retry(FateOK),
			switchTo(SettingsPatch{Protection: &replay}),
			charge("order-43", FateResponseLost), retry(FateOK),
		},
		Expect: Expect{Charges: 2, Total: 3000,
			Orders:  []OrderCharges{{"order-42", 1}, {"order-43", 1}},
			Answers: []Answer{{"order-42", OutcomeDuplicate}, {"order-43", OutcomeReplayed}}},
	}, {
		// At least once: the consumer sends the email and dies before its
		// ack; the broker delivers the message again. Then the consumer
		// remembers the messages it has done.
		N: 7,
		Settings: lessonSettings(func(s *Settings) {
			s.Notify, s.ConsumerDedup, s.Delivery, s.AckWaitMS = NotifyQueue, DedupNone, DeliveryCrashBeforeAck, 300
		}),
		Steps: []Action{
			charge("order-42", FateOK),
			switchTo(SettingsPatch{ConsumerDedup: &byMessage}),
			charge("order-43", FateOK),
		},
		Expect: Expect{Charges: 2, Total: 3000,
			Orders: []OrderCharges{{"order-42", 1}, {"order-43", 1}},
			Emails: []OrderEmails{{"order-42", 2}, {"order-43", 1}}},
	}, {
		// The producer publishes twice (its own retry after a lost publish
		// ack). The broker's duplicate window drops the copy by its
		// Nats-Msg-Id; or the consumer recognises it.
		N: 8,
		Settings: lessonSettings(func(s *Settings) {
			s.Notify, s.ConsumerDedup, s.Delivery, s.AckWaitMS = NotifyQueue, DedupNone, DeliveryDuplicatePublish, 300
		}),
		Steps: []Action{
			charge("order-42", FateOK),
			switchTo(SettingsPatch{PublishDedup: &yes}),
			charge("order-43", FateOK),
			switchTo(SettingsPatch{PublishDedup: &no, ConsumerDedup: &byMessage}),
			charge("order-44", FateOK),
		},
		Expect: Expect{Charges: 3, Total: 4500,
			Orders: []OrderCharges{{"order-42", 1}, {"order-43", 1}, {"order-44", 1}},
			Emails: []OrderEmails{{"order-42", 2}, {"order-43", 1}, {"order-44", 1}}},
	}, {
		// The methods' contract: PUT and DELETE are idempotent, POST is not.
		// The same lost answer and retry: PUT sets the order twice to one
		// state; DELETE removes it, then answers 404; POST charges twice.
		N:        9,
		Settings: DefaultSettings(),
		Steps: []Action{
			withMethod(charge("order-42", FateResponseLost), http.MethodPut), retry(FateOK),
			withMethod(charge("order-42", FateResponseLost), http.MethodDelete), retry(FateOK),
			charge("order-43", FateResponseLost), retry(FateOK),
		},
		Expect: Expect{Charges: 2, Total: 3000,
			Orders:  []OrderCharges{{"order-42", 0}, {"order-43", 2}},
			Answers: []Answer{{"order-42", OutcomeAbsent}}},
	}, {
		// The key lives in Redis: SET NX PX takes it atomically, as UNIQUE
		// does, and the retry is a duplicate.
		N: 10,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectSetNX, KeyUUID
		}),
		Steps: []Action{charge("order-42", FateResponseLost), retry(FateOK)},
		Expect: Expect{Charges: 1, Total: 1500, Orders: []OrderCharges{{"order-42", 1}},
			Answers: []Answer{{"order-42", OutcomeDuplicate}}},
	}, {
		// The key's TTL runs out before the retry comes: the retry is new.
		N: 11,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy, s.KeyTTLS = ProtectSetNX, KeyUUID, 60
		}),
		Steps: []Action{charge("order-42", FateResponseLost), {Kind: "clock", N: 120}, retry(FateOK)},
		Expect: Expect{Charges: 2, Total: 3000, Orders: []OrderCharges{{"order-42", 2}},
			Answers: []Answer{{"order-42", OutcomeCharged}}},
	}, {
		// The guard in one store, the charge in another: the server takes
		// the key and dies before the payment commits. The key stays, so the
		// retry is told "duplicate" and nobody paid. Under replay the guard
		// and the payment share the database: the claim waits out its lock
		// (the clock moves past it), and the retry charges once.
		N: 12,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy, s.ServerFault = ProtectSetNX, KeyUUID, FaultCrashAfterGuard
		}),
		Steps: []Action{
			charge("order-42", FateOK), switchTo(SettingsPatch{ServerFault: &noFault}), retry(FateOK),
			switchTo(SettingsPatch{Protection: &replay, ServerFault: &crash}),
			charge("order-43", FateOK), switchTo(SettingsPatch{ServerFault: &noFault}), retry(FateOK),
			{Kind: "clock", N: 11}, retry(FateOK),
		},
		Expect: Expect{Charges: 1, Total: 1500,
			Orders:  []OrderCharges{{"order-42", 0}, {"order-43", 1}},
			Answers: []Answer{{"order-42", OutcomeDuplicate}, {"order-43", OutcomeCharged}}},
	}, {
		// Lesson 3's race in one transaction on PostgreSQL: under READ
		// COMMITTED both racers' SELECTs find nothing and both charge; under
		// SERIALIZABLE the database sees that the two cannot have run one
		// after the other and fails the second with 40001: a 409, and its
		// retry finds the first's payment.
		N:        13,
		Postgres: true,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy, s.CheckGapMS, s.Isolation = ProtectCheckThenInsert, KeyUUID, 300, IsolationReadCommitted
		}),
		Steps: []Action{
			charge("order-42", FateRequestLost), {Kind: "race", N: 2},
			switchTo(SettingsPatch{Isolation: &serializable}),
			charge("order-43", FateRequestLost), {Kind: "race", N: 2}, retry(FateOK),
		},
		Expect: Expect{Charges: 3, Total: 4500,
			Orders:  []OrderCharges{{"order-42", 2}, {"order-43", 1}},
			Answers: []Answer{{"order-43", OutcomeDuplicate}}},
	}}
}

func withMethod(a Action, method string) Action {
	a.Method = method
	return a
}
