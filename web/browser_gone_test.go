package web_test

import (
	"net/http"
	"testing"
	"time"
)

// A lab deleted under its open page: the page says so in its language, in
// its notice and its live status, and stops trying to reconnect.
func TestBrowserDeletedLabIsSaid(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	ru := l.twin("?lang=ru")
	for _, tab := range []*labTab{l, ru} {
		tab.waitJS(`document.querySelector("#live-status").dataset.state === "live" && !!document.querySelector("#live")._htmx?.sse`, "the stream to be up")
	}
	l.s.must(http.StatusNoContent, "DELETE", l.prefix, "")
	for _, tc := range []struct {
		tab          *labTab
		notice, live string
	}{{l, "This lab was deleted", "The lab was deleted"}, {ru, "Эта лаборатория удалена", "Лаборатория удалена"}} {
		tc.tab.waitJS(`(document.querySelector('[data-testid="lab-gone"]')?.textContent ?? "").includes("`+tc.notice+`") &&
			document.querySelector("#live-status").textContent.includes("`+tc.live+`")`, "the page to say its lab was deleted")
		tc.tab.waitJS(`!document.querySelector("#live")._htmx?.sse`, "the stream to close for good")
		if !tc.tab.holds(`document.querySelector("#live-status").dataset.state === "gone" && !document.querySelector("#live")._htmx?.sse`, 1500*time.Millisecond) {
			t.Errorf("the page went back from saying its lab was deleted:\n%s", tc.tab.state())
		}
	}
}
