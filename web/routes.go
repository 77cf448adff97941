package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"idemlab/sim"
	"idemlab/static"
)

// addRoutes maps the whole HTTP surface of the lab.
func addRoutes(e *echo.Echo, engine *sim.Engine, hub *Hub) {
	root := e.Group("")
	get(root, "/healthz", handleHealth(engine))
	get(root, "/problems", handleProblemIndex(), withLang)
	get(root, "/problems/:slug", handleProblemPage(), withLang)
	e.StaticFS("/static", static.Files)

	// The dashboard: pages, their form posts (CSRF-checked) and live streams.
	// Middleware goes on each route: on a Group, Echo would run it for every
	// unmatched path too.
	guard := csrf()
	get(root, "/", handlePage(engine, hub), guard, withLang)
	get(root, "/labs/:lab", handlePage(engine, hub), guard, withLang)
	e.POST("/labs", handleNewLab(engine), guard)
	e.POST("/labs/:lab/charge", handleFireCharge(engine, hub), guard, withLang)
	e.POST("/labs/:lab/settings", handleSettingsForm(engine, hub), guard, withLang)
	e.POST("/labs/:lab/retry", handleRetryForm(engine, hub), guard, withLang)
	e.POST("/labs/:lab/race", handleRaceForm(engine, hub), guard, withLang)
	e.POST("/labs/:lab/reset", handleResetForm(engine, hub), guard, withLang)
	e.POST("/labs/:lab/lesson", handleLessonChoose(engine, hub), guard, withLang)
	e.POST("/labs/:lab/lesson/setup", handleLessonSetUp(engine, hub), guard, withLang)
	e.POST("/labs/:lab/lesson/step", handleLessonStep(engine, hub), guard, withLang)
	e.GET("/labs/:lab/events", handleEvents(engine, hub), withLang)
	e.POST("/compare", handleCompare(engine), guard, withLang)
	get(root, "/s/:code", handleScenario(engine))
	get(root, "/labs/:lab/export/ledger.csv", handleExportCSV(engine))
	get(root, "/labs/:lab/export/history.json", handleExportJSON(engine))
	get(root, "/labs/:lab/export/report.md", handleExportReport(engine), withLang)

	// lab loads the lab named in the path before the handler runs; own
	// mutating endpoints accept an Idempotency-Key: the lab eats its own cooking.
	lab := withLab(engine)
	once := idempotent(engine)
	api := e.Group("/api/v1")
	// Creating a lab is not replayed: a key shared by two callers must not
	// hand one the other's private lab. A retry makes a second lab, which
	// idles out.
	api.POST("/labs", handleCreateLab(engine))
	api.DELETE("/labs/:lab", handleDeleteLab(engine))
	get(api, "/labs/:lab/settings", handleGetSettings(), lab)
	api.PATCH("/labs/:lab/settings", handlePatchSettings(engine), lab)
	api.POST("/labs/:lab/charges", handleCharge(engine), lab)
	get(api, "/labs/:lab/payments", handlePayments(engine), lab)
	get(api, "/labs/:lab/payments/:id", handlePayment(engine), lab)
	get(api, "/labs/:lab/operations", handleOperations(engine), lab)
	api.POST("/labs/:lab/operations", handleStartOperation(engine), lab, once)
	get(api, "/labs/:lab/operations/:op", handleOperation(engine), lab)
	api.POST("/labs/:lab/operations/:op/retry", handleRetry(engine), lab, once)
	api.POST("/labs/:lab/operations/:op/race", handleRace(engine), lab, once)
	api.POST("/labs/:lab/reset", handleReset(engine), lab)
	api.POST("/compare", handleCompareAPI(engine))
	get(api, "/labs/:lab/scenario", handleScenarioAPI(engine), lab)
	get(api, "/labs/:lab/lesson", handleLessonAPI(engine), lab)
	api.POST("/labs/:lab/lesson", handleLessonChooseAPI(engine), lab, once)
	api.POST("/labs/:lab/lesson/setup", handleLessonSetUpAPI(engine), lab, once)
	api.POST("/labs/:lab/lesson/step", handleLessonStepAPI(engine), lab, once)
}

// get registers a GET route and its HEAD twin (RFC 9110: a server that
// answers GET answers HEAD; net/http drops the body).
func get(g *echo.Group, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	g.GET(path, h, m...)
	g.HEAD(path, h, m...)
}

// csrf checks every form post of the pages: the token of the page's cookie
// must come back in the form (plain posts) or the X-CSRF-Token header (htmx).
func csrf() echo.MiddlewareFunc {
	return middleware.CSRFWithConfig(middleware.CSRFConfig{
		TokenLookup:    "header:X-CSRF-Token,form:_csrf",
		CookieName:     "idemlab_csrf",
		CookiePath:     "/",
		CookieHTTPOnly: true,
		CookieSameSite: http.SameSiteStrictMode,
		ErrorHandler: func(err error, c echo.Context) error {
			return newProblem(probCSRF, "The form's security token is missing or stale: reload the page and try again.")
		},
	})
}

// sameOriginWrites refuses the API's writes that a browser sends on behalf
// of another site (Fetch Metadata: Sec-Fetch-Site): a page elsewhere must not
// reset the classroom's lab from a visitor's browser. curl and programs send
// no such header and are served as usual.
func sameOriginWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		if !strings.HasPrefix(r.URL.Path, "/api/") { // the pages' forms have their CSRF token
			return next(c)
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
			return next(c)
		}
		return newProblem(probCrossSite, "This request came from another site's page; the lab's API does not take writes from other sites.")
	}
}
