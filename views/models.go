package views

// LabPage is everything the lab's page shows.
type LabPage struct {
	LabID    string
	IsDemo   bool
	ShareURL string // the private lab's address, ready to share
	Settings SettingsView
	Ledger   LedgerView
	Diagram  Diagram
	Log      []LogLine
	Latest   string // id of the latest operation; "" when none
	Progress Msg    // the automatic retry loop's progress, if one runs
	Notice   Msg    // a message for the person who acted (a refused form)
	Large    bool   // large type, for the back of the room
	Checks   []Check
	Scenario string // the address that rebuilds this lab; "" when it has too many actions
	Actions  int    // how many actions the scenario holds
	// MaxActions is how many actions a scenario link carries at most.
	MaxActions int
	Lesson     LessonView
	Class      ClassView
	Stepped    SteppedView
	Storm      StormView
	Mailbox    MailboxView
	Queue      []MessageView
	Orders     []OrderRow
	Keys       KeysView
	Postgres   bool // the lab runs on PostgreSQL: its isolation can be chosen
	// ReadAt is when the reads of this page began, in µs of the house's
	// clock: a page never swaps in regions older than those it shows.
	ReadAt int64
	// Steers says that the browser this page is for started the class that
	// runs: its page shows the class's controls. A live update, the same
	// for every browser, never carries it (SteersMark).
	Steers bool
}

// KeysView is where the lab's idempotency keys live and how long each has
// left, and how far the lab's clock runs ahead.
type KeysView struct {
	Rows   []KeyRow
	Clock  int64 // seconds the lab's clock runs ahead
	KVDown bool  // the key-value store did not answer
}

// KeyRow is one idempotency key.
type KeyRow struct {
	Key    string
	Store  string // sqlite, redis
	State  string // in-flight, done, expired, unique, set
	TTLMS  int64  // left, in ms; -1: for ever
	LockMS int64  // in flight: until the lock times out
}

// OrderRow is one order of the lab's resource.
type OrderRow struct {
	OrderID   string
	Amount    int64
	UpdatedAt string
}

// MailboxView is what the lab's mailbox received: the newest emails, how
// many in all, and the orders that got more than one.
type MailboxView struct {
	Emails  []EmailRow
	Count   int64
	Doubled []OrderEmails // at most 10
	More    int64         // orders doubled beyond those
}

// EmailRow is one email in the mailbox.
type EmailRow struct {
	N          int64
	Subject    string
	OrderID    string
	MessageID  string // the broker message behind it; "" when the handler sent it
	ReceivedAt string
	Repeat     int // how many emails of the same order arrived before it
}

// OrderEmails is an order and how many emails it got.
type OrderEmails struct {
	OrderID string
	Emails  int64
}

// MessageView is one message of the queue and its deliveries.
type MessageView struct {
	ID         string
	OrderID    string
	Published  int
	Fate       string
	Deliveries []DeliveryView
}

// DeliveryView is one delivery of a message to the consumer.
type DeliveryView struct {
	N       int
	Outcome string // sent, skipped, crashed
}

// Base is the lab's address, under which its forms post: /labs/{id}.
func (p LabPage) Base() string { return "/labs/" + p.LabID }

// SettingsView is a lab's settings as the controls show them.
type SettingsView struct {
	Protection, KeyStrategy, Network string
	AutoRetry                        bool
	MaxAttempts, BaseMS, CapMS       int
	Jitter                           string
	Budget                           string  // the retry budget: none, token-bucket, ratio
	MaxTokens, BudgetPercent         int     // token-bucket's size, ratio's share
	TokenRatio                       float64 // what token-bucket gives back an answer that needs no retry
	RespectRetryAfter                bool
	CapacityRPS                      int // the server's charges a second, 0: any
	ClientTimeoutMS                  int
	ServerDelayMS, CheckGapMS        int
	Isolation                        string // of check-then-insert's transaction (PostgreSQL)
	KeyTTLS, LockTimeoutMS           int
	ServerFault                      string
	Notify, Delivery, ConsumerDedup  string
	PublishDedup                     bool
	AckWaitMS                        int
	Language                         string // of the lab's emails
}

// LedgerView is the payments table and what is said about it.
type LedgerView struct {
	Payments []PaymentRow // newest first, at most 100
	Count    int64        // of the whole ledger
	Total    int64
	Doubles  []DoubleCharge // the first orders charged more than once, at most MaxDoubles
	// Doubled is how many orders were charged more than once in all;
	// Over, how many of them more often than they were bought.
	Doubled, Over int64
	// Lost names the first orders told "already done" with no payment
	// behind them; LostCount counts them all.
	Lost      []string
	LostCount int
}

// LostMore is how many lost charges the alert does not name.
func (l LedgerView) LostMore() int64 { return int64(l.LostCount - len(l.Lost)) }

// MaxDoubles is how many doubly charged orders the alert names.
const MaxDoubles = 10

// More is how many doubly charged orders the alert does not name.
func (l LedgerView) More() int64 { return l.Doubled - int64(len(l.Doubles)) }

// PaymentRow is one row of the payments table.
type PaymentRow struct {
	ID        int64
	OrderID   string
	Amount    int64
	Key       string // "" when the charge carried none
	CreatedAt string // clock time, for people
	Repeat    int    // 0 for an order's first charge; n for its (n+1)th
}

// DoubleCharge is an order charged more than once.
type DoubleCharge struct {
	OrderID   string
	Times     int
	Extra     int64
	Purchases int // purchases the client made of the order; 0 if unknown
}

// Covered reports whether each charge of the order was a purchase of its
// own: charged more than once, but never twice for one purchase.
func (d DoubleCharge) Covered() bool { return d.Purchases >= d.Times }

// Overcharged reports whether any order was charged more often than bought.
func (l LedgerView) Overcharged() bool { return l.Over > 0 }

// LogLine is one line of the event log.
type LogLine struct {
	At   string // clock time
	Kind string // client, network, server, lab
	Msg  Msg    // what happened, said in each page's language
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
}

// Self is the page's own address.
func (p LabPage) Self() string { return PagePath(p.LabID) }

// PagePath is the address of a lab's page: / for the shared demo lab.
func PagePath(lab string) string {
	if lab == "demo" {
		return "/"
	}
	return "/labs/" + lab
}
