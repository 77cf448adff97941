// Package web is the lab's HTTP face, on Echo: the JSON API, the dashboard
// (pages, their forms, their live streams) and the problem pages. It
// decodes and checks requests, asks the rooms of the house, maps their
// errors to problems in one place, and renders views.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"idemlab/sim/house"
)

// Server is the lab's HTTP handler: the JSON API, the pages and their live
// streams. Close ends the streams (before the HTTP server shuts down: they
// never go idle on their own).
type Server struct {
	http.Handler
	hub *Hub
}

// Close ends every live stream and stops the hub.
func (s *Server) Close() { s.hub.Close() }

// DefaultMaxStreams is how many live streams the server keeps open at most.
const DefaultMaxStreams = 1000

// Options are the server's limits; a zero field takes its default.
type Options struct {
	// MaxStreams is how many live streams (open pages) the server keeps at
	// once, across all labs; past it a new stream is refused with 503.
	MaxStreams int
	// MaxRequests is how many requests the server works on at once, live
	// streams apart; past it a request is refused with 503.
	MaxRequests int

	// The limits per client address; a zero Rate takes the default, a
	// negative Burst turns the limit off. The defaults suit a classroom,
	// which often shares one public address (the school's NAT): when the
	// teacher says "everyone, open a new lab" or shares a scenario link, 30
	// people get through at once.
	//
	// LabRate limits creating labs (POST /labs, POST /api/v1/labs): 30 at
	// once, then one every 2 s.
	LabRate Rate
	// CompareRate limits side-by-side runs (POST /compare, POST
	// /api/v1/compare), 39 labs each: 3 at once, then one every 10 s.
	CompareRate Rate
	// ScenarioRate limits opening scenario links (GET /s/{code}), each a
	// lab rebuilt: 30 at once, then one every 2 s.
	ScenarioRate Rate
	// VoteRate limits a class's votes per client address (1,000 at once,
	// then 200 a second: a class's phones behind one NAT address), and
	// VoterRate per device (its voter cookie: 10 at once, then 30 a
	// minute).
	VoteRate, VoterRate Rate
	// JoinMissRate limits join codes that name no class, per client
	// address: 600 at once, then one a second.
	JoinMissRate Rate

	// TrustProxy lists the reverse proxies whose Forwarded and
	// X-Forwarded-For headers name the client (-trust-proxy); by default
	// none, and the client's address is the connection's. Every limit per
	// client address goes by it.
	TrustProxy Proxies
}

// NewServer returns the lab's HTTP handler over the house's rooms.
func NewServer(h *house.House, logger *slog.Logger, opts Options) *Server {
	files, err := embeddedAssets()
	if err != nil { // the files are embedded: only a broken build gets here
		panic("web: static files: " + err.Error())
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	limits := routeLimits{
		labs:      newLimiter("lab-rate", "new labs", opts.LabRate.orDefault(Rate{Every: 2 * time.Second, Burst: 30}), h.Clock.Now).middleware,
		compares:  newLimiter("compare-rate", "comparisons", opts.CompareRate.orDefault(Rate{Every: 10 * time.Second, Burst: 3}), h.Clock.Now).middleware,
		scenarios: newLimiter("scenario-rate", "scenario links opened", opts.ScenarioRate.orDefault(Rate{Every: 2 * time.Second, Burst: 30}), h.Clock.Now).middleware,
		// A class's phones share one address behind the school's NAT:
		// the address's limit fits three hundred of them; each device
		// has its own.
		votes:  newLimiter("vote-rate", "votes", opts.VoteRate.orDefault(Rate{Every: 5 * time.Millisecond, Burst: 1000}), h.Clock.Now).middleware,
		voters: newLimiter("voter-rate", "votes", opts.VoterRate.orDefault(Rate{Every: 2 * time.Second, Burst: 10}), h.Clock.Now),
		// A class that ends sends each of its phones away once; guessing
		// codes one after another goes at one a second.
		joinMisses: newLimiter("join-misses", "unknown join codes", opts.JoinMissRate.orDefault(Rate{Every: time.Second, Burst: 600}), h.Clock.Now),
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The client's address is the connection's: X-Forwarded-For and
	// X-Real-IP are the client's to write, so a limit per address would
	// not hold if they were believed; only a listed proxy's are.
	e.IPExtractor = opts.TrustProxy.extractor()
	e.HTTPErrorHandler = handleError(func(c echo.Context, err error) {
		logger.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	})
	if logger.Enabled(context.Background(), slog.LevelDebug) { // -v: every request, at a cost
		e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
			LogMethod: true, LogURIPath: true, LogStatus: true, LogLatency: true,
			LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
				logger.Debug("request", "method", v.Method, "path", v.URIPath, "status", v.Status, "latency", v.Latency)
				return nil
			},
		}))
	}
	e.Use(prebuilt(middleware.Recover(), withClient, secureHeaders, middleware.GzipWithConfig(middleware.GzipConfig{
		MinLength: 1400, // smaller than a packet: compressing costs more than it saves
		// A page is drawn for each request: level 2 compresses a lab page
		// to 9.6 KB in two thirds of level 6's time (8.9 KB).
		Level: 2,
		// Pages only: the API's answers are small, the SSE streams flush
		// as they go, and the static files are gzipped once, at start.
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return strings.HasPrefix(p, "/api/") || strings.HasSuffix(p, "/events") || strings.HasPrefix(p, "/static/")
		},
	}), limitBody, files.withAssets, sameOrigin(http.NewCrossOriginProtection()), capRequests(opts.MaxRequests)))
	hub := NewHub(h, logger, opts.MaxStreams)
	addRoutes(e, h, hub, limits, files, logger)
	return &Server{Handler: e, hub: hub}
}

// secureHeaders sets the headers every answer carries: a strict
// Content-Security-Policy (no inline script or style) and the usual others.
// The API's answers (JSON, /api/) carry those that mean something to a
// response no browser renders as a page: a policy that allows nothing,
// nosniff, and no framing. A page shown for an API address (an error
// page, errorPage) takes the pages' set.
func secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.HasPrefix(c.Request().URL.Path, "/api/") {
			setHeaders(c.Response().Header(), apiHeaders[:])
		} else {
			setHeaders(c.Response().Header(), pageHeaders[:])
		}
		return next(c)
	}
}

// header is a header's canonical name and its one value, made once, not
// for each request.
type header struct {
	name  string
	value []string
}

// setHeaders sets hs in h. The values are shared, never written to: Set
// or Add on one makes a new slice.
func setHeaders(h http.Header, hs []header) {
	for _, kv := range hs {
		h[kv.name] = kv.value
	}
}

var apiHeaders = [...]header{
	{"Content-Security-Policy", []string{"default-src 'none'; frame-ancestors 'none'"}},
	{"X-Content-Type-Options", []string{"nosniff"}},
	{"X-Frame-Options", []string{"DENY"}},
}

// pageHeaders go with every page and every other answer.
var pageHeaders = [...]header{
	{"Content-Security-Policy", []string{"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"}},
	{"X-Content-Type-Options", []string{"nosniff"}},
	{"X-Frame-Options", []string{"DENY"}},
	{"Referrer-Policy", []string{"same-origin"}},
	{"Cross-Origin-Opener-Policy", []string{"same-origin"}},
	{"Permissions-Policy", []string{"camera=(), microphone=(), geolocation=()"}},
}
