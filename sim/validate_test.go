package sim_test

import (
	"strings"
	"testing"

	"idemlab/sim"
)

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"abc", "abc", true},
		{`"abc"`, "abc", true},
		{`"a b"`, "a b", true}, // a quoted sf-string may hold spaces
		{`"a\"b"`, `a"b`, true},
		{`"a\\b"`, `a\b`, true},
		{strings.Repeat("k", 255), strings.Repeat("k", 255), true},
		{"", "", false},
		{`""`, "", false},
		{strings.Repeat("k", 256), "", false},
		{"a b", "", false},
		{"a\tb", "", false},
		{"ключ", "", false},
		{`"abc`, "", false},
		{`"a"b"`, "", false},
		{`"a\x"`, "", false},
		{"\x7f", "", false},
	} {
		got, err := sim.ParseKey(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseKey(%q) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && sim.ErrorCode(err) != sim.EInvalid {
			t.Errorf("ParseKey(%q): error code %s, want invalid", tc.in, sim.ErrorCode(err))
		}
	}
}

func TestChargeValidate(t *testing.T) {
	for _, tc := range []struct {
		c      sim.Charge
		fields []string
	}{
		{sim.Charge{OrderID: "order-42", Amount: 1500}, nil},
		{sim.Charge{OrderID: "A.b_c:d-9", Amount: 1}, nil},
		{sim.Charge{OrderID: strings.Repeat("x", 64), Amount: 1_000_000_000}, nil},
		{sim.Charge{OrderID: "", Amount: 1}, []string{"order_id"}},
		{sim.Charge{OrderID: strings.Repeat("x", 65), Amount: 1}, []string{"order_id"}},
		{sim.Charge{OrderID: "order 42", Amount: 1}, []string{"order_id"}},
		{sim.Charge{OrderID: "<img>", Amount: 1}, []string{"order_id"}},
		{sim.Charge{OrderID: "x", Amount: 0}, []string{"amount"}},
		{sim.Charge{OrderID: "x", Amount: -5}, []string{"amount"}},
		{sim.Charge{OrderID: "", Amount: 1_000_000_001}, []string{"order_id", "amount"}},
	} {
		err := tc.c.Validate()
		var got []string
		if se, ok := err.(*sim.Error); ok {
			for _, f := range se.Fields {
				got = append(got, f.Field)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
			t.Errorf("%+v: invalid fields %v, want %v", tc.c, got, tc.fields)
		}
	}
}

func TestSettingsApply(t *testing.T) {
	s := sim.DefaultSettings()
	replay, auto, tooShort := sim.ProtectReplay, "auto", 10
	got, err := s.Apply(sim.SettingsPatch{Protection: &replay, Retry: &sim.RetryPatch{Mode: &auto}})
	if err != nil || got.Protection != replay || got.Retry.Mode != auto || got.Retry.MaxAttempts != s.Retry.MaxAttempts {
		t.Errorf("merge: %+v, %v", got, err)
	}
	if _, err := s.Apply(sim.SettingsPatch{ClientTimeoutMS: &tooShort}); sim.ErrorCode(err) != sim.EInvalid {
		t.Errorf("client_timeout_ms 10: %v, want invalid", err)
	}
	bogus := sim.Protection("bogus")
	if _, err := s.Apply(sim.SettingsPatch{Protection: &bogus}); sim.ErrorCode(err) != sim.EInvalid {
		t.Errorf("protection bogus: %v, want invalid", err)
	}
	if s.Protection != sim.ProtectNone {
		t.Error("Apply changed the settings it was called on")
	}
}
