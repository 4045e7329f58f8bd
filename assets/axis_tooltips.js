/* Chart axis titles that name a metric show its definition on hover (an SVG <title>, the browser's tooltip).
 *
 * The definitions come from the metric catalogue (components/figures/catalogue.py), put in the page as
 * JSON in the data-tooltips attribute of hidden elements (components/widgets/run_panel.axis_tooltips):
 * lower-case title -> "Label: definition; direction". A title matches with or without its "(unit)".
 * Plotly redraws its SVG often; a debounced observer re-applies the titles after each redraw.
 */
(function () {
    "use strict";
    const SVG = "http://www.w3.org/2000/svg";
    const AXIS_TITLE = /^[xy]\d*title$/;

    function definitions() {
        const merged = {};
        document.querySelectorAll("[data-tooltips]").forEach(function (element) {
            try { Object.assign(merged, JSON.parse(element.getAttribute("data-tooltips"))); } catch (e) { /* skip */ }
        });
        return merged;
    }

    function apply() {
        const tips = definitions();
        document.querySelectorAll(".js-plotly-plot .infolayer text").forEach(function (text) {
            if (!AXIS_TITLE.test(text.getAttribute("class") || "")) { return; }
            const name = (text.textContent || "").trim().toLowerCase();
            const tip = tips[name] || tips[name.replace(/\s*\([^)]*\)\s*$/, "")];
            if (!tip) { return; }
            let title = text.querySelector("title");
            if (title && title.textContent === tip) { return; }
            if (!title) { title = document.createElementNS(SVG, "title"); text.appendChild(title); }
            title.textContent = tip;
            text.style.pointerEvents = "all";   // Plotly's info layer ignores the pointer; the title needs it
            text.style.cursor = "help";
            text.classList.add("has-definition");
        });
    }

    let pending = null;
    function later() { clearTimeout(pending); pending = setTimeout(apply, 150); }
    function start() { new MutationObserver(later).observe(document.body, {childList: true, subtree: true}); later(); }
    if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
