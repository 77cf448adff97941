package web

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"idemlab/sim/house"
	"idemlab/views"
)

// handleClassReport is the class's take-home: every question, what the
// step did, how the class voted and the share that predicted it; as
// Markdown (in the page's language) or CSV (one row per choice).
func handleClassReport(h *house.House, asCSV bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		cl, qs, err := h.Classes.Report(ctx, l)
		if err != nil {
			return err
		}
		lang := views.LangOf(ctx)
		var rows []*views.QuestionView
		for _, q := range qs {
			rows = append(rows, questionView(q))
		}
		name := "class-" + cl.Code
		if asCSV {
			download(c, name+".csv")
			return c.Blob(http.StatusOK, "text/csv; charset=utf-8", classCSV(lang, rows))
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# %s: %s\n\n", lang.T("class.report.title"), mdCode(cl.Code))
		fmt.Fprintf(&b, "%s\n", lang.T("class.report.asked", len(rows)))
		for _, q := range rows {
			fmt.Fprintf(&b, "\n## %s\n\n%s %s\n\n", lang.T("class.question.n", q.N), mdText(lang.Say(q.About)), mdText(lang.Say(q.Text)))
			for _, ch := range q.Choices {
				mark := ""
				if q.IsRight(ch) {
					mark = " ✓ " + lang.T("class.right")
				}
				fmt.Fprintf(&b, "- %s. %s: %d (%d%%)%s\n", ch.Letter, mdText(lang.Say(ch.Label)), ch.Count, ch.Percent, mark)
			}
			if q.Revealed() {
				fmt.Fprintf(&b, "\n%s\n", mdText(lang.T("class.seen", lang.Say(q.Seen))))
				if q.Right != "" {
					fmt.Fprintf(&b, "\n%s\n", lang.T("class.share", q.Share))
				}
			}
		}
		download(c, name+".md")
		return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(b.String()))
	}
}

// classCSV is one row per choice of each question.
func classCSV(lang views.Lang, qs []*views.QuestionView) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"question", "step", "asked", "state", "choice", "label", "votes", "percent", "right", "share_right", "seen"})
	for _, q := range qs {
		for _, ch := range q.Choices {
			w.Write([]string{strconv.Itoa(q.N), cell(lang.Say(q.About)), cell(lang.Say(q.Text)), q.State, ch.Code, cell(lang.Say(ch.Label)),
				strconv.Itoa(ch.Count), strconv.Itoa(ch.Percent), strconv.FormatBool(q.IsRight(ch)), strconv.Itoa(q.Share), cell(lang.Say(q.Seen))})
		}
	}
	w.Flush()
	return buf.Bytes()
}
