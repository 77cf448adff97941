package sim

// Action is one thing done to a lab that a scenario replays and a lesson
// takes as a step.
type Action struct {
	Kind     string         `json:"k"` // base, settings, charge, retry, race, direct, clock (N: seconds), stepped (N: racers), step
	Base     *Settings      `json:"b,omitempty"`
	Settings *SettingsPatch `json:"s,omitempty"`
	OrderID  string         `json:"o,omitempty"`
	Amount   int64          `json:"a,omitempty"`
	Fate     Fate           `json:"f,omitempty"`
	Op       int            `json:"op,omitempty"` // the operation's number in the lab, from 1
	WithKey  *bool          `json:"w,omitempty"`
	N        int            `json:"n,omitempty"`
	Key      *string        `json:"key,omitempty"` // direct: the Idempotency-Key sent, if any
	Method   string         `json:"m,omitempty"`   // charge, direct: PUT or DELETE of the order ("" for POST)
	Racer    string         `json:"r,omitempty"`   // step: the racer stepped (A, B, C)
	To       string         `json:"to,omitempty"`  // step: "" its next point, "end" to its answer; "run" all, "abort"
	Storm    *StormRequest  `json:"st,omitempty"`  // storm: the storm run, to its end
}

// Scenario is a lab's settings at its start and what was done to it since.
type Scenario struct {
	Base    Settings `json:"b"`
	Actions []Action `json:"a"`
}

// MaxScenarioActions is the most actions a scenario's link carries, so
// that a URL cannot make the server work for ever.
const MaxScenarioActions = 500

// Step is one action of a fault script, as a person (or the API) does it.
type Step struct {
	Action  string // "charge" (a new purchase), "retry" (the latest operation again)
	Fate    Fate   // of the step's first attempt; "" for the lab's network setting
	WithKey bool   // retry: with the operation's key
}

// Script is a sequence of steps, run in order against one lab.
type Script struct {
	OrderID string
	Amount  int64
	Steps   []Step
	// Purchases is how many charges the steps mean to make: what a correct
	// server ends with. Fewer is a purchase wrongly refused; more, a double charge.
	Purchases int64
}

// DefaultScript is the article's case, then a legitimate second purchase:
// the answer is lost, the client retries twice, then the customer buys the
// same thing again.
func DefaultScript() Script {
	return Script{OrderID: "order-42", Amount: 1500, Purchases: 2, Steps: []Step{
		{Action: "charge", Fate: FateResponseLost},
		{Action: "retry", Fate: FateOK, WithKey: true},
		{Action: "retry", Fate: FateOK, WithKey: true},
		{Action: "charge", Fate: FateOK},
	}}
}
