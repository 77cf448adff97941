// Idempotency Lab: the page's live stream. It says the stream's state in
// words, says a click the server never got beside the control used, and
// keeps the newest regions the page has seen, whichever way they came.
(function () {
  "use strict";
  // The live stream's state, said in words (not by colour alone).
  // The words come from the element, in the page's language.
  function live(state, key) {
    var el = document.getElementById("live-status");
    if (!el || el.dataset.state === state || el.dataset.state === "gone") return;
    el.dataset.state = state;
    el.textContent = el.dataset[key] || state;
    el.hidden = false;
  }
  // A click the server never got (it is down, the network is cut) is said
  // at the control that was used, in the page's language, not lost.
  document.addEventListener("htmx:error", function (e) {
    var form = e.target && e.target.closest ? e.target.closest("form") : null;
    var status = document.getElementById("live-status");
    var el = document.getElementById((form && form.dataset.notice) || "notice");
    if (!el || !status) return;
    var p = el.id === "notice" ? document.createElement("p") : el;
    p.textContent = status.dataset.offline || "";
    p.dataset.state = "offline";
    if (p !== el) { el.replaceChildren(p); }
    live("down", "down"); // the stream may not know yet: the click does
  });
  // The lab's regions come from two ways, the stream and a form's own
  // answer, and the later to arrive may have been read first: regions read
  // before the ones the page shows are not swapped in (what the answer says
  // of the form itself, its notices, and of this browser, whether it steers
  // the class, still is).
  var notice = /(^|-)notice$/; // a notice's id: the page writes notices itself
  function own(id) { return notice.test(id) || id === "class-steers"; }
  // A form's answer swaps the regions it carries: what the page shows of
  // each is then the answer's copy (took, below), so the stream's next
  // drawing of a region is swapped in only where it differs from it, and
  // the browser that acted does not lay the whole lab out twice.
  document.addEventListener("htmx:before:swap", function (e) {
    var tasks = e.detail && e.detail.tasks, shown = document.getElementById("lab-read");
    if (!tasks) return;
    var answer = !fromStream(e);
    var mark = shown && tasks.find(function (t) { return t.type === "partial" && t.target === shown; });
    var read = mark && mark.fragment.firstElementChild;
    if (read && +read.dataset.read < +shown.dataset.read) {
      for (var i = tasks.length - 1; i >= 0; i--) {
        var t = tasks[i];
        if (t.type !== "partial" || (t.target && own(t.target.id))) continue;
        t = tasks.splice(i, 1)[0];
        if (!answer) forget(t); // the stream's copy, noted as it came, was not swapped in
      }
    }
    if (answer) keep(tasks, e.detail.ctx && e.detail.ctx.text);
  });
  // keep notes the regions an answer swaps in as the page's copies.
  function keep(tasks, text) {
    var sent = new Map();
    if (typeof text === "string") text.replace(partial, function (html, id) { sent.set(id, html); return ""; });
    tasks.forEach(function (t) {
      var id = t.type === "partial" && t.target && t.target.id, html = id && sent.get(id);
      if (html && !always(id, html)) took.set(id, html);
      else if (id) took.delete(id);
    });
  }
  // A live update carries every region of the lab. A region whose HTML is
  // the one last swapped in, by the stream or a form's answer, is left as
  // it stands: the browser does not parse and lay out again what did not
  // change (a class's phones, the laptop at a projector). What tells the
  // region apart from that copy makes it whole again the next time: a
  // message refused as older, a new connection.
  // Notices, which the page writes itself, and the keys' countdowns, which
  // start again from each drawing, are always swapped.
  var took = new Map(); // a region's id → the partial last swapped there
  var partial = /<hx-partial hx-target="#([^"]+)"[^>]*>[\s\S]*?<\/hx-partial>/g;
  function always(id, html) { return notice.test(id) || html.indexOf("data-ttl-ms") >= 0; }
  document.addEventListener("htmx:sse:before:message", function (e) {
    var m = e.detail && e.detail.message;
    if (!m || m.event || typeof m.data !== "string") return;
    var kept = [], rest = m.data.replace(partial, function (html, id) {
      if (always(id, html) || took.get(id) !== html) {
        took.set(id, html);
        kept.push(html);
      }
      return "";
    });
    if (rest.trim() !== "") { took.clear(); return; } // not regions alone: swapped as it came
    m.data = kept.join("");
  });
  document.addEventListener("htmx:sse:after:connection", function () { took.clear(); });
  function fromStream(e) {
    var src = e.detail && e.detail.ctx && e.detail.ctx.sourceElement;
    return !!(src && src.hasAttribute && src.hasAttribute("hx-sse:connect"));
  }
  function forget(task) {
    if (task.type === "partial" && task.target && task.target.id) took.delete(task.target.id);
  }
  // The class this browser steers (#class-steers, from the page or its
  // own form's answer) ended, and another browser started one: its code
  // is another, and this page no longer shows the class's controls.
  document.addEventListener("htmx:after:swap", function () {
    var mark = document.getElementById("class-steers"), cls = document.getElementById("class-state");
    if (mark && cls && mark.dataset.steers === "yes" && cls.dataset.code !== mark.dataset.code) mark.dataset.steers = "no";
  });
  document.addEventListener("htmx:sse:after:message", function () { live("live", "on"); });
  document.addEventListener("htmx:sse:error", function () { live("down", "down"); });
  document.addEventListener("htmx:sse:close", function () { live("down", "closed"); });
  // The lab was removed: the stream has said so in the page's notice, and
  // ends for good (hx-sse:close="gone"), not to be tried again.
  document.addEventListener("gone", function () { live("gone", "gone"); });
})();
