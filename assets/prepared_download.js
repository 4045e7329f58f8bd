/* A file prepared on the server for download (components/services/prepared.py): when an export callback
   gives the page's hidden anchor a new address, click it once, so the browser downloads the file as if the
   button had sent it. Returns the anchor's title (the address last fetched) and the message beside it: empty, or,
   when the server could not save the file (an address starting "not-saved:"), why. */
window.dash_clientside = Object.assign({}, window.dash_clientside, {
  schedscope: Object.assign({}, (window.dash_clientside || {}).schedscope, {
    downloadPrepared: function (href) {
      if (!href) { return [window.dash_clientside.no_update, window.dash_clientside.no_update]; }
      if (href.indexOf("not-saved:") === 0) { return [window.dash_clientside.no_update, href.slice(10)]; }
      var anchor = document.createElement("a");
      anchor.href = href;
      anchor.download = "";
      document.body.appendChild(anchor);
      anchor.click();
      anchor.remove();
      return [href, ""];
    }
  })
});
