package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"golang.org/x/text/language"

	"idemlab/views"
)

// langCookie keeps the language a person chose with the switch.
const langCookie = "idemlab_lang"

// langs are the languages the lab speaks, in the matcher's order: the
// first is the one for a browser that asks for neither.
var langs = []language.Tag{language.English, language.Russian}

// pageLang is the language of a page: ?lang= (which sticks, in a cookie);
// then the language of the page a request comes from (its live stream's
// ?hl=, its htmx requests' X-Page-Lang header), which does not stick; then
// the cookie; then the browser's Accept-Language, matched by
// golang.org/x/text/language.
func pageLang(c echo.Context) views.Lang {
	if q := views.Lang(c.QueryParam("lang")); q.Known() {
		c.SetCookie(&http.Cookie{Name: langCookie, Value: string(q), Path: "/", MaxAge: 365 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		return q
	}
	for _, v := range []string{c.QueryParam("hl"), c.Request().Header.Get("X-Page-Lang")} {
		if l := views.Lang(v); l.Known() {
			return l
		}
	}
	if ck, err := c.Cookie(langCookie); err == nil {
		if l := views.Lang(ck.Value); l.Known() {
			return l
		}
	}
	return acceptLang(c.Request().Header.Get("Accept-Language"))
}

// acceptLang matches an Accept-Language header to a language of the lab.
func acceptLang(header string) views.Lang {
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(tags) == 0 {
		return views.English
	}
	_, i, _ := language.NewMatcher(langs).Match(tags...)
	if langs[i] == language.Russian {
		return views.Russian
	}
	return views.English
}

// withLang puts the page's language into the request's context, where the
// templates find it.
func withLang(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		c.SetRequest(r.WithContext(views.WithLang(r.Context(), pageLang(c))))
		c.Response().Header().Add("Vary", "Accept-Language")
		return next(c)
	}
}
