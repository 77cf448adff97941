package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
)

// routeLimits are the limits per client address of the costly routes.
type routeLimits struct {
	labs, compares, scenarios echo.MiddlewareFunc
}

// addRoutes maps the whole HTTP surface of the lab.
func addRoutes(e *echo.Echo, engine *sim.Engine, hub *Hub, limit routeLimits, files assets) {
	root := e.Group("")
	get(root, "/healthz", handleHealth(engine))
	get(root, "/problems", handleProblemIndex(), withLang)
	get(root, "/problems/:slug", handleProblemPage(), withLang)
	get(root, "/static/*", files.handler())

	// The dashboard: pages, their form posts and live streams. Middleware
	// goes on each route: on a Group, Echo would run it for every unmatched
	// path too. (Every write, here and in the API, has passed the
	// cross-origin check of NewServer.) A form post gives each field once.
	get(root, "/", handlePage(engine, hub), withLang)
	get(root, "/labs/:lab", handlePage(engine, hub), withLang)
	e.POST("/labs", handleNewLab(engine), limit.labs, oneValueEach)
	e.POST("/labs/:lab/charge", handleFireCharge(engine, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/settings", handleSettingsForm(engine, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/retry", handleRetryForm(engine, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/race", handleRaceForm(engine, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/reset", handleResetForm(engine, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/clock", handleClockForm(engine, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/lesson", handleLessonChoose(engine, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/lesson/setup", handleLessonSetUp(engine, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/lesson/step", handleLessonStep(engine, hub), oneValueEach, withLang)
	e.GET("/labs/:lab/events", handleEvents(engine, hub), withLang)
	e.POST("/compare", handleCompare(engine), limit.compares, oneValueEach, withLang)
	get(root, "/compare/:id", handleComparePage(engine), withLang)
	get(root, "/s/:code", handleScenario(engine), limit.scenarios)
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
	api.POST("/labs", handleCreateLab(engine), limit.labs)
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
	get(api, "/labs/:lab/emails", handleEmails(engine), lab)
	get(api, "/labs/:lab/messages", handleMessages(engine), lab)
	get(api, "/labs/:lab/orders", handleOrders(engine), lab)
	api.POST("/labs/:lab/clock", handleClock(engine), lab, once)
	get(api, "/labs/:lab/keys", handleKeys(engine), lab)
	api.PUT("/labs/:lab/orders/:order", handlePutOrder(engine), lab)
	api.DELETE("/labs/:lab/orders/:order", handleDeleteOrder(engine), lab)
	api.POST("/compare", handleCompareAPI(engine), limit.compares)
	get(api, "/compare/:id", handleComparisonAPI(engine))
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

// sameOrigin refuses the writes (any method but GET, HEAD and OPTIONS) that
// a browser sends on behalf of another site's page, the pages' form posts
// and the JSON API alike: a page elsewhere must not charge in, or reset, the
// classroom's lab from a visitor's browser. net/http's CrossOriginProtection
// decides: Sec-Fetch-Site first, then Origin against Host; a request with
// neither (curl, programs, the lab's own simulated client) is not a
// browser's and passes. A page on another port of the same host is another
// origin, and is refused.
func sameOrigin(cop *http.CrossOriginProtection) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := cop.Check(c.Request()); err != nil {
				return newProblem(probCrossSite, "This request came from another site's page; the lab takes changes only from its own pages and from programs such as curl.")
			}
			return next(c)
		}
	}
}
