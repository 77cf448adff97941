package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	qrcode "github.com/skip2/go-qrcode"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/class"
	"idemlab/sim/house"
	"idemlab/views"
)

// voterCookie is a phone's random id: one vote per device per question.
const voterCookie = "idemlab_voter"

// voterOf is the request's voter id, a new one (set in its cookie) when it
// has none.
func voterOf(c echo.Context) string {
	if ck, err := c.Cookie(voterCookie); err == nil && tokenLike(ck.Value) {
		return ck.Value
	}
	v := class.Token()
	c.SetCookie(&http.Cookie{Name: voterCookie, Value: v, Path: "/join/", MaxAge: int(class.Lasts.Seconds()) + 3600,
		HttpOnly: true, Secure: c.IsTLS(), SameSite: http.SameSiteLaxMode})
	return v
}

// joinCode is the join code of the path, as codes are written.
func joinCode(c echo.Context) string { return strings.ToUpper(c.Param("code")) }

// joinPage is what a phone shows of the class.
func joinPage(p class.Phone) views.JoinPage {
	out := views.JoinPage{Code: p.Code, Version: p.Version()}
	if p.Question != nil {
		out.Q = questionView(*p.Question)
		out.Q.Mine = p.Mine
		out.Version += "-" + p.Mine
	}
	return out
}

// phoneRead reads the class for the phone, or the page that says it is
// gone. A code that names no class costs its address a token of misses:
// join codes are not to be guessed one after another.
func phoneRead(h *house.House, c echo.Context, voter string, misses *limiter) (views.JoinPage, int, error) {
	p, err := phoneOf(h, c, voter, misses)
	switch {
	case sim.ErrorCode(err) == sim.ENotFound:
		return views.JoinPage{Code: sim.Clip(joinCode(c)), Gone: true}, http.StatusNotFound, nil
	case err != nil:
		return views.JoinPage{}, 0, err
	}
	return joinPage(p), http.StatusOK, nil
}

// phoneOf is the class the request's join code names, as voter sees it.
// A code that names none is a guess: it costs its address a token of
// misses, and past them the refusal is the error.
func phoneOf(h *house.House, c echo.Context, voter string, misses *limiter) (class.Phone, error) {
	p, err := h.Classes.Phone(c.Request().Context(), joinCode(c), voter)
	if sim.ErrorCode(err) == sim.ENotFound {
		if lerr := misses.take(clientOf(c), "this address"); lerr != nil {
			return p, lerr
		}
	}
	return p, err
}

// handleJoin is a student's page of a class: no account, the phone's
// language, the current question.
func handleJoin(h *house.House, misses *limiter) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		p, status, err := phoneRead(h, c, voterOf(c), misses)
		if err != nil {
			return err
		}
		return render(c, status, views.Join(p))
	}
}

// handleJoinNow answers a phone's poll: 204 while what it shows (?v=) is
// still what there is to show, so three hundred phones asking every second
// cost the database next to nothing; else the part that changed.
func handleJoinNow(h *house.House, misses *limiter) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		shown := c.QueryParam("v")
		v, err := h.Classes.PhoneVersion(c.Request().Context(), joinCode(c))
		if err == nil && strings.HasPrefix(shown, v+"-") || sim.ErrorCode(err) == sim.ENotFound && shown == "gone" {
			return c.NoContent(http.StatusNoContent)
		}
		p, status, err := phoneRead(h, c, voterOf(c), misses)
		if err != nil {
			return err
		}
		if p.Gone {
			p.Version = "gone"
		}
		return render(c, status, views.JoinNow(p))
	}
}

// handleJoinVote takes a phone's vote: JSON {"question", "choice"} from a
// program, or the page's form. A form gets the page's part back (htmx) or
// is sent back to the page (a plain post); a refusal is said on it.
func handleJoinVote(h *house.House, perDevice, misses *limiter) echo.HandlerFunc {
	return func(c echo.Context) error {
		voter := voterOf(c)
		if err := perDevice.take(voter, "this device"); err != nil {
			return err
		}
		n, choice, err := voteOf(c)
		if err == nil {
			err = h.Classes.Vote(c.Request().Context(), joinCode(c), voter, n, choice)
		}
		if isJSON(c) {
			if err != nil {
				return err
			}
			return c.JSON(http.StatusOK, map[string]any{"question": n, "choice": choice})
		}
		return votedForm(h, c, voter, err, misses)
	}
}

// voteOf reads a vote from JSON or from the form.
func voteOf(c echo.Context) (n int, choice string, err error) {
	if isJSON(c) {
		var body struct {
			Question *int   `json:"question"`
			Choice   string `json:"choice"`
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return 0, "", err
		}
		if body.Question == nil {
			return 0, "", sim.Invalid(sim.Broke("question", "class-question-n"))
		}
		return *body.Question, body.Choice, nil
	}
	n, err = strconv.Atoi(c.FormValue("question"))
	if err != nil {
		return 0, "", sim.Invalid(sim.Broke("question", "class-question-n"))
	}
	return n, c.FormValue("choice"), nil
}

func isJSON(c echo.Context) bool {
	return strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), "application/json")
}

// votedForm answers the phone page's vote: its part again, with why the
// vote was refused, if it was.
func votedForm(h *house.House, c echo.Context, voter string, voteErr error, misses *limiter) error {
	status := http.StatusOK
	var notice views.Msg
	if voteErr != nil {
		p := problemFor(voteErr)
		if p.Status >= 500 || p.said.IsZero() {
			return voteErr
		}
		status, notice = p.Status, p.said
	}
	if c.Request().Header.Get("HX-Request") != "true" && voteErr == nil {
		return c.Redirect(http.StatusSeeOther, api.JoinPath(joinCode(c)))
	}
	p, readStatus, err := phoneRead(h, c, voter, misses)
	if err != nil {
		return err
	}
	if readStatus != http.StatusOK {
		status = readStatus
	}
	p.Notice = notice
	if c.Request().Header.Get("HX-Request") == "true" {
		return render(c, status, views.JoinNow(p))
	}
	return render(c, status, views.Join(p))
}

// handleJoinQR draws the class's join address as a QR code, in SVG: drawn
// here, nothing loaded from another host. A code that names no class is a
// guess, counted as the join page counts it (misses).
func handleJoinQR(h *house.House, misses *limiter) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := phoneOf(h, c, "", misses)
		if err != nil {
			return err
		}
		q, err := qrcode.New(joinURL(p.Origin, p.Code), qrcode.Medium)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(int(time.Hour.Seconds())))
		return c.Blob(http.StatusOK, "image/svg+xml", qrSVG(q.Bitmap()))
	}
}

// qrSVG draws a QR code's modules as one path, black on white.
func qrSVG(bits [][]bool) []byte {
	var b strings.Builder
	n := len(bits)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges">`, n, n)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n)
	for y, row := range bits {
		for x, on := range row {
			if on {
				fmt.Fprintf(&b, "M%d %dh1v1h-1z", x, y)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	return []byte(b.String())
}

// handleJoinScreen is a class's join screen, for the projector: its QR
// code as large as the window allows, the address and the code in large
// type. Like the phones' page it never names the lab.
func handleJoinScreen(h *house.House, misses *limiter) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		p, err := phoneOf(h, c, "", misses)
		switch {
		case sim.ErrorCode(err) == sim.ENotFound:
			code := sim.Clip(joinCode(c))
			return render(c, http.StatusNotFound, views.JoinScreen(views.ClassView{Code: code, Screen: api.JoinScreenPath(code)}))
		case err != nil:
			return err
		}
		v := joinView(p.Origin, p.Code)
		v.On = true
		return render(c, http.StatusOK, views.JoinScreen(v))
	}
}
