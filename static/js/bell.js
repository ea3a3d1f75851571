/* The bell in the header keeps its unread count current without a reload: it asks the API's count
 * every data-poll-seconds while the tab is in view (never while it is hidden, and at once when it
 * comes back), and a polite live region says a new notification aloud. Without this script the
 * count is the one the page was rendered with. */
(function () {
  "use strict";
  var bell = document.querySelector("[data-role=bell]");
  var news = document.querySelector("[data-role=bell-news]");
  if (!bell || !window.fetch) return;
  var url = bell.getAttribute("data-count-url");
  var every = Math.max(1, Number(bell.getAttribute("data-poll-seconds")) || 30) * 1000;
  var shown = Number(bell.getAttribute("data-unread")) || 0;
  var timer = null;
  var signedOut = false;

  function say(unread) {
    return unread === 1 ? "1 unread notification" : unread + " unread notifications";
  }

  function show(unread) {
    if (unread === shown) return;
    var more = unread > shown;
    shown = unread;
    bell.setAttribute("data-unread", String(unread));
    bell.classList.toggle("unread", unread > 0);
    bell.setAttribute("aria-label", unread ? "Notifications: " + unread + " unread" : "Notifications");
    var count = bell.querySelector("[data-role=bell-count]");
    if (unread && !count) {
      count = document.createElement("span");
      count.className = "bell-count";
      count.setAttribute("data-role", "bell-count");
      bell.appendChild(document.createTextNode(" "));
      bell.appendChild(count);
    }
    if (count && unread) count.textContent = String(unread);
    if (count && !unread) count.remove();
    // Read elsewhere (another tab) is not news; a new one is.
    if (news && more) news.textContent = say(unread);
  }

  function stop() {
    if (timer !== null) window.clearInterval(timer);
    timer = null;
  }

  function ask() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.status === 401 || response.status === 403) {
          signedOut = true; // signed out in another tab: nothing more to count
          stop();
          return null;
        }
        return response.ok ? response.json() : null;
      })
      .then(function (body) {
        if (body && typeof body.unread === "number") show(body.unread);
      })
      .catch(function () {}); // offline for a moment: the next tick asks again
  }

  function start() {
    if (timer === null && !signedOut) timer = window.setInterval(ask, every);
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      stop();
    } else if (!signedOut) {
      ask();
      start();
    }
  });
  if (!document.hidden) start();
})();
