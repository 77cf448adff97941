package views

import (
	"context"
	"fmt"
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

// lookup finds key in the catalogs of the page and of the diagram.
func lookup(key string) (message, bool) {
	if m, ok := pageMessages[key]; ok {
		return m, true
	}
	m, ok := diagramMessages[key]
	return m, ok
}
