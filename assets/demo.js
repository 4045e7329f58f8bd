/* One-click demos from the landing page: a card opens a page at "?demo=<name>"
   and this script plays that demo's steps there, as a presenter would: press a
   preset, tick or untick choices, press Run. The steps come from the page
   itself (the shell's [data-demos] element, written from
   components/pages/home/layout.py's DEMOS); each step waits for its element
   and for the page's callbacks to settle before the next. */
(function () {
  "use strict";
  var handled = null;

  function sleep(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }

  async function element(selector, timeout) {
    var end = Date.now() + timeout;
    while (Date.now() < end) {
      var found = document.querySelector(selector);
      if (found && !found.disabled) { return found; }
      await sleep(150);
    }
    return null;
  }

  async function settled(timeout) {
    await sleep(400);
    var end = Date.now() + timeout;
    while (Date.now() < end && document.querySelector("[data-dash-is-loading='true']")) { await sleep(150); }
    await sleep(200);
  }

  function demos() {
    var holder = document.querySelector("[data-demos]");
    try { return holder ? JSON.parse(holder.getAttribute("data-demos")) : {}; } catch (e) { return {}; }
  }

  async function play(name) {
    var steps = demos()[name];
    if (!steps) { return; }
    await settled(20000);
    for (var i = 0; i < steps.length; i++) {
      var step = steps[i];
      var target = await element(step.selector, 30000);
      if (!target) { return; }
      if (step.checked === undefined || target.checked !== step.checked) { target.click(); }
      await settled(30000);
    }
    // The demo ran once: a reload shows its results (kept by the page) without running it again.
    window.history.replaceState(window.history.state, "", window.location.pathname);
  }

  setInterval(function () {
    var name = new URLSearchParams(window.location.search).get("demo");
    var key = name && window.location.pathname + "?" + name;
    if (key && key !== handled) { handled = key; play(name); }
    if (!name) { handled = null; }
  }, 400);
})();
