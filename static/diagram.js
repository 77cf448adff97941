// Idempotency Lab: the sequence diagram's scrolling. On one screen a
// drawing too tall to fit readably scrolls in its own box under its lane
// heads (diagram.css): the newest attempt is kept in view after every live
// update, until the reader scrolls; then the place they scrolled to is
// kept, until a new attempt or a new operation is drawn.
(function () {
  "use strict";
  var drawn = "", held = false, heldTop = 0;
  function drawBox(el) { return el && el.closest && el.closest(".diagram-draw"); }
  function showNewest() {
    var fig = document.getElementById("sequence-diagram"), box = fig && fig.querySelector(".diagram-draw");
    if (!box) return;
    var rows = fig.querySelectorAll("[data-testid=attempt]"), last = rows[rows.length - 1];
    var mark = fig.getAttribute("data-op") + "/" + (last ? last.getAttribute("data-n") : "");
    if (mark !== drawn) { drawn = mark; held = false; }
    if (held) { box.scrollTop = heldTop; return; }
    if (!last || box.scrollHeight <= box.clientHeight) return;
    var heads = fig.querySelector(".diagram-heads"), a = box.getBoundingClientRect(), r = last.getBoundingClientRect();
    var top = a.top + (heads ? heads.getBoundingClientRect().height : 0);
    var up = r.top - top - 4, down = r.bottom - a.bottom + 8; // to its top under the heads, to its bottom
    box.scrollTop += up < 0 ? up : Math.min(Math.max(0, down), up);
  }
  ["wheel", "touchstart", "pointerdown", "keydown"].forEach(function (type) {
    document.addEventListener(type, function (e) { var b = drawBox(e.target); if (b) { held = true; heldTop = b.scrollTop; } }, { passive: true });
  });
  document.addEventListener("scroll", function (e) { if (held && drawBox(e.target) === e.target) heldTop = e.target.scrollTop; }, true);
  document.addEventListener("htmx:after:swap", showNewest);
  document.addEventListener("htmx:sse:after:message", showNewest);
  window.addEventListener("resize", showNewest); // a window moved to the projector
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", showNewest); else showNewest();
})();
