package web_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"idemlab/sim"
)

// The lab goes home as a CSV ledger, a JSON history and a Markdown report,
// each the same as what the API and the page say.
func TestExports(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	api := s.newLab(`{"protection":"none","key_strategy":"uuid"}`)
	page := "/labs/" + strings.TrimPrefix(api, "/api/v1/labs/")
	op := s.operation(api, `{"order_id":"order-42","amount":1500,"fate":"response-lost"}`)
	s.retry(api, op.ID, "")
	s.must(http.StatusCreated, "POST", api+"/charges", `{"order_id":"-A1","amount":7}`, "Idempotency-Key", "=cmd|x")

	r := s.must(http.StatusOK, "GET", page+"/export/ledger.csv", "")
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, r.Body)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != "id,order_id,amount,idempotency_key,created_at" {
		t.Fatalf("CSV rows %v, want a header and 3 payments", rows)
	}
	if rows[1][1] != "order-42" || rows[1][2] != "1500" || rows[3][1] != "'-A1" || rows[3][3] != "'=cmd|x" {
		t.Errorf("CSV: %v (oldest first; formula-like cells quoted)", rows)
	}
	if !strings.Contains(r.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("CSV is not a download: %v", r.Header)
	}

	r = s.must(http.StatusOK, "GET", page+"/export/history.json", "")
	var h struct {
		Settings   sim.Settings    `json:"settings"`
		Operations []sim.Operation `json:"operations"`
		Payments   int64           `json:"payments"`
		Total      int64           `json:"total"`
	}
	if err := json.Unmarshal(r.Body, &h); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if len(h.Operations) != 1 || len(h.Operations[0].Attempts) != 2 || h.Payments != 3 || h.Total != 3007 || h.Settings.KeyStrategy != sim.KeyUUID {
		t.Errorf("history: %+v", h)
	}

	en := string(s.must(http.StatusOK, "GET", page+"/export/report.md?lang=en", "").Body)
	ru := string(s.must(http.StatusOK, "GET", page+"/export/report.md?lang=ru", "").Body)
	for _, want := range []string{"Charge `order-42` ₽1,500 (key strategy `uuid`)", "3 charges, ₽3,007 in all.", "Attempt 2", "✗ No."} {
		if !strings.Contains(en, want) {
			t.Errorf("English report lacks %q:\n%s", want, en)
		}
	}
	for _, want := range []string{"Списание 1\u00a0500\u00a0₽ за заказ `order-42`", "Всего 3 списания на сумму 3\u00a0007\u00a0₽.", "Попытка 2", "✗ Нет."} {
		if !strings.Contains(ru, want) {
			t.Errorf("Russian report lacks %q:\n%s", want, ru)
		}
	}
	s.must(http.StatusNotFound, "GET", "/labs/AAAAAAAAAAAAAAAAAAAAAA/export/ledger.csv", "")
}

// The Markdown report writes what people typed (keys, order ids) in code
// spans that hold it whatever it is: a key that starts with a backtick, or
// has backticks inside, or spaces at both ends, stays in its span, and no
// HTML of it reaches a Markdown viewer.
func TestReportKeepsTypedTextInCodeSpans(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	api := s.newLab(`{"protection":"none"}`)
	page := "/labs/" + strings.TrimPrefix(api, "/api/v1/labs/")
	keys := []string{"`<img src=x onerror=alert(1)>", "a``b`", " both ends ", "``", "x_y_"}
	for i, k := range keys {
		s.must(http.StatusCreated, "POST", api+"/charges", fmt.Sprintf(`{"order_id":"_o-%d_","amount":7}`, i), "Idempotency-Key", `"`+k+`"`)
	}
	s.operation(api, `{"order_id":"_order_","amount":1500}`)
	s.must(http.StatusOK, "PATCH", api+"/settings", `{"key_strategy":"natural"}`)
	s.operation(api, `{"order_id":"_order_","amount":1500}`) // its attempt shows its key, the order id
	for _, lang := range []string{"en", "ru"} {
		report := string(s.must(http.StatusOK, "GET", page+"/export/report.md?lang="+lang, "").Body)
		var spans []string
		for line := range strings.Lines(report) {
			inside, outside := codeSpans(line)
			spans = append(spans, inside...)
			if c := unescaped(outside, "<>`_&"); c != 0 {
				t.Errorf("%s: %q outside a code span, unescaped, in %q", lang, c, line)
			}
		}
		for i, k := range keys {
			for _, want := range []string{k, fmt.Sprintf("_o-%d_", i)} {
				if !slices.Contains(spans, want) {
					t.Errorf("%s: no code span holds %q:\n%s", lang, want, report)
				}
			}
		}
		if !slices.Contains(spans, "_order_") {
			t.Errorf("%s: the operation's order id is not in a code span:\n%s", lang, report)
		}
	}
}

// unescaped returns the first of chars that stands in s without a
// backslash before it (CommonMark 2.4), or 0.
func unescaped(s, chars string) byte {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case strings.IndexByte(chars, s[i]) >= 0:
			return s[i]
		}
	}
	return 0
}

// codeSpans reads a line as CommonMark does (6.1, code spans): the spans'
// contents, and the text outside them.
func codeSpans(line string) (inside []string, outside string) {
	run := func(i int) int {
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		return n
	}
	var out strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			out.WriteByte(line[i])
			i++
			continue
		}
		n := run(i)
		end := -1
		for j := i + n; j < len(line); {
			if m := run(j); m == n {
				end = j
				break
			} else if m > 0 {
				j += m
			} else {
				j++
			}
		}
		if end < 0 { // no closing run: the backticks are text
			out.WriteString(line[i : i+n])
			i += n
			continue
		}
		c := line[i+n : end]
		if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "" {
			c = c[1 : len(c)-1]
		}
		inside = append(inside, c)
		i = end + n
	}
	return inside, out.String()
}
