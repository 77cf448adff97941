// Idempotency Lab: the sequence diagram's scrolling. On one screen a
// drawing too tall to fit readably scrolls in its own box (diagram.css):
// its newest part (the queue's, when the drawing has one, else the newest
// attempt) is kept in view after every live update and whenever its box
// changes size (an alert or a panel beside it grew), until the reader
// scrolls; then the place they scrolled to is kept, until the drawing
// grows. A stepped race's statements head the drawing: it stays at its top.
(function () {
  "use strict";
  var drawn = "", held = false, heldTop = 0, seen = null; // seen: the box last looked at
  var sized = window.ResizeObserver ? new ResizeObserver(function () { showNewest(); }) : null;
  function drawBox(el) { return el && el.closest && el.closest(".diagram-draw"); }
  function showNewest() {
    var fig = document.getElementById("sequence-diagram"), box = fig && fig.querySelector(".diagram-draw");
    if (!box || fig.querySelector("[data-testid=diagram-steps]")) return;
    var mark = fig.getAttribute("data-op") + "/" + fig.getAttribute("data-h");
    if (mark !== drawn) { drawn = mark; held = false; }
    var fresh = box !== seen; // a live update drew it anew, scrolled to its top
    seen = box;
    if (fresh && sized) { sized.disconnect(); sized.observe(box); }
    if (held) { if (fresh) box.scrollTop = heldTop; return; }
    var rows = fig.querySelectorAll("[data-testid=attempt]"), queue = fig.querySelector(".sd-queue");
    var target = queue || rows[rows.length - 1];
    if (!target || box.scrollHeight <= box.clientHeight) return;
    // over an attempt the lane heads stay in view; the queue's part has its own
    var heads = queue ? null : fig.querySelector(".diagram-heads");
    var a = box.getBoundingClientRect(), r = target.getBoundingClientRect();
    var top = a.top + (heads ? heads.getBoundingClientRect().height : 0);
    var up = r.top - top - (heads ? 4 : 0), down = r.bottom - a.bottom + 8; // to its top (under the heads), to its bottom
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
