package sim

import "time"

// EventKind names what happened in a lab.
type EventKind string

// The kinds of events a lab reports.
const (
	EventCharge    EventKind = "charge"    // the server handled a charge request (Outcome says how)
	EventOperation EventKind = "operation" // the client started an operation
	EventAttempt   EventKind = "attempt"   // an attempt started, ended, or its late answer arrived
	EventSettings  EventKind = "settings"  // the lab's settings changed
	EventReset     EventKind = "reset"     // the lab was emptied
	EventRetry     EventKind = "retry"     // an automatic retry is waiting for its next try
	EventLesson    EventKind = "lesson"    // the lab's lesson was chosen, set up or took a step
	EventGone      EventKind = "gone"      // the lab was removed (deleted, or idle too long)
	EventMessage   EventKind = "message"   // the consumer had a delivery of a message
	EventEmail     EventKind = "email"     // the mailbox received an email
	EventOrder     EventKind = "order"     // an order was set or removed
	EventClock     EventKind = "clock"     // the lab's clock was moved forward
	EventGiveBack  EventKind = "give-back" // under set-nx, a key whose charge did not happen was given back, or is owed back (GiveBack says which)
	EventClass     EventKind = "class"     // the lab's class started, ended, was asked a question, voted, or saw the reveal
	EventStepped   EventKind = "stepped"   // the lab's stepped race started, took a step, ended or was aborted
	EventStorm     EventKind = "storm"     // the lab's storm moved on (a few times a second while it runs), or ended

	// EventStartOver tells a subscriber that events were lost: it fell
	// behind and its buffer overflowed, or another process's notices went
	// unheard. Whatever it keeps of any lab is stale: read it all afresh.
	EventStartOver EventKind = "start-over"
)

// RetryWait is the progress of an automatic retry loop: attempt Next of Of
// will be sent after Delay.
type RetryWait struct {
	Next  int
	Of    int
	Delay time.Duration
	Busy  bool // the server had no room for it: the loop ends here
	Spent bool // the client's retry budget allowed it not: the loop ends here
}

// Event is one thing that happened in a lab, for live views and logs.
type Event struct {
	Lab       string
	Kind      EventKind
	At        time.Time
	Outcome   Outcome        `json:",omitzero"` // EventCharge
	Payment   *Payment       `json:",omitzero"` // EventCharge, when a payment was written or replayed
	Key       *string        `json:",omitzero"` // EventCharge
	OrderID   string         `json:",omitzero"` // EventCharge
	Queued    bool           `json:",omitzero"` // EventCharge: the new payment's message waits in the outbox (notify queue)
	Operation *Operation     `json:",omitzero"` // EventOperation, EventAttempt
	Attempt   *Attempt       `json:",omitzero"` // EventAttempt
	Late      bool           `json:",omitzero"` // EventAttempt: an answer that came after the client gave up
	Settings  *Settings      `json:",omitzero"` // EventSettings
	Retry     *RetryWait     `json:",omitzero"` // EventRetry
	Lesson    *LessonState   `json:",omitzero"` // EventLesson: where the lab is in its lesson now
	Delivery  *DeliveryEvent `json:",omitzero"` // EventMessage
	Subject   string         `json:",omitzero"` // EventEmail: the email's subject
	GiveBack  GiveBack       `json:",omitzero"` // EventGiveBack
	// Remote marks an event another process on the database reported:
	// what this process keeps of the lab may be behind it.
	Remote bool `json:"-"`
}

// GiveBack is what became of a set-nx key whose charge did not happen
// (EventGiveBack): the server deletes the key it took, so that a retry
// charges; only a crash leaves it behind.
type GiveBack string

// What became of the key.
const (
	GaveBack     GiveBack = "given"       // deleted now: the charge failed after its SET NX
	GiveBackOwed GiveBack = "owed"        // Redis did not answer: deleted as soon as it does, before any retry with the key
	GaveBackLate GiveBack = "given-later" // Redis answered again: a key owed back is free
)

// DeliveryEvent is one delivery of a message to the consumer, for the log.
type DeliveryEvent struct {
	N       int    // over every copy of the message
	Outcome string // DeliverySent, DeliverySkipped, DeliveryCrashed
}
