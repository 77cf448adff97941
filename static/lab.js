// Idempotency Lab: the one script of our own. htmx does the requests and
// swaps; this keeps every page's controls in step with the lab's settings,
// which arrive as a named SSE event ("settings") from any browser's change.
(function () {
  "use strict";
  var fields = {
    protection: "Protection", key_strategy: "KeyStrategy", network: "Network",
    max_attempts: "MaxAttempts", base_ms: "BaseMS", cap_ms: "CapMS", jitter: "Jitter",
    client_timeout_ms: "ClientTimeoutMS", server_delay_ms: "ServerDelayMS", check_gap_ms: "CheckGapMS",
    notify: "Notify", delivery: "Delivery", consumer_dedup: "ConsumerDedup", ack_wait_ms: "AckWaitMS",
    language: "Language", server_fault: "ServerFault", isolation: "Isolation", key_ttl_s: "KeyTTLS", lock_timeout_ms: "LockTimeoutMS"
  };
  // A change made here wins over news from the stream until the server has
  // it: an event about an older change must not undo a newer one (the form
  // posts all its fields, so an undone field would be sent back as well).
  var lastLocal = 0;
  document.addEventListener("change", function (e) {
    if (e.target.form && e.target.form.id === "settings-form") lastLocal = Date.now();
  }, true);
  function apply(s) {
    var form = document.getElementById("settings-form");
    if (!form) return;
    if (form.classList.contains("htmx-request") || Date.now() - lastLocal < 1500) return;
    Object.keys(fields).forEach(function (name) {
      var el = form.elements[name];
      var v = s[fields[name]];
      if (el && v !== undefined && String(el.value) !== String(v) && el !== document.activeElement) {
        el.value = String(v);
      }
    });
    var auto = form.elements.retry_auto;
    if (auto) auto.checked = !!s.AutoRetry;
    var pub = form.elements.publish_dedup;
    if (pub) pub.checked = !!s.PublishDedup;
  }
  // The charge form's button says what it sends: Charge, Send PUT, Send DELETE.
  document.addEventListener("change", function (e) {
    if (e.target.id !== "method") return;
    var o = e.target.selectedOptions[0], b = e.target.form && e.target.form.querySelector('[data-testid="fire-charge"]');
    if (o && b && o.dataset.button) b.textContent = o.dataset.button;
  });
  // A field of the settings form that stands elsewhere (the dock's retry
  // policy and timings) changes the form as its own fields do.
  document.addEventListener("change", function (e) {
    var t = e.target, form = t.form;
    if (form && form.id === "settings-form" && !form.contains(t)) form.dispatchEvent(new Event("change", { bubbles: true }));
  });
  // Copy buttons (shown only where the script runs): copy the field's text.
  function setupCopy() {
    document.querySelectorAll("button[data-copy]").forEach(function (b) {
      var field = document.getElementById(b.dataset.copy);
      if (!field || !navigator.clipboard) return;
      b.hidden = false;
      b.addEventListener("click", function () {
        var label = b.textContent;
        navigator.clipboard.writeText(field.value).then(function () {
          b.textContent = b.dataset.copied || label;
          setTimeout(function () { b.textContent = label; }, 2000);
        }, function () { field.select(); });
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setupCopy); else setupCopy();
  // Keyboard shortcuts: one key, when no field has the focus.
  var keys = {
    c: '[data-testid="fire-charge"]', r: '[data-testid="retry"]', w: '[data-testid="retry-without-key"]',
    g: '[data-testid="race"]', l: '[data-testid="lang"]', t: '[data-testid="large-type"]',
    n: '[data-testid="lesson-step"]',
    a: '[data-testid="step-racer"][data-key="a"]', b: '[data-testid="step-racer"][data-key="b"]',
    v: '[data-testid="step-racer"][data-key="v"]'
  };
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    var t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(t.tagName))) return;
    if (e.key === "p") {
      var toggle = document.querySelector(playing ? '[data-testid="lesson-pause"]' : '[data-testid="lesson-play"]');
      if (toggle && !toggle.disabled && toggle.offsetParent !== null) { toggle.click(); e.preventDefault(); }
      return;
    }
    if (e.key === "?") {
      var help = document.getElementById("shortcuts");
      if (help && help.togglePopover) { help.togglePopover(); e.preventDefault(); }
      return;
    }
    var sel = keys[e.key];
    var el = sel && document.querySelector(sel);
    if (el && !el.disabled) { el.click(); e.preventDefault(); }
  });
  // A class started from the share menu: the menu closes, the class shows.
  document.addEventListener("submit", function (e) {
    var menu = e.target.closest && e.target.closest("details.take-home");
    if (menu && e.target.classList.contains("class-start")) menu.open = false;
  });
  // The lesson player: Play presses Set up (when the lesson is not set up)
  // and then Step, one step at a time at the chosen speed, until the lesson
  // ends, Pause is pressed, a step does not move the lesson on (refused),
  // or, while a class runs, a step has a question for the class.
  // The server takes each step once, whoever presses it.
  var playing = false, timer = 0;
  function lessonState() {
    var el = document.getElementById("lesson-state");
    if (!el) return null;
    return { n: +el.dataset.lesson, ready: el.dataset.ready === "yes", next: +el.dataset.next, steps: +el.dataset.steps };
  }
  function player(name) { return document.querySelector('[data-testid="lesson-' + name + '"]'); }
  function setPlaying(on) {
    playing = on;
    clearTimeout(timer);
    var play = player("play"), pause = player("pause");
    if (!play || !pause) return;
    var from = on ? play : pause, to = on ? pause : play;
    to.disabled = false; // the focus follows the toggle: it is never lost to a disabled button
    if (document.activeElement === from) to.focus();
    from.disabled = true;
    var said = player("playing"), row = player("player");
    if (said) said.textContent = on ? said.dataset.on || "" : "";
    if (row) row.classList.toggle("playing", on);
  }
  var last = "", restart = false;
  function tick() {
    if (!playing) return;
    var s = lessonState();
    var now = s && JSON.stringify(s);
    if (!s || !s.n || now === last) { setPlaying(false); return; }
    if (s.ready && s.next >= s.steps && !restart) { setPlaying(false); return; }
    last = now;
    // A class runs: Play stops at each step that has a question. It asks
    // it and pauses; the teacher runs the step, then presses Play again.
    // In a browser that does not steer the class, Play plays as without one.
    var cls = document.getElementById("class-state"), steers = document.getElementById("class-steers");
    if (s.ready && !restart && cls && cls.dataset.class === "yes" && steers && steers.dataset.steers === "yes") {
      var ask = document.querySelector('[data-testid="class-ask"]');
      if (cls.dataset.question === "yes") { setPlaying(false); return; }
      if (cls.dataset.canAsk === "yes" && ask && !ask.disabled) { setPlaying(false); ask.click(); return; }
    }
    var button = player(!s.ready || restart ? "setup" : "step");
    restart = false;
    if (!button || button.disabled) { setPlaying(false); return; }
    button.click(); // its request's end schedules the next tick
  }
  document.addEventListener("htmx:finally:request", function (e) {
    if (!playing || !(e.target.closest && e.target.closest("[data-lesson-act]"))) return;
    var speed = player("speed");
    clearTimeout(timer);
    timer = setTimeout(tick, Math.max(300, +(speed && speed.value) || 1500));
  });
  document.addEventListener("click", function (e) {
    var t = e.target.closest && e.target.closest("button");
    if (!t) return;
    if (t.dataset.testid === "lesson-play") {
      var s = lessonState();
      restart = !!(s && s.ready && s.next >= s.steps); // Play at the end plays it again
      last = "";
      setPlaying(true);
      tick();
    }
    if (t.dataset.testid === "lesson-pause") setPlaying(false);
  });
  // The dock: its panels become tabs (WAI-ARIA tabs, automatic
  // activation), in a box of one size; the choice is remembered.
  function setupDock() {
    var dock = document.querySelector(".dock"), list = dock && dock.querySelector("[role=tablist]");
    var body = dock && dock.querySelector(".dock-body");
    if (!list || !body) return;
    var tabs = Array.prototype.slice.call(list.querySelectorAll("[role=tab]"));
    tabs.forEach(function (tab) {
      var panel = document.getElementById(tab.getAttribute("aria-controls"));
      if (!panel) return;
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      panel.tabIndex = 0;
    });
    function selected() {
      return tabs.filter(function (t) { return t.getAttribute("aria-selected") === "true"; })[0];
    }
    function select(tab, focus) {
      tabs.forEach(function (t) {
        var on = t === tab;
        t.setAttribute("aria-selected", on ? "true" : "false");
        t.tabIndex = on ? 0 : -1;
        var panel = document.getElementById(t.getAttribute("aria-controls"));
        if (panel) panel.hidden = !on;
      });
      try { localStorage.setItem("idemlab.tab", tab.id); } catch (err) { /* private mode */ }
      if (focus) tab.focus();
    }
    // On one screen the dock stands at the foot of the controls' column;
    // when the room left there is small, a chosen panel opens upwards over
    // the controls (the tabs stay where they are) until it is chosen again,
    // Escape is pressed or the pointer goes elsewhere.
    function raise(on) {
      if (on) dock.setAttribute("data-raised", "");
      else dock.removeAttribute("data-raised");
    }
    function cramped() {
      var rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
      var column = dock.closest(".act-column");
      return column && getComputedStyle(column).display !== "contents" && body.clientHeight < 12 * rem;
    }
    function open(tab, focus) {
      var again = tab === selected();
      select(tab, focus);
      if (dock.hasAttribute("data-raised")) { if (again) raise(false); }
      else if (cramped()) raise(true);
    }
    list.addEventListener("click", function (e) {
      var tab = e.target.closest("[role=tab]");
      if (tab) open(tab, false);
    });
    list.addEventListener("keydown", function (e) {
      var i = tabs.indexOf(document.activeElement), to = -1;
      if (i < 0) return;
      if (e.key === "ArrowRight") to = (i + 1) % tabs.length;
      else if (e.key === "ArrowLeft") to = (i - 1 + tabs.length) % tabs.length;
      else if (e.key === "Home") to = 0;
      else if (e.key === "End") to = tabs.length - 1;
      if (to >= 0) { select(tabs[to], true); e.preventDefault(); }
    });
    dock.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && dock.hasAttribute("data-raised")) {
        raise(false);
        var tab = selected();
        if (tab) tab.focus();
        e.preventDefault();
      }
    });
    document.addEventListener("pointerdown", function (e) {
      if (dock.hasAttribute("data-raised") && !dock.contains(e.target)) raise(false);
    });
    document.addEventListener("click", function (e) {
      var b = e.target.closest && e.target.closest("[data-open-tab]");
      var tab = b && document.getElementById("tab-" + b.dataset.openTab);
      if (tab) open(tab, true);
    });
    document.querySelectorAll("[data-open-tab]").forEach(function (b) { b.hidden = false; });
    var saved = null;
    try { saved = document.getElementById(localStorage.getItem("idemlab.tab") || ""); } catch (err) { /* private mode */ }
    select(tabs.indexOf(saved) >= 0 ? saved : tabs[0], false);
    list.hidden = false;
    dock.classList.add("tabbed");
  }
  // The lesson's current step stays in view in its column, whatever the
  // column's height.
  function showStep() {
    var step = document.querySelector("#lesson-state li.next"), box = step && step.closest(".lesson-story");
    if (!box || box.scrollHeight <= box.clientHeight) return;
    var a = box.getBoundingClientRect(), r = step.getBoundingClientRect();
    if (r.top < a.top) box.scrollTop += r.top - a.top - 8;
    else if (r.bottom > a.bottom) box.scrollTop += r.bottom - a.bottom + 8;
  }
  document.addEventListener("htmx:after:swap", showStep);
  document.addEventListener("htmx:sse:after:message", showStep);
  window.addEventListener("resize", showStep); // a window moved to the projector
  function showPlayer() {
    var p = player("player");
    if (p) p.hidden = false;
  }
  // A long action that leaves the page (compare runs 25 labs) says so on
  // its button, which takes no second press meanwhile; coming back to the
  // page (the browser's back-forward cache) gives the button back.
  document.addEventListener("submit", function (e) {
    var b = e.submitter;
    if (!b || !b.dataset.busy || e.defaultPrevented || e.target.hasAttribute("hx-post")) return;
    b.dataset.label = b.textContent;
    b.textContent = b.dataset.busy;
    b.setAttribute("aria-disabled", "true");
    b.setAttribute("aria-busy", "true");
    b.addEventListener("click", stop);
  });
  function stop(e) { e.preventDefault(); }
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("button[aria-busy=true][data-label]").forEach(function (b) {
      b.textContent = b.dataset.label;
      b.removeAttribute("aria-disabled");
      b.removeAttribute("aria-busy");
      b.removeEventListener("click", stop);
    });
  });
  function ready() { showPlayer(); setupDock(); showStep(); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready); else ready();
  document.addEventListener("settings", function (e) {
    try { apply(JSON.parse(e.detail.data)); } catch (err) { /* a malformed message changes nothing */ }
  });
})();
