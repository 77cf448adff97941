package web

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
)

func handleSettingsForm(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		p, err := settingsPatch(c)
		if err != nil {
			return refuseErr(c, err)
		}
		if err := h.Stepped.Holding(l); err != nil {
			return refuseErr(c, err)
		}
		if _, err := h.Labs.UpdateSettings(c.Request().Context(), l, p); err != nil {
			return refuseErr(c, err)
		}
		return answer(c, h, hub, l)
	}
}

// formText are the settings form's fields of words: each sets its setting
// when the form sends it.
var formText = []struct {
	name string
	set  func(p *sim.SettingsPatch, v string)
}{
	{"protection", func(p *sim.SettingsPatch, v string) { p.Protection = ptr(sim.Protection(v)) }},
	{"key_strategy", func(p *sim.SettingsPatch, v string) { p.KeyStrategy = ptr(sim.KeyStrategy(v)) }},
	{"network", func(p *sim.SettingsPatch, v string) { p.Network = ptr(sim.Fate(v)) }},
	{"jitter", func(p *sim.SettingsPatch, v string) { p.Retry.Jitter = ptr(sim.Jitter(v)) }},
	{"budget", func(p *sim.SettingsPatch, v string) { p.Retry.Budget = ptr(sim.Budget(v)) }},
	{"server_fault", func(p *sim.SettingsPatch, v string) { p.ServerFault = ptr(sim.ServerFault(v)) }},
	{"isolation", func(p *sim.SettingsPatch, v string) { p.Isolation = ptr(sim.Isolation(v)) }},
	{"notify", func(p *sim.SettingsPatch, v string) { p.Notify = ptr(sim.Notify(v)) }},
	{"delivery", func(p *sim.SettingsPatch, v string) { p.Delivery = ptr(sim.MessageFate(v)) }},
	{"consumer_dedup", func(p *sim.SettingsPatch, v string) { p.ConsumerDedup = ptr(sim.ConsumerDedup(v)) }},
	{"language", func(p *sim.SettingsPatch, v string) { p.Language = &v }},
}

// formNumbers are the settings form's whole-number fields.
var formNumbers = []struct {
	name string
	set  func(p *sim.SettingsPatch, n int)
}{
	{"max_attempts", func(p *sim.SettingsPatch, n int) { p.Retry.MaxAttempts = &n }},
	{"base_ms", func(p *sim.SettingsPatch, n int) { p.Retry.BaseMS = &n }},
	{"cap_ms", func(p *sim.SettingsPatch, n int) { p.Retry.CapMS = &n }},
	{"key_ttl_s", func(p *sim.SettingsPatch, n int) { p.KeyTTLS = &n }},
	{"client_timeout_ms", func(p *sim.SettingsPatch, n int) { p.ClientTimeoutMS = &n }},
	{"server_delay_ms", func(p *sim.SettingsPatch, n int) { p.ServerDelayMS = &n }},
	{"check_gap_ms", func(p *sim.SettingsPatch, n int) { p.CheckGapMS = &n }},
	{"ack_wait_ms", func(p *sim.SettingsPatch, n int) { p.AckWaitMS = &n }},
	{"max_tokens", func(p *sim.SettingsPatch, n int) { p.Retry.MaxTokens = &n }},
	{"budget_percent", func(p *sim.SettingsPatch, n int) { p.Retry.BudgetPercent = &n }},
	{"capacity_rps", func(p *sim.SettingsPatch, n int) { p.CapacityRPS = &n }},
}

func ptr[T any](v T) *T { return &v }

// settingsPatch reads the settings form: every field it sends is set; the
// auto-retry switch is off when absent (an unchecked box sends nothing), and
// so is the publish deduplication's when the form shows it.
func settingsPatch(c echo.Context) (sim.SettingsPatch, error) {
	if err := c.Request().ParseForm(); err != nil {
		return sim.SettingsPatch{}, sim.Invalid(sim.Broke("form", "unreadable"))
	}
	form := c.Request().PostForm
	sent := func(name string) (string, bool) {
		if v, ok := form[name]; ok && len(v) > 0 {
			return v[0], true
		}
		return "", false
	}
	mode := sim.RetryManual
	if _, ok := sent("retry_auto"); ok {
		mode = sim.RetryAuto
	}
	p := sim.SettingsPatch{Retry: &sim.RetryPatch{Mode: &mode}}
	for _, f := range formText {
		if v, ok := sent(f.name); ok {
			f.set(&p, v)
		}
	}
	var fs []sim.FieldError
	for _, f := range formNumbers {
		v, ok := sent(f.name)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			fs = append(fs, sim.Broke(f.name, "whole"))
			continue
		}
		f.set(&p, n)
	}
	if v, ok := sent("token_ratio"); ok {
		if r, err := strconv.ParseFloat(v, 64); err == nil {
			p.Retry.TokenRatio = &r
		} else {
			fs = append(fs, sim.Broke("token_ratio", "range-decimal", sim.MinTokenRatio, 1.0))
		}
	}
	if _, ok := sent("publish_dedup_shown"); ok { // the switch is on this form: unchecked sends nothing
		_, on := sent("publish_dedup")
		p.PublishDedup = &on
	}
	if _, ok := sent("respect_retry_after_shown"); ok {
		_, on := sent("respect_retry_after")
		p.Retry.RespectRetryAfter = &on
	}
	if len(fs) > 0 {
		return p, sim.Invalid(fs...)
	}
	return p, nil
}
