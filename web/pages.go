package web

import (
	"bytes"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

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

func problemInfo(c echo.Context, t problemType) views.ProblemInfo {
	if views.LangOf(c.Request().Context()) == views.Russian {
		return views.ProblemInfo{Slug: t.Slug, Status: t.Status, Title: t.TitleRU, Explain: t.ExplainRU}
	}
	return views.ProblemInfo{Slug: t.Slug, Status: t.Status, Title: t.Title, Explain: t.Explain}
}

func handleProblemIndex() echo.HandlerFunc {
	return func(c echo.Context) error {
		var ps []views.ProblemInfo
		for _, t := range problemTypes() {
			ps = append(ps, problemInfo(c, t))
		}
		return render(c, http.StatusOK, views.ProblemIndex(ps))
	}
}

func handleProblemPage() echo.HandlerFunc {
	return func(c echo.Context) error {
		for _, t := range problemTypes() {
			if t.Slug == c.Param("slug") {
				return render(c, http.StatusOK, views.ProblemPage(problemInfo(c, t)))
			}
		}
		return newProblem(probNotFound, "There is no such problem type.")
	}
}
