package web

import (
	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/static"
)

// addRoutes maps the whole HTTP surface of the lab.
func addRoutes(e *echo.Echo, engine *sim.Engine) {
	root := e.Group("")
	get(root, "/", handleHome())
	get(root, "/healthz", handleHealth(engine))
	get(root, "/problems", handleProblemIndex())
	get(root, "/problems/:slug", handleProblemPage())
	e.StaticFS("/static", static.Files)

	// lab loads the lab named in the path before the handler runs; own
	// mutating endpoints accept an Idempotency-Key: the lab eats its own cooking.
	lab := withLab(engine)
	once := idempotent(engine)
	api := e.Group("/api/v1")
	api.POST("/labs", handleCreateLab(engine), once)
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
}

// get registers a GET route and its HEAD twin (RFC 9110: a server that
// answers GET answers HEAD; net/http drops the body).
func get(g *echo.Group, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	g.GET(path, h, m...)
	g.HEAD(path, h, m...)
}
