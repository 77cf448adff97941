package web

import (
	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/static"
)

// addRoutes maps the whole HTTP surface of the lab.
func addRoutes(e *echo.Echo, engine *sim.Engine) {
	e.GET("/", handleHome())
	e.GET("/healthz", handleHealth(engine))
	e.GET("/problems", handleProblemIndex())
	e.GET("/problems/:slug", handleProblemPage())
	e.StaticFS("/static", static.Files)

	// lab loads the lab named in the path before the handler runs; own
	// mutating endpoints accept an Idempotency-Key: the lab eats its own cooking.
	lab := withLab(engine)
	once := idempotent(engine)
	api := e.Group("/api/v1")
	api.POST("/labs", handleCreateLab(engine), once)
	api.GET("/labs/:lab/settings", handleGetSettings(), lab)
	api.PATCH("/labs/:lab/settings", handlePatchSettings(engine), lab)
	api.POST("/labs/:lab/charges", handleCharge(engine), lab)
	api.GET("/labs/:lab/payments", handlePayments(engine), lab)
	api.GET("/labs/:lab/payments/:id", handlePayment(engine), lab)
	api.GET("/labs/:lab/operations", handleOperations(engine), lab)
	api.POST("/labs/:lab/operations", handleStartOperation(engine), lab, once)
	api.GET("/labs/:lab/operations/:op", handleOperation(engine), lab)
	api.POST("/labs/:lab/operations/:op/retry", handleRetry(engine), lab, once)
	api.POST("/labs/:lab/operations/:op/race", handleRace(engine), lab, once)
	api.POST("/labs/:lab/reset", handleReset(engine), lab)
}
