// Zoom for a PDF read on its page (templates/creations/_pdf_pages.html): the buttons set the pages'
// width as a share of the scrolling box (100% fits the width), and show once this script runs.
(function () {
  "use strict";
  var STEPS = [50, 75, 100, 125, 150, 200, 300];

  function showToolbars(root) {
    root.querySelectorAll("[data-pdf-toolbar]").forEach(function (toolbar) { toolbar.hidden = false; });
  }

  function zoom(reader, direction) {
    var pages = reader.querySelector("[data-pdf-pages]");
    var current = Number(reader.dataset.zoom || 100);
    var index = STEPS.indexOf(current);
    var next = direction === 0 ? 100 : STEPS[Math.min(STEPS.length - 1, Math.max(0, index + direction))];
    reader.dataset.zoom = String(next);
    pages.style.setProperty("--pdf-zoom", String(next / 100));
    reader.querySelector("[data-pdf-zoom-level]").textContent = next + "%";
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-pdf-zoom]");
    if (!button) { return; }
    zoom(button.closest("[data-pdf-reader]"), Number(button.dataset.pdfZoom));
  });
  document.addEventListener("DOMContentLoaded", function () { showToolbars(document); });
  document.addEventListener("htmx:load", function (event) { showToolbars(event.target); });
})();
