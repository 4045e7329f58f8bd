/* Adds an "SVG" button beside Plotly's own PNG camera on every chart's mode bar.
   Plotly rebuilds mode bars when a figure updates, so an observer re-adds the
   button whenever a mode bar lacks it. The image is drawn by Plotly in the
   browser (Plotly.downloadImage), so it works offline. */
(function () {
  "use strict";
  var BUTTON_CLASS = "schedscope-svg-export";

  function fileName(plot) {
    var title = plot.layout && plot.layout.title;
    var text = (title && (title.text || title)) || "chart";
    return String(text).replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "chart";
  }

  function addButton(modebar) {
    if (modebar.querySelector("." + BUTTON_CLASS)) { return; }
    var plot = modebar.closest(".js-plotly-plot");
    if (!plot || !window.Plotly) { return; }
    var group = document.createElement("div");
    group.className = "modebar-group";
    var button = document.createElement("a");
    button.className = "modebar-btn " + BUTTON_CLASS;
    button.setAttribute("rel", "tooltip");
    button.setAttribute("data-title", "Download plot as SVG");
    button.textContent = "SVG";
    button.addEventListener("click", function () {
      window.Plotly.downloadImage(plot, {format: "svg", filename: fileName(plot)});
    });
    group.appendChild(button);
    modebar.insertBefore(group, modebar.firstChild);
  }

  function scan() {
    document.querySelectorAll(".js-plotly-plot .modebar").forEach(addButton);
  }

  new MutationObserver(scan).observe(document.documentElement, {childList: true, subtree: true});
})();
