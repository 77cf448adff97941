package web

import (
	"idemlab/api"
	"idemlab/sim/house"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"
)

// routeLimits are the limits per client address of the costly routes.
type routeLimits struct {
	labs, compares, scenarios, votes echo.MiddlewareFunc
	voters                           *limiter // per device, not per address
	joinMisses                       *limiter // join codes that name no class, per address
}

// addRoutes maps the whole HTTP surface of the lab.
func addRoutes(e *echo.Echo, h *house.House, hub *Hub, limit routeLimits, files assets, log *slog.Logger) {
	root := e.Group("")
	get(root, "/healthz", handleHealth(h))
	get(root, "/problems", handleProblemIndex(), withLang)
	get(root, "/problems/:slug", handleProblemPage(), withLang)
	get(root, "/static/*", files.handler())

	// The dashboard: pages, their form posts and live streams. Middleware
	// goes on each route: on a Group, Echo would run it for every unmatched
	// path too. (Every write, here and in the API, has passed the
	// cross-origin check of NewServer.) A form post gives each field once.
	get(root, "/", handlePage(h, hub), withLang)
	get(root, "/labs/:lab", handlePage(h, hub), withLang)
	e.POST("/labs", handleNewLab(h), limit.labs, oneValueEach)
	e.POST("/labs/:lab/charge", handleFireCharge(h, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/settings", handleSettingsForm(h, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/retry", handleRetryForm(h, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/race", handleRaceForm(h, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/reset", handleResetForm(h, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/clock", handleClockForm(h, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/lesson", handleLessonChoose(h, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/lesson/setup", handleLessonSetUp(h, hub), oneValueEach, withLang)
	e.POST("/labs/:lab/lesson/step", handleLessonStep(h, hub), oneValueEach, withLang)
	e.GET("/labs/:lab/events", handleEvents(h, hub), withLang)
	addSteppedForms(e, h, hub)
	addStormForms(e, root, h, hub)
	get(root, "/compare", handleCompareStart(), withLang)
	e.POST("/compare", handleCompare(h), limit.compares, oneValueEach, withLang)
	get(root, "/compare/:id", handleComparePage(h), withLang)
	get(root, "/s/:code", handleScenario(h), limit.scenarios)
	get(root, "/labs/:lab/export/ledger.csv", handleExportCSV(h))
	get(root, "/labs/:lab/export/history.json", handleExportJSON(h))
	get(root, "/labs/:lab/export/report.md", handleExportReport(h), withLang)

	// lab loads the lab named in the path before the handler runs; own
	// mutating endpoints accept an Idempotency-Key: the lab eats its own cooking.
	lab := withLab(h)
	once := idempotent(h.Records, log)
	// Creating a lab is not replayed: a key shared by two callers must not
	// hand one the other's private lab. A retry makes a second lab, which
	// idles out.
	e.POST(api.RouteLabs, handleCreateLab(h), limit.labs)
	e.DELETE(api.RouteLab, handleDeleteLab(h))
	get(root, api.RouteSettings, handleGetSettings(), lab)
	e.PATCH(api.RouteSettings, handlePatchSettings(h), lab)
	e.POST(api.RouteCharges, handleCharge(h), lab)
	get(root, api.RoutePayments, handlePayments(h), lab)
	get(root, api.RoutePayment, handlePayment(h), lab)
	get(root, api.RouteOperations, handleOperations(h), lab)
	e.POST(api.RouteOperations, handleStartOperation(h), lab, once)
	get(root, api.RouteOperation, handleOperation(h), lab)
	e.POST(api.RouteRetry, handleRetry(h), lab, once)
	e.POST(api.RouteRace, handleRace(h), lab, once)
	e.POST(api.RouteReset, handleReset(h), lab)
	get(root, api.RouteEmails, handleEmails(h), lab)
	get(root, api.RouteMessages, handleMessages(h), lab)
	get(root, api.RouteOrders, handleOrders(h), lab)
	e.POST(api.RouteClock, handleClock(h), lab, once)
	get(root, api.RouteKeys, handleKeys(h), lab)
	e.PUT(api.RouteOrder, handlePutOrder(h), lab)
	e.DELETE(api.RouteOrder, handleDeleteOrder(h), lab)
	e.POST(api.RouteCompare, handleCompareAPI(h), limit.compares)
	get(root, api.RouteComparison, handleComparisonAPI(h))
	get(root, api.RouteScenario, handleScenarioAPI(h), lab)
	get(root, api.RouteLesson, handleLessonAPI(h), lab)
	e.POST(api.RouteLesson, handleLessonChooseAPI(h), lab, once)
	e.POST(api.RouteLessonUp, handleLessonSetUpAPI(h), lab, once)
	e.POST(api.RouteLessonStep, handleLessonStepAPI(h), lab, once)
	e.POST(api.RouteStepped, handleSteppedStart(h), lab, once)
	get(root, api.RouteSteppedOne, handleSteppedGet(h), lab)
	e.POST(api.RouteStep, handleSteppedStep(h), lab, once)
	e.POST(api.RouteStepRun, handleSteppedRace(h.Stepped.Run), lab, once)
	e.DELETE(api.RouteSteppedOne, handleSteppedRace(h.Stepped.Abort), lab)
	addClassRoutes(e, root, h, hub, limit, once)
	e.POST(api.RouteStorms, handleStormStart(h), lab, once)
	get(root, api.RouteStorm, handleStormGet(h), lab)
	get(root, api.RouteStorm+"/series.csv", handleStormCSV(h), lab)
	e.DELETE(api.RouteStorm, handleStormStop(h), lab)
}

// addClassRoutes maps a class's routes: the teacher's forms and API on the
// lab, the take-home reports, and the phones' pages, which a join code
// opens without the lab.
func addClassRoutes(e *echo.Echo, root *echo.Group, h *house.House, hub *Hub, limit routeLimits, once echo.MiddlewareFunc) {
	lab := withLab(h)
	e.POST("/labs/:lab/class", labForm(h, hub, startClassForm(h)), oneValueEach, withLang)
	e.POST("/labs/:lab/class/ask", labForm(h, hub, askClassForm(h)), oneValueEach, withLang)
	e.POST("/labs/:lab/class/reveal", labForm(h, hub, revealClassForm(h)), oneValueEach, withLang)
	e.POST("/labs/:lab/class/end", labForm(h, hub, endClassForm(h)), oneValueEach, withLang)
	get(root, "/labs/:lab/class/report.md", handleClassReport(h, false), withLang)
	get(root, "/labs/:lab/class/report.csv", handleClassReport(h, true), withLang)
	// A class's phones: the join code opens its voting page, never its lab.
	get(root, api.RouteJoin, handleJoin(h, limit.joinMisses), withLang)
	get(root, api.RouteJoinNow, handleJoinNow(h, limit.joinMisses), withLang)
	get(root, api.RouteJoinQR, handleJoinQR(h, limit.joinMisses))
	get(root, api.RouteJoinScreen, handleJoinScreen(h, limit.joinMisses), withLang)
	e.POST(api.RouteJoinVotes, handleJoinVote(h, limit.voters, limit.joinMisses), limit.votes, oneValueEach, withLang)
	e.POST(api.RouteClass, handleClassStart(h), lab)
	get(root, api.RouteClass, handleClassGet(h), lab)
	e.DELETE(api.RouteClass, handleClassEnd(h), lab)
	e.POST(api.RouteClassAsk, handleClassAsk(h), lab, once)
	e.POST(api.RouteClassShow, handleClassReveal(h), lab, once)
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
