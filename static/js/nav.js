/* The main menu folds behind its Menu button on narrow screens (static/css/app.css says how narrow).
 * Without this script the button stays hidden and the menu is simply shown, wrapped. */
(function () {
  "use strict";
  var toggle = document.querySelector(".nav-toggle");
  var nav = toggle && document.getElementById(toggle.getAttribute("aria-controls"));
  if (!nav) return;

  function setOpen(open) {
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }

  toggle.hidden = false;
  document.documentElement.classList.add("nav-folds");
  toggle.addEventListener("click", function () {
    setOpen(toggle.getAttribute("aria-expanded") !== "true");
  });
  // Escape closes an open menu and gives focus back to its button, as a disclosure should.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || toggle.getAttribute("aria-expanded") !== "true") return;
    setOpen(false);
    toggle.focus();
  });
})();
