// Idempotency Lab: the one script of our own. htmx does the requests and
// swaps; this keeps every page's controls in step with the lab's settings,
// which arrive as a named SSE event ("settings") from any browser's change.
(function () {
  "use strict";
  var fields = {
    protection: "Protection", key_strategy: "KeyStrategy", network: "Network",
    max_attempts: "MaxAttempts", base_ms: "BaseMS", cap_ms: "CapMS", jitter: "Jitter",
    client_timeout_ms: "ClientTimeoutMS", server_delay_ms: "ServerDelayMS", check_gap_ms: "CheckGapMS"
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
  }
  // The live stream's state, said in words (not by colour alone).
  // The words come from the element, in the page's language.
  function live(state, key) {
    var el = document.getElementById("live-status");
    if (!el || el.dataset.state === state) return;
    el.dataset.state = state;
    el.textContent = el.dataset[key] || state;
    el.hidden = false;
  }
  document.addEventListener("htmx:sse:after:message", function () { live("live", "on"); });
  document.addEventListener("htmx:sse:error", function () { live("down", "down"); });
  document.addEventListener("htmx:sse:close", function () { live("down", "closed"); });
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
    g: '[data-testid="race"]', l: '[data-testid="lang"]', t: '[data-testid="large-type"]'
  };
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    var t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(t.tagName))) return;
    if (e.key === "?") {
      var help = document.getElementById("shortcuts");
      if (help && help.togglePopover) { help.togglePopover(); e.preventDefault(); }
      return;
    }
    var sel = keys[e.key];
    var el = sel && document.querySelector(sel);
    if (el && !el.disabled) { el.click(); e.preventDefault(); }
  });
  document.addEventListener("settings", function (e) {
    try { apply(JSON.parse(e.detail.data)); } catch (err) { /* a malformed message changes nothing */ }
  });
})();
