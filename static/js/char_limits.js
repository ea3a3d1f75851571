/* Fields with a length limit (data-max-chars) count their characters as they are typed and say
 * when they are over. Nothing is cut (no maxlength: a browser drops silently what a paste has
 * beyond it), and a form with a field over its limit is not sent: the field says why. The server
 * refuses the same, with the text kept, when this script does not run. */
(function () {
  "use strict";

  // As the server counts: code points, and a line end as one character (sent as CR LF, read as LF).
  function length(text) {
    return Array.from(text.replace(/\r\n/g, "\n")).length;
  }

  function number(n) {
    return n.toLocaleString("en-US");
  }

  document.querySelectorAll("[data-max-chars]").forEach(function (field) {
    var limit = parseInt(field.getAttribute("data-max-chars"), 10);
    if (!limit) return;
    var counter = document.createElement("span");
    counter.className = "char-count";
    counter.id = field.id + "-count";
    field.insertAdjacentElement("afterend", counter);
    var described = field.getAttribute("aria-describedby");
    field.setAttribute("aria-describedby", described ? described + " " + counter.id : counter.id);
    var markedInvalid = false;

    function update() {
      var used = length(field.value);
      var over = used - limit;
      var text = number(used) + " / " + number(limit) + " characters";
      if (over > 0) {
        text += ": " + number(over) + " too many. Shorten it to start.";
        field.setAttribute("aria-invalid", "true");
        markedInvalid = true;
      } else if (markedInvalid) {  // an error the server found stays marked
        field.removeAttribute("aria-invalid");
        markedInvalid = false;
      }
      counter.textContent = text;
      counter.classList.toggle("over", over > 0);
      return over > 0;
    }

    field.addEventListener("input", function () {
      counter.removeAttribute("role");
      update();
    });
    update();
    if (field.form) {
      field.form.addEventListener("submit", function (event) {
        if (!update()) return;
        event.preventDefault();
        counter.setAttribute("role", "alert");  // said now, by a screen reader too
        field.focus();
      });
    }
  });
})();
