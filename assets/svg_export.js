/* Adds export buttons beside Plotly's own PNG camera on every chart's mode bar:
   "SVG", drawn by Plotly in the browser (Plotly.downloadImage; works offline),
   and "PDF", drawn on the server (POST /export/figure.pdf with the figure as
   shown; see components/services/image_export.py). Plotly rebuilds mode bars when a
   figure updates, so an observer re-adds the buttons whenever a mode bar
   lacks them. */
(function () {
  "use strict";
  var SVG_CLASS = "schedscope-svg-export";
  var PDF_CLASS = "schedscope-pdf-export";

  function fileName(plot) {
    var title = plot.layout && plot.layout.title;
    var text = (title && (title.text || title)) || "chart";
    return String(text).replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "chart";
  }

  function prefix() {
    var config = document.getElementById("_dash-config");
    try {
      return (config && JSON.parse(config.textContent).requests_pathname_prefix) || "/";
    } catch (ignored) {
      return "/";
    }
  }

  function save(blob, name) {
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.appendChild(link);
    link.click();
    setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
  }

  function exportOnServer(plot, button) {
    var name = fileName(plot);
    var full = plot._fullLayout || {};
    var body = JSON.stringify({figure: {data: plot.data, layout: plot.layout}, filename: name,
                               width: full.width, height: full.height});
    button.textContent = "PDF…";
    button.classList.remove("export-failed");
    fetch(prefix() + "export/figure.pdf", {method: "POST", headers: {"Content-Type": "application/json"}, body: body})
      .then(function (response) {
        if (!response.ok) { return response.text().then(function (text) { throw new Error(text); }); }
        return response.blob();
      })
      .then(function (blob) {
        save(blob, name + ".pdf");
        button.setAttribute("data-title", "Download plot as PDF (drawn on the server)");
      })
      .catch(function (error) {
        button.classList.add("export-failed");
        button.setAttribute("data-title", "PDF export failed: " + error.message);
      })
      .finally(function () { button.textContent = "PDF"; });
  }

  function makeButton(className, label, title, onClick) {
    var button = document.createElement("a");
    button.className = "modebar-btn " + className;
    button.setAttribute("rel", "tooltip");
    button.setAttribute("data-title", title);
    button.textContent = label;
    button.addEventListener("click", function () { onClick(button); });
    return button;
  }

  function addButtons(modebar) {
    if (modebar.querySelector("." + SVG_CLASS)) { return; }
    var plot = modebar.closest(".js-plotly-plot");
    if (!plot || !window.Plotly) { return; }
    var group = document.createElement("div");
    group.className = "modebar-group schedscope-export-group";
    group.appendChild(makeButton(SVG_CLASS, "SVG", "Download plot as SVG", function () {
      window.Plotly.downloadImage(plot, {format: "svg", filename: fileName(plot)});
    }));
    group.appendChild(makeButton(PDF_CLASS, "PDF", "Download plot as PDF (drawn on the server)", function (button) {
      exportOnServer(plot, button);
    }));
    modebar.insertBefore(group, modebar.firstChild);
  }

  function scan() {
    document.querySelectorAll(".js-plotly-plot .modebar").forEach(addButtons);
  }

  new MutationObserver(scan).observe(document.documentElement, {childList: true, subtree: true});
})();
