package views

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Lang is a language of the page.
type Lang string

// The languages of the lab: the article's and English.
const (
	English Lang = "en"
	Russian Lang = "ru"
)

// Langs lists the languages, in the order the switch offers them.
var Langs = []Lang{Russian, English}

// Known reports whether l is a language of the lab.
func (l Lang) Known() bool { return l == English || l == Russian }

// Name is the language's name in itself.
func (l Lang) Name() string {
	if l == Russian {
		return "Русский"
	}
	return "English"
}

// Other is the language the switch offers.
func (l Lang) Other() Lang {
	if l == Russian {
		return English
	}
	return Russian
}

type langKey struct{}

// WithLang returns ctx carrying the page's language.
func WithLang(ctx context.Context, l Lang) context.Context {
	return context.WithValue(ctx, langKey{}, l)
}

// LangOf is the language ctx carries; English when none.
func LangOf(ctx context.Context) Lang {
	if l, ok := ctx.Value(langKey{}).(Lang); ok {
		return l
	}
	return English
}

// message is one entry of a catalog: the words in each language, with fmt
// verbs for the arguments.
type message struct{ en, ru string }

// T is the message key in ctx's language, its verbs filled from args.
func T(ctx context.Context, key string, args ...any) string { return LangOf(ctx).T(key, args...) }

// T is the message key in l, its verbs filled from args. A key missing
// from the catalogs comes out as itself, in brackets, so that a test that
// scans pages finds it.
func (l Lang) T(key string, args ...any) string {
	m, ok := lookup(key)
	if !ok {
		return "[" + key + "]"
	}
	f := m.en
	if l == Russian {
		f = m.ru
	}
	if len(args) == 0 {
		return f
	}
	return fmt.Sprintf(f, args...)
}

// lookup finds key in the catalogs: the page's, the log's, the diagram's,
// the checklist's, the lessons', the errors', the error pages', the mail's,
// the keys', the problems', the comparison's, the shares', the failures'.
func lookup(key string) (message, bool) {
	for _, c := range catalogs() {
		if m, ok := c[key]; ok {
			return m, true
		}
	}
	return message{}, false
}

func catalogs() [16]map[string]message {
	return [16]map[string]message{stormMessages, steppedMessages, classMessages, pageMessages, logMessages, diagramMessages, checklistMessages, lessonMessages, errorMessages, errorPageMessages, mailMessages, keysMessages, problemMessages, compareMessages, shareMessages, failureMessages}
}

// Keys lists every key of the catalogs, for tests that check them whole.
func Keys() map[string][2]string {
	out := map[string][2]string{}
	for _, c := range catalogs() {
		for k, m := range c {
			out[k] = [2]string{m.en, m.ru}
		}
	}
	return out
}

// Msg is words to be said in the reader's language: a catalog key and the
// arguments of its format, which may be Msgs themselves. The event log and
// the notices keep Msgs, so each page says them in its own language.
type Msg struct {
	Key  string
	Args []any
}

// M makes a Msg.
func M(key string, args ...any) Msg { return Msg{Key: key, Args: args} }

// IsZero reports whether m says nothing.
func (m Msg) IsZero() bool { return m.Key == "" }

// Say is m in l.
func (l Lang) Say(m Msg) string {
	if m.IsZero() {
		return ""
	}
	args := make([]any, len(m.Args))
	for i, a := range m.Args {
		switch v := a.(type) {
		case Msg:
			a = l.Say(v)
		case Amount:
			a = l.Money(int64(v))
		case Count:
			a = strconv.FormatInt(v.N, 10) + " " + l.Plural(v.N, v.Key)
		case Decimal:
			a = l.Decimal(float64(v))
		}
		args[i] = a
	}
	return l.T(m.Key, args...)
}

// Say is m in ctx's language.
func Say(ctx context.Context, m Msg) string { return LangOf(ctx).Say(m) }

// Plural is the form of a counted word for n: the catalog holds the forms
// separated by "|": one|many in English, one|few|many in Russian.
func (l Lang) Plural(n int64, key string) string { return pluralForm(l, l.T(key), n) }

// pluralForm picks the form of forms ("one|few|many" or "one|many") that n
// takes in l: 1 попытка, 2 попытки, 5 попыток.
func pluralForm(l Lang, forms string, n int64) string {
	f := strings.Split(forms, "|")
	i := len(f) - 1 // many
	if n < 0 {
		n = -n
	}
	switch {
	case l == Russian && len(f) == 3:
		switch n10, n100 := n%10, n%100; {
		case n10 == 1 && n100 != 11:
			i = 0
		case n10 >= 2 && n10 <= 4 && (n100 < 12 || n100 > 14):
			i = 1
		}
	case n == 1:
		i = 0
	}
	return f[i]
}

// Count is a number of things among a Msg's arguments: Say writes the
// number and the word's form for it ("2 charges", «2 списания»); Key holds
// the forms, as Plural's key does.
type Count struct {
	N   int64
	Key string
}

// Decimal is a number among a Msg's arguments: Say writes it with at most
// two decimals, as the reader's language does (a "%s" verb).
type Decimal float64

// Amount is a sum of roubles among a Msg's arguments: Say writes it as the
// reader's language does (a "%s" verb in the catalog).
type Amount int64

// Money is an amount of roubles as ctx's language writes it.
func Money(ctx context.Context, n int64) string { return LangOf(ctx).Money(n) }

// Money is an amount of roubles as the language writes it: «1 500 ₽» in
// Russian, "₽1,500" in English. Every amount the lab shows is written so.
func (l Lang) Money(n int64) string {
	if l == Russian {
		return l.Number(n) + "\u00a0₽"
	}
	return "₽" + l.Number(n)
}

// Number is a whole number as the language groups its thousands: "1,500",
// «1 500».
func (l Lang) Number(n int64) string {
	digits := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	sep := ","
	if l == Russian {
		sep = "\u00a0"
	}
	var b strings.Builder
	if neg {
		b.WriteString("−")
	}
	for i, r := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	return b.String()
}
