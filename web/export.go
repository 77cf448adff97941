package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/views"
)

// exportLimit bounds what one export carries.
const exportLimit = 100_000

// reportDirectRows is how many direct charges the report lists one by one.
const reportDirectRows = 50

// handleExportCSV sends the lab's whole ledger as CSV, oldest first.
func handleExportCSV(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := h.Labs.Lab(c.Request().Context(), c.Param("lab"))
		if err != nil {
			return err
		}
		ps, err := h.Ledger.Payments(c.Request().Context(), l, exportLimit, 0)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.Write([]string{"id", "order_id", "amount", "idempotency_key", "created_at"})
		for _, p := range slices.Backward(ps) {
			key := ""
			if p.IdempotencyKey != nil {
				key = *p.IdempotencyKey
			}
			w.Write([]string{strconv.FormatInt(p.ID, 10), cell(p.OrderID), strconv.FormatInt(p.Amount, 10), cell(key), p.CreatedAt.UTC().Format(time.RFC3339Nano)})
		}
		w.Flush()
		download(c, "ledger-"+l.ID+".csv")
		return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
	}
}

// cell keeps a spreadsheet from reading a value as a formula.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func download(c echo.Context, name string) {
	c.Response().Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
}

// history is the lab's history as exported: settings and every operation
// with its attempts, oldest first.
type history struct {
	Lab        string          `json:"lab"`
	ExportedAt time.Time       `json:"exported_at"`
	Settings   sim.Settings    `json:"settings"`
	Operations []sim.Operation `json:"operations"`
	Payments   int64           `json:"payments"`
	Total      int64           `json:"total"`

	lab *labs.Lab // the lab itself, for what the report says beyond the history
}

func labHistory(c echo.Context, h *house.House) (history, error) {
	ctx := c.Request().Context()
	l, err := h.Labs.Lab(ctx, c.Param("lab"))
	if err != nil {
		return history{}, err
	}
	ops, err := h.Client.Operations(ctx, l, exportLimit)
	if err != nil {
		return history{}, err
	}
	slices.Reverse(ops)
	if ops == nil {
		ops = []sim.Operation{}
	}
	t, err := h.Ledger.Totals(ctx, l)
	if err != nil {
		return history{}, err
	}
	return history{Lab: l.ID, ExportedAt: h.Clock.Now().UTC(), Settings: l.Settings(), Operations: ops, Payments: t.Payments, Total: t.Total, lab: l}, nil
}

// handleExportJSON sends the lab's history as JSON.
func handleExportJSON(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		hist, err := labHistory(c, h)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(hist, "", "  ")
		if err != nil {
			return err
		}
		download(c, "history-"+hist.Lab+".json")
		return c.JSONBlob(http.StatusOK, b)
	}
}

// handleExportReport sends a short Markdown report of the session in the
// page's language: settings, what was done, what came of it, the checklist.
// What people typed (keys, order ids) goes in code spans that hold it
// whatever it is (md.go), so no HTML of it reaches a Markdown viewer.
func handleExportReport(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		hist, err := labHistory(c, h)
		if err != nil {
			return err
		}
		lang := views.LangOf(ctx)
		var b strings.Builder
		s := hist.Settings
		fmt.Fprintf(&b, "# %s\n\n", lang.T("report.title", mdText(hist.Lab)))
		reportSettings(&b, lang, s)
		fmt.Fprintf(&b, "\n## %s\n\n", lang.T("report.actions"))
		if len(hist.Operations) == 0 {
			fmt.Fprintf(&b, "%s\n", lang.T("log.empty"))
		}
		for i, op := range hist.Operations {
			fmt.Fprintf(&b, "%d. %s\n", i+1, lang.T("report.operation", mdCode(op.OrderID), lang.Money(op.Amount), mdCode(string(op.KeyStrategy))))
			for _, a := range op.Attempts {
				// The attempt's words are the page's; its key, made by the
				// client from the order id or digits, is escaped where it shows.
				fmt.Fprintf(&b, "   - %s\n", mdText(lang.Say(attemptText(&a))))
			}
		}
		if err := reportDirect(ctx, &b, lang, h, hist.lab); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", lang.T("report.outcome"), lang.T("report.totals", hist.Payments, lang.Plural(hist.Payments, "ledger.charges"), lang.Money(hist.Total)))
		if mb, err := h.Notify.Mailbox(ctx, hist.lab, 0); err != nil {
			return err
		} else if mb.Count > 0 || s.Notify != sim.NotifyOff {
			fmt.Fprintf(&b, "\n%s\n", lang.Say(views.M("report.emails", views.Count{N: mb.Count, Key: "mail.count"})))
			for _, d := range mb.Doubled {
				fmt.Fprintf(&b, "- %s %s\n", mdCode(d.OrderID), lang.T("mail.alert.line", d.Emails))
			}
		}
		v, err := lessonView(ctx, h, hist.lab)
		if err != nil {
			return err
		}
		if v.N != 0 {
			head, tail := v.Verdict(lang)
			fmt.Fprintf(&b, "\n**%s:** %s\n", v.Name(lang), strings.TrimSpace(head+" "+tail))
		}
		fmt.Fprintf(&b, "\n## %s\n\n", lang.T("check.title"))
		for _, ch := range sim.Checklist(s) {
			answer := lang.T("check.no")
			if ch.Yes {
				answer = lang.T("check.yes")
			}
			fmt.Fprintf(&b, "- %s **%s** %s\n", lang.T("check.q."+ch.Question), answer, lang.T("check.why."+ch.Why))
		}
		download(c, "report-"+hist.Lab+".md")
		return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(b.String()))
	}
}

// reportSettings writes the report's table of the lab's settings.
func reportSettings(b *strings.Builder, lang views.Lang, s sim.Settings) {
	fmt.Fprintf(b, "## %s\n\n", lang.T("report.settings"))
	fmt.Fprintf(b, "| | |\n|---|---|\n")
	for _, row := range [][2]string{
		{"protection", string(s.Protection)}, {"key_strategy", string(s.KeyStrategy)}, {"network", string(s.Network)},
		{"retry", fmt.Sprintf("%s, %d, %d–%d ms, %s", s.Retry.Mode, s.Retry.MaxAttempts, s.Retry.BaseMS, s.Retry.CapMS, s.Retry.Jitter)},
		{"client_timeout_ms", strconv.Itoa(s.ClientTimeoutMS)}, {"server_delay_ms", strconv.Itoa(s.ServerDelayMS)},
		{"check_gap_ms", strconv.Itoa(s.CheckGapMS)}, {"isolation", string(s.Isolation)}, {"key_ttl_s", strconv.Itoa(s.KeyTTLS)},
		{"lock_timeout_ms", strconv.Itoa(s.LockTimeoutMS)}, {"server_fault", string(s.ServerFault)}, {"seed", strconv.FormatInt(s.Seed, 10)},
		{"notify", string(s.Notify)}, {"delivery", string(s.Delivery)}, {"consumer_dedup", string(s.ConsumerDedup)},
		{"publish_dedup", strconv.FormatBool(s.PublishDedup)}, {"ack_wait_ms", strconv.Itoa(s.AckWaitMS)},
	} {
		fmt.Fprintf(b, "| %s | %s |\n", mdCode(row[0]), mdCode(row[1]))
	}
}

// reportDirect lists the charges sent straight to the API, the first of
// them one by one: their order ids and keys as they were typed.
func reportDirect(ctx context.Context, b *strings.Builder, lang views.Lang, h *house.House, l *labs.Lab) error {
	direct, n, err := h.Ledger.DirectCharges(ctx, l, reportDirectRows)
	if err != nil || n == 0 {
		return err
	}
	fmt.Fprintf(b, "\n%s\n\n", lang.T("report.direct", n))
	for _, p := range direct {
		key := lang.T("log.no-key")
		if p.IdempotencyKey != nil {
			key = lang.T("log.key", mdCode(*p.IdempotencyKey))
		}
		fmt.Fprintf(b, "- %s\n", lang.T("report.direct.row", p.ID, mdCode(p.OrderID), lang.Money(p.Amount), key))
	}
	if more := n - int64(len(direct)); more > 0 {
		fmt.Fprintf(b, "- %s\n", lang.T("report.direct.more", more))
	}
	return nil
}
