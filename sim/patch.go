package sim

import (
	"slices"
)

// SettingsPatch holds the fields a PATCH may change; nil means "leave as is".
type SettingsPatch struct {
	Protection      *Protection    `json:"protection"`
	KeyStrategy     *KeyStrategy   `json:"key_strategy"`
	Network         *Fate          `json:"network"`
	Retry           *RetryPatch    `json:"retry"`
	CapacityRPS     *int           `json:"capacity_rps"`
	ClientTimeoutMS *int           `json:"client_timeout_ms"`
	ServerDelayMS   *int           `json:"server_delay_ms"`
	CheckGapMS      *int           `json:"check_gap_ms"`
	Isolation       *Isolation     `json:"isolation"`
	KeyTTLS         *int           `json:"key_ttl_s"`
	LockTimeoutMS   *int           `json:"lock_timeout_ms"`
	Seed            *int64         `json:"seed"`
	ServerFault     *ServerFault   `json:"server_fault"`
	Notify          *Notify        `json:"notify"`
	Delivery        *MessageFate   `json:"delivery"`
	ConsumerDedup   *ConsumerDedup `json:"consumer_dedup"`
	PublishDedup    *bool          `json:"publish_dedup"`
	AckWaitMS       *int           `json:"ack_wait_ms"`
	Language        *string        `json:"language"`
}

// RetryPatch holds the retry fields a PATCH may change.
type RetryPatch struct {
	Mode        *string `json:"mode"`
	MaxAttempts *int    `json:"max_attempts"`
	BaseMS      *int    `json:"base_ms"`
	CapMS       *int    `json:"cap_ms"`
	Jitter      *Jitter `json:"jitter"`

	Budget            *Budget  `json:"budget"`
	MaxTokens         *int     `json:"max_tokens"`
	TokenRatio        *float64 `json:"token_ratio"`
	BudgetPercent     *int     `json:"budget_percent"`
	RespectRetryAfter *bool    `json:"respect_retry_after"`
}

// Apply returns s with the patch merged in, or an EInvalid error naming every
// bad field; s itself is never changed.
func (s Settings) Apply(p SettingsPatch) (Settings, error) {
	set(&s.Protection, p.Protection)
	set(&s.KeyStrategy, p.KeyStrategy)
	set(&s.Network, p.Network)
	if p.Retry != nil {
		set(&s.Retry.Mode, p.Retry.Mode)
		set(&s.Retry.MaxAttempts, p.Retry.MaxAttempts)
		set(&s.Retry.BaseMS, p.Retry.BaseMS)
		set(&s.Retry.CapMS, p.Retry.CapMS)
		set(&s.Retry.Jitter, p.Retry.Jitter)
		set(&s.Retry.Budget, p.Retry.Budget)
		set(&s.Retry.MaxTokens, p.Retry.MaxTokens)
		set(&s.Retry.TokenRatio, p.Retry.TokenRatio)
		set(&s.Retry.BudgetPercent, p.Retry.BudgetPercent)
		set(&s.Retry.RespectRetryAfter, p.Retry.RespectRetryAfter)
	}
	set(&s.CapacityRPS, p.CapacityRPS)
	set(&s.ClientTimeoutMS, p.ClientTimeoutMS)
	set(&s.ServerDelayMS, p.ServerDelayMS)
	set(&s.CheckGapMS, p.CheckGapMS)
	set(&s.Isolation, p.Isolation)
	set(&s.KeyTTLS, p.KeyTTLS)
	set(&s.LockTimeoutMS, p.LockTimeoutMS)
	set(&s.Seed, p.Seed)
	set(&s.ServerFault, p.ServerFault)
	set(&s.Notify, p.Notify)
	set(&s.Delivery, p.Delivery)
	set(&s.ConsumerDedup, p.ConsumerDedup)
	set(&s.PublishDedup, p.PublishDedup)
	set(&s.AckWaitMS, p.AckWaitMS)
	set(&s.Language, p.Language)
	if err := s.Validate(); err != nil {
		return Settings{}, err
	}
	return s, nil
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// Validate reports every field of s that is out of its range.
func (s Settings) Validate() error {
	var fs []FieldError
	oneOf := func(field string, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			fs = append(fs, Broke(field, "one-of", quoted(allowed)))
		}
	}
	between := func(field string, v int64) {
		if lo, hi, _ := SettingRange(field); v < lo || v > hi {
			fs = append(fs, Broke(field, "range", lo, hi))
		}
	}
	oneOf("protection", string(s.Protection), Names(Protections))
	oneOf("key_strategy", string(s.KeyStrategy), Names(KeyStrategies))
	oneOf("network", string(s.Network), fateChoices())
	oneOf("retry.mode", s.Retry.Mode, []string{RetryManual, RetryAuto})
	between("retry.max_attempts", int64(s.Retry.MaxAttempts))
	between("retry.base_ms", int64(s.Retry.BaseMS))
	between("retry.cap_ms", int64(s.Retry.CapMS))
	if s.Retry.CapMS < s.Retry.BaseMS {
		fs = append(fs, Broke("retry.cap_ms", "not-below", "retry.base_ms"))
	}
	oneOf("retry.jitter", string(s.Retry.Jitter), Names(Jitters))
	oneOf("retry.budget", string(s.Retry.Budget), Names(Budgets))
	between("retry.max_tokens", int64(s.Retry.MaxTokens))
	if r := s.Retry.TokenRatio; !(r >= MinTokenRatio && r <= 1) { // NaN too
		fs = append(fs, Broke("retry.token_ratio", "range-decimal", MinTokenRatio, 1.0))
	}
	between("retry.budget_percent", int64(s.Retry.BudgetPercent))
	between("capacity_rps", int64(s.CapacityRPS))
	between("client_timeout_ms", int64(s.ClientTimeoutMS))
	between("server_delay_ms", int64(s.ServerDelayMS))
	between("check_gap_ms", int64(s.CheckGapMS))
	oneOf("isolation", string(s.Isolation), Names(Isolations))
	between("key_ttl_s", int64(s.KeyTTLS))
	between("lock_timeout_ms", int64(s.LockTimeoutMS))
	oneOf("server_fault", string(s.ServerFault), Names(ServerFaults))
	oneOf("notify", string(s.Notify), Names(Notifies))
	oneOf("delivery", string(s.Delivery), Names(MessageFates))
	oneOf("consumer_dedup", string(s.ConsumerDedup), Names(ConsumerDedups))
	between("ack_wait_ms", int64(s.AckWaitMS))
	oneOf("language", s.Language, []string{"ru", "en"})
	between("seed", s.Seed)
	if len(fs) > 0 {
		return Invalid(fs...)
	}
	return nil
}

// MinTokenRatio is the least a token bucket's answer gives back (gRPC
// keeps three decimals).
const MinTokenRatio = 0.001

// SettingRange is the range of a whole-number setting, named as the
// errors name it (retry.max_attempts); ok is false for any other field.
func SettingRange(field string) (lo, hi int64, ok bool) {
	for _, r := range [...]struct {
		field  string
		lo, hi int64
	}{
		{"retry.max_attempts", 1, 10},
		{"retry.base_ms", 1, 10_000},
		{"retry.cap_ms", 1, 60_000},
		{"retry.max_tokens", 1, 1000},
		{"retry.budget_percent", 1, 100},
		{"capacity_rps", 0, 100_000},
		{"client_timeout_ms", 50, 60_000},
		{"server_delay_ms", 0, 30_000},
		{"check_gap_ms", 0, 10_000},
		{"key_ttl_s", 1, 30 * 24 * 60 * 60},
		{"lock_timeout_ms", 100, 600_000},
		{"ack_wait_ms", 100, 60_000},
		{"seed", 0, MaxSeed},
	} {
		if r.field == field {
			return r.lo, r.hi, true
		}
	}
	return 0, 0, false
}

// Range is SettingRange: the decoder names a field's own range when a
// number is beyond what every JSON reader holds exactly.
func (SettingsPatch) Range(field string) (lo, hi int64, ok bool) { return SettingRange(field) }

// Names are the values of a list of settings values, as strings.
func Names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
