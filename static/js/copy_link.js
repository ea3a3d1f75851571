// A "Copy" button beside a read-only link: data-copy names the input whose value it copies.
// Shown only when the script runs; without it the link is still there to select by hand.
(function () {
  "use strict";
  function say(button, text) {
    var status = button.closest(".field") && button.closest(".field").querySelector("[data-copy-status]");
    if (status) status.textContent = text;
  }
  function copy(button) {
    var input = document.getElementById(button.getAttribute("data-copy"));
    if (!input) return;
    input.select();
    var done = function () { button.textContent = "Copied"; say(button, "The link is on your clipboard."); };
    var fallback = function () {
      // Older browsers, or a page not served over HTTPS: the selection is copied instead.
      var copied = false;
      try { copied = document.execCommand("copy"); } catch (e) { copied = false; }
      if (copied) done(); else say(button, "Copying was refused: the link is selected, press Ctrl+C (⌘C) to copy it.");
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(input.value).then(done, fallback);
    } else {
      fallback();
    }
  }
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { copy(button); });
  });
})();
