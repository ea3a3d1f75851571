/* New creation page: starter briefs fill the form; files can be dropped on the drop zone.
 * Everything works without JavaScript too (starter links reload with ?starter=kind). */
(function () {
  "use strict";
  var form = document.getElementById("creation-form");
  if (!form) return;
  var brief = form.querySelector("textarea[name=brief]");
  var title = form.querySelector("input[name=title]");
  var starterInput = form.querySelector("input[name=starter]");
  var fileInput = form.querySelector("input[type=file][name=uploads]");
  var zone = form.querySelector("[data-dropzone]");
  var list = form.querySelector("[data-file-list]");
  var maxBytes = zone ? parseInt(zone.getAttribute("data-max-file-bytes"), 10) : 0;
  var accepted = (fileInput && fileInput.getAttribute("accept") || "").toLowerCase().split(",").filter(Boolean);

  document.querySelectorAll("a[data-starter]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      brief.value = link.getAttribute("data-brief");
      if (title) title.value = link.getAttribute("data-title");
      if (starterInput) starterInput.value = link.getAttribute("data-starter");
      document.querySelectorAll("a[data-starter]").forEach(function (other) {
        other.removeAttribute("aria-current");
      });
      link.setAttribute("aria-current", "true");
      brief.focus();
    });
  });

  function humanSize(bytes) {
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / 1024 / 1024).toFixed(1) + " MB";
  }

  function problem(file) {
    var dot = file.name.lastIndexOf(".");
    var ext = dot >= 0 ? file.name.slice(dot).toLowerCase() : "";
    if (accepted.length && accepted.indexOf(ext) === -1) return "this type of file is not accepted";
    if (maxBytes && file.size > maxBytes) return "too large (at most " + humanSize(maxBytes) + ")";
    return "";
  }

  function setFiles(files) {
    var transfer = new DataTransfer();
    files.forEach(function (file) { transfer.items.add(file); });
    fileInput.files = transfer.files;
    render();
  }

  function render() {
    if (!list) return;
    list.textContent = "";
    Array.prototype.forEach.call(fileInput.files, function (file, index) {
      var item = document.createElement("li");
      var name = document.createElement("span");
      name.textContent = file.name + " · " + humanSize(file.size);
      item.appendChild(name);
      var issue = problem(file);
      if (issue) {
        var warn = document.createElement("span");
        warn.className = "file-problem";
        warn.textContent = " — " + issue;
        item.appendChild(warn);
      }
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "link";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove " + file.name);
      remove.addEventListener("click", function () {
        setFiles(Array.prototype.filter.call(fileInput.files, function (_f, i) { return i !== index; }));
      });
      item.appendChild(remove);
      list.appendChild(item);
    });
  }

  // Attached artifacts: removing one drops its hidden field, without leaving the page (and the
  // files chosen so far); without JavaScript the link reloads the form without it.
  form.querySelectorAll("[data-remove-attachment]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      var item = link.closest("[data-attachment]");
      var box = link.closest("[data-attachments]");
      if (item) item.remove();
      if (box && !box.querySelector("[data-attachment]")) box.remove();
    });
  });

  if (fileInput && zone) {
    fileInput.addEventListener("change", render);
    ["dragenter", "dragover"].forEach(function (type) {
      zone.addEventListener(type, function (event) {
        event.preventDefault();
        zone.classList.add("dragging");
      });
    });
    ["dragleave", "drop"].forEach(function (type) {
      zone.addEventListener(type, function () { zone.classList.remove("dragging"); });
    });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      var dropped = Array.prototype.slice.call(event.dataTransfer.files || []);
      setFiles(Array.prototype.slice.call(fileInput.files).concat(dropped));
    });
    render();
  }
})();
