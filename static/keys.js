// Idempotency Lab: the keys' panel. The time each key has left counts down
// in the page between the server's renders.
(function () {
  "use strict";
  // Each cell holds the milliseconds left when it was drawn, and is said
  // again in the units of the page's language (the table's data-units), as
  // the server says it.
  function left(ms, u) {
    var s = Math.max(0, Math.ceil(ms / 1000)), d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    var nb = "\u00a0"; // a number and its unit stay on one line
    if (d > 0) return d + nb + u[0] + " " + h + nb + u[1];
    if (h > 0) return h + nb + u[1] + " " + m + nb + u[2];
    if (m > 0) return m + nb + u[2] + " " + (s % 60) + nb + u[3];
    return s + nb + u[3];
  }
  function countDown() {
    var now = Date.now();
    document.querySelectorAll("[data-ttl-ms]").forEach(function (td) {
      var table = td.closest("table");
      var u = ((table && table.dataset.units) || "d h min s").split(" ");
      if (!td.dataset.drawn) td.dataset.drawn = String(now);
      var ms = Number(td.dataset.ttlMs) - (now - Number(td.dataset.drawn));
      var text = ms > 0 ? left(ms, u) : (table && table.dataset.expired) || left(0, u);
      if (td.textContent !== text) td.textContent = text;
    });
  }
  setInterval(countDown, 500);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", countDown); else countDown();
})();
