package web

import (
	"bytes"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/views"
)

// render renders a component into a buffer first, so that a failing
// component yields a clean error answer rather than half a page.
func render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// problemInfo is a problem type as its page shows it, in the reader's
// language.
func problemInfo(c echo.Context, t api.ProblemType) views.ProblemInfo {
	lang := views.LangOf(c.Request().Context())
	return views.ProblemInfo{Slug: t.Slug, Status: t.Status,
		Title: lang.T("problem." + t.Slug + ".title"), Explain: lang.T("problem." + t.Slug + ".explain")}
}

func handleProblemIndex() echo.HandlerFunc {
	return func(c echo.Context) error {
		var ps []views.ProblemInfo
		for _, t := range api.ProblemTypes() {
			ps = append(ps, problemInfo(c, t))
		}
		return render(c, http.StatusOK, views.ProblemIndex(ps))
	}
}

func handleProblemPage() echo.HandlerFunc {
	return func(c echo.Context) error {
		for _, t := range api.ProblemTypes() {
			if t.Slug == c.Param("slug") {
				return render(c, http.StatusOK, views.ProblemPage(problemInfo(c, t)))
			}
		}
		return newProblem(probNotFound, "There is no such problem type.")
	}
}

// wantsPage reports whether a failed request should be answered with a page
// rather than problem+json: a browser's navigation or form post, whose
// Accept names text/html ahead of every JSON type ("text/html,…,*/*;q=0.8").
// curl's */* and programs asking for JSON get JSON; so do htmx's requests
// (HX-Request), whose answers are fragments for the page they came from.
func wantsPage(r *http.Request) bool {
	if r.Header.Get("HX-Request") == "true" {
		return false
	}
	html, json := 0.0, 0.0
	for _, part := range strings.Split(strings.Join(r.Header.Values("Accept"), ","), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		switch {
		case mt == "text/html" || mt == "application/xhtml+xml":
			html = max(html, q)
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			json = max(json, q)
		}
	}
	return html > json
}

// errorPage answers a failed request with the page of its problem, in the
// reader's language, with the status and headers the JSON would have had.
func errorPage(c echo.Context, p *Problem) error {
	r := c.Request()
	ctx := views.WithLang(r.Context(), pageLang(c))
	c.SetRequest(r.WithContext(ctx))
	setHeaders(c.Response().Header(), pageHeaders[:]) // a page, whatever its address
	addVary(c.Response().Header(), "Accept-Language")
	if r.Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
		return c.NoContent(p.Status)
	}
	return render(c, p.Status, views.ErrorPage(errorView(c, p)))
}

// errorNotice answers a page's htmx request that failed with the notice
// the page shows where the eye is, in the page's language, with the status
// and headers the JSON would have had: htmx swaps error answers too.
func errorNotice(c echo.Context, p *Problem) error {
	r := c.Request()
	ctx := views.WithLang(r.Context(), pageLang(c))
	c.SetRequest(r.WithContext(ctx))
	msg := p.said
	if msg.IsZero() || msg.Key == "err.invalid" {
		_, msg = leadOf(p)
	}
	return render(c, p.Status, views.NoticeAt(noticeOf(c), msg))
}

// leadOf is p's problem type and the words that lead its page: what
// happened and what to do, for a person.
func leadOf(p *Problem) (api.ProblemType, views.Msg) {
	slug, _ := strings.CutPrefix(p.Type, "/problems/")
	for _, t := range api.ProblemTypes() {
		if t.Slug == slug {
			return t, views.M("error.lead." + slug)
		}
	}
	return api.ProblemType{}, views.M("error.lead.other")
}

// errorView is p as the error page shows it, in the language of c.
func errorView(c echo.Context, p *Problem) views.ErrorView {
	t, lead := leadOf(p)
	v := views.ErrorView{Status: p.Status, Title: views.T(c.Request().Context(), "error.title", p.Status),
		Lead: lead, RetryAfter: p.retryAfter, Request: c.Request().Method + " " + clipTo(p.Instance, 60)}
	if t.Slug != "" {
		v.Slug, v.Title = t.Slug, problemInfo(c, t).Title
	}
	switch {
	case c.Path() == "/s/:code" && p.Status == http.StatusBadRequest:
		v.Lead = views.M("error.lead.scenario")
	case v.Slug == probNotFound.Slug && c.Param("lab") != "":
		v.Lead = views.M("error.lead.lab")
	case v.Slug == probValidation.Slug:
		english := views.LangOf(c.Request().Context()) == views.English
		for i, f := range p.Errors {
			fw := views.FieldWhy{Name: f.Field}
			switch {
			case i < len(p.saidFields):
				fw.Why = p.saidFields[i]
			case english && f.Detail != "":
				fw.Why = views.M("notice.other", f.Detail)
			}
			v.Fields = append(v.Fields, fw)
		}
	}
	switch {
	case v.Lead.Key == "error.lead.lab": // the lead says it all
	case !p.said.IsZero() && p.said.Key != "err.invalid":
		v.Detail = p.said // words of views: in the reader's language
	case views.LangOf(c.Request().Context()) == views.English && p.Detail != "" && strings.TrimSuffix(p.Detail, ".") != p.Title:
		v.Detail = views.M("notice.other", p.Detail)
	}
	return v
}

// addVary adds name to the Vary header unless it is there.
func addVary(h http.Header, name string) {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), name) {
				return
			}
		}
	}
	h.Add("Vary", name)
}
