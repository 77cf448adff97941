package views_test

import (
	"testing"

	"idemlab/views"
)

// Money writes roubles as each language does: «1 500 ₽» with no-break
// spaces in Russian, "₽1,500" in English.
func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		n      int64
		en, ru string
	}{
		{0, "₽0", "0\u00a0₽"},
		{5, "₽5", "5\u00a0₽"},
		{999, "₽999", "999\u00a0₽"},
		{1000, "₽1,000", "1\u00a0000\u00a0₽"},
		{1500, "₽1,500", "1\u00a0500\u00a0₽"},
		{3000, "₽3,000", "3\u00a0000\u00a0₽"},
		{1234567, "₽1,234,567", "1\u00a0234\u00a0567\u00a0₽"},
	} {
		if got := views.English.Money(tc.n); got != tc.en {
			t.Errorf("English.Money(%d) = %q, want %q", tc.n, got, tc.en)
		}
		if got := views.Russian.Money(tc.n); got != tc.ru {
			t.Errorf("Russian.Money(%d) = %q, want %q", tc.n, got, tc.ru)
		}
	}
}

// Say writes an Amount among a Msg's arguments as Money does, also where
// the Russian words put it in another place.
func TestSayAmount(t *testing.T) {
	m := views.M("log.operation", "order-42", views.Amount(1500), views.M("log.no-key"))
	for _, tc := range []struct {
		lang views.Lang
		want string
	}{
		{views.English, "New operation: charge order-42 ₽1,500 (no key)."},
		{views.Russian, "Новая операция: списать 1\u00a0500\u00a0₽ за заказ order-42 (без ключа)."},
	} {
		if got := tc.lang.Say(m); got != tc.want {
			t.Errorf("%s: Say = %q, want %q", tc.lang, got, tc.want)
		}
	}
}
