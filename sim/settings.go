package sim

// Protection is how the server guards a charge against a repeated request.
type Protection string

// The protections, from none to the full replay of the first answer.
const (
	ProtectNone            Protection = "none"
	ProtectCheckThenInsert Protection = "check-then-insert"
	ProtectUnique          Protection = "unique"
	ProtectOnConflict      Protection = "on-conflict"
	ProtectReplay          Protection = "replay"
	ProtectSetNX           Protection = "set-nx" // SET idem:{lab}:{key} NX PX in Redis, then the INSERT
)

// Protections lists every protection in teaching order.
var Protections = []Protection{ProtectNone, ProtectCheckThenInsert, ProtectUnique, ProtectOnConflict, ProtectReplay, ProtectSetNX}

// KeyStrategy is where the simulated client takes its idempotency key from.
type KeyStrategy string

// The key strategies.
const (
	KeyNone           KeyStrategy = "none"
	KeyUUID           KeyStrategy = "uuid"             // once per operation, reused by every retry
	KeyUUIDPerRequest KeyStrategy = "uuid-per-request" // the anti-pattern: new for every HTTP request
	KeyNatural        KeyStrategy = "natural"          // the order id
	KeyHash           KeyStrategy = "hash"             // SHA-256 of the canonical request body
)

// KeyStrategies lists every key strategy.
var KeyStrategies = []KeyStrategy{KeyNone, KeyUUID, KeyUUIDPerRequest, KeyNatural, KeyHash}

// Fate is what the simulated network does to one attempt.
type Fate string

// The network fates. FateRandom is not a fate but a setting: each attempt
// then draws its fate from the lab's seeded randomness.
const (
	FateOK           Fate = "ok"
	FateRequestLost  Fate = "request-lost"
	FateResponseLost Fate = "response-lost"
	FateSlow         Fate = "slow"
	FateDuplicate    Fate = "duplicate"
	FateRandom       Fate = "random"
)

// Fates lists the fates an attempt can meet.
var Fates = []Fate{FateOK, FateRequestLost, FateResponseLost, FateSlow, FateDuplicate}

// Jitter is the randomisation of the backoff delay, as in the AWS
// Architecture Blog's "Exponential Backoff and Jitter".
type Jitter string

// The jitter kinds.
const (
	JitterNone         Jitter = "none"
	JitterFull         Jitter = "full"
	JitterEqual        Jitter = "equal"
	JitterDecorrelated Jitter = "decorrelated"
)

// Jitters lists every jitter kind.
var Jitters = []Jitter{JitterNone, JitterFull, JitterEqual, JitterDecorrelated}

// Notify is what the server does, after a new charge commits, about the
// "your order is placed" email.
type Notify string

// The notify modes.
const (
	NotifyOff    Notify = "off"    // no email
	NotifyDirect Notify = "direct" // the charge handler sends it itself
	NotifyQueue  Notify = "queue"  // it publishes payment.created; the consumer sends it
)

// Notifies lists every notify mode.
var Notifies = []Notify{NotifyOff, NotifyDirect, NotifyQueue}

// MessageFate is the fate of the next messages on their way through the
// broker.
type MessageFate string

// The delivery fates.
const (
	DeliveryOK               MessageFate = "ok"                // delivered and acknowledged
	DeliveryCrashBeforeAck   MessageFate = "crash-before-ack"  // the consumer works, then dies before its ack
	DeliveryDuplicatePublish MessageFate = "duplicate-publish" // the producer publishes the message twice
)

// MessageFates lists every delivery fate.
var MessageFates = []MessageFate{DeliveryOK, DeliveryCrashBeforeAck, DeliveryDuplicatePublish}

// ConsumerDedup is how the consumer recognises work it has already done.
type ConsumerDedup string

// The consumer's ways of deduplicating.
const (
	DedupNone      ConsumerDedup = "none"       // not at all
	DedupMessageID ConsumerDedup = "message-id" // a processed-messages row, UNIQUE (lab, message id)
	DedupNatural   ConsumerDedup = "natural"    // one "order placed" email per order
)

// ConsumerDedups lists every way of deduplicating.
var ConsumerDedups = []ConsumerDedup{DedupNone, DedupMessageID, DedupNatural}

// ServerFault is what happens to the server in the middle of a charge.
type ServerFault string

// The server faults.
const (
	FaultNone            ServerFault = "none"
	FaultCrashAfterGuard ServerFault = "crash-after-guard" // the guard is taken, then the server dies before the payment commits
)

// ServerFaults lists every server fault.
var ServerFaults = []ServerFault{FaultNone, FaultCrashAfterGuard}

// Isolation is the level of check-then-insert's transaction, its SELECT
// and its INSERT in one, on PostgreSQL.
type Isolation string

// The isolation levels a lab may ask for.
const (
	IsolationReadCommitted Isolation = "read-committed" // two racers both find nothing and both charge
	IsolationSerializable  Isolation = "serializable"   // the database fails one of them (40001)
)

// Isolations lists every isolation level.
var Isolations = []Isolation{IsolationReadCommitted, IsolationSerializable}

// Retry modes.
const (
	RetryManual = "manual"
	RetryAuto   = "auto"
)

// Budget is what bounds a client's retries beside its attempts: none, a
// token bucket of its answers (gRPC's retry throttling), or a share of its
// recent first tries (Envoy's and Finagle's retry budgets); sim/budget.
type Budget string

// The retry budgets.
const (
	BudgetNone        Budget = "none"
	BudgetTokenBucket Budget = "token-bucket"
	BudgetRatio       Budget = "ratio"
)

// Budgets lists every retry budget.
var Budgets = []Budget{BudgetNone, BudgetTokenBucket, BudgetRatio}

// RetryPolicy is how the simulated client retries an attempt that got no
// usable answer.
type RetryPolicy struct {
	Mode        string `json:"mode"`         // manual or auto
	MaxAttempts int    `json:"max_attempts"` // attempts in all, the first included
	BaseMS      int    `json:"base_ms"`
	CapMS       int    `json:"cap_ms"`
	Jitter      Jitter `json:"jitter"`

	Budget        Budget  `json:"budget"`
	MaxTokens     int     `json:"max_tokens"`     // token-bucket: the bucket's size
	TokenRatio    float64 `json:"token_ratio"`    // token-bucket: what an answer that needs no retry gives back
	BudgetPercent int     `json:"budget_percent"` // ratio: retries at most this share of the first tries
	// RespectRetryAfter has a retry wait at least what the server's
	// Retry-After asked (up to cap_ms); false: the backoff alone.
	RespectRetryAfter bool `json:"respect_retry_after"`
}

// Settings is a lab's configuration. Every field takes effect at once.
type Settings struct {
	Protection      Protection  `json:"protection"`
	KeyStrategy     KeyStrategy `json:"key_strategy"`
	Network         Fate        `json:"network"` // fate of every new attempt until changed
	Retry           RetryPolicy `json:"retry"`
	CapacityRPS     int         `json:"capacity_rps"` // charges the server admits a second; 0: any number
	ClientTimeoutMS int         `json:"client_timeout_ms"`
	ServerDelayMS   int         `json:"server_delay_ms"` // work inside the charge, before the commit
	CheckGapMS      int         `json:"check_gap_ms"`    // pause between SELECT and INSERT
	Isolation       Isolation   `json:"isolation"`       // of check-then-insert's transaction (PostgreSQL)
	KeyTTLS         int         `json:"key_ttl_s"`
	LockTimeoutMS   int         `json:"lock_timeout_ms"`
	Seed            int64       `json:"seed"`
	ServerFault     ServerFault `json:"server_fault"`

	// Past the ledger: the email, the broker, the consumer.
	Notify        Notify        `json:"notify"`
	Delivery      MessageFate   `json:"delivery"`
	ConsumerDedup ConsumerDedup `json:"consumer_dedup"`
	PublishDedup  bool          `json:"publish_dedup"`
	AckWaitMS     int           `json:"ack_wait_ms"`
	Language      string        `json:"language"` // of the lab's emails: ru or en
}

// DefaultSettings are those of a new lab: the article's first listing, no
// protection and no key, so the first lost answer shows the double charge.
func DefaultSettings() Settings {
	return Settings{
		Protection:  ProtectNone,
		KeyStrategy: KeyNone,
		Network:     FateOK,
		Retry: RetryPolicy{Mode: RetryManual, MaxAttempts: 4, BaseMS: 200, CapMS: 2000, Jitter: JitterFull,
			Budget: BudgetNone, MaxTokens: 10, TokenRatio: 0.1, BudgetPercent: 20, RespectRetryAfter: true},
		ClientTimeoutMS: 1000,
		ServerDelayMS:   0,
		CheckGapMS:      100,
		Isolation:       IsolationReadCommitted,
		KeyTTLS:         24 * 60 * 60,
		LockTimeoutMS:   10000,
		Seed:            42,
		ServerFault:     FaultNone,
		Notify:          NotifyOff,
		Delivery:        DeliveryOK,
		ConsumerDedup:   DedupNone,
		AckWaitMS:       1000,
		Language:        "ru",
	}
}

// Bounds of the numeric settings.
const (
	MaxSeed = 1<<53 - 1 // exact in a JavaScript number
)

// PostgresOnly is the rule a setting or a lesson breaks that needs the lab
// on PostgreSQL.
const PostgresOnly = "postgres-only"
