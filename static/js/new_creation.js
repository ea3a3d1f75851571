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
  var summary = form.querySelector("[data-file-summary]");
  var clientErrors = form.querySelector("[data-client-errors]");
  var modelSelect = form.querySelector("select[name=model]");
  var demoNote = form.querySelector("[data-role=demo-note]");
  function limit(name) { return zone ? parseInt(zone.getAttribute(name), 10) || 0 : 0; }
  var maxBytes = limit("data-max-file-bytes");
  var maxFiles = limit("data-max-files");
  var maxTotal = limit("data-max-total-bytes");
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

  // The same rules the server applies (creations/runs/inputs.py), checked before anything is sent:
  // a refused upload would cost the whole upload, and the browser cannot give the files back after it.
  function problem(file, index, files) {
    var dot = file.name.lastIndexOf(".");
    var ext = dot >= 0 ? file.name.slice(dot).toLowerCase() : "";
    if (accepted.length && accepted.indexOf(ext) === -1) return "this type of file is not accepted";
    if (maxBytes && file.size > maxBytes) return "too large (at most " + humanSize(maxBytes) + ")";
    for (var i = 0; i < index; i++) {
      if (files[i].name === file.name) return "another file has this name: remove one, or rename it";
    }
    return "";
  }

  function overallProblems(files) {
    var said = [];
    var total = 0;
    files.forEach(function (file) { total += file.size; });
    if (maxFiles && files.length > maxFiles) said.push("Attach at most " + maxFiles + " files (" + files.length + " chosen).");
    if (maxTotal && total > maxTotal) said.push("The files are too large together: at most " + humanSize(maxTotal) + " (" + humanSize(total) + " chosen).");
    return said;
  }

  function fileProblems() {
    if (!fileInput) return [];
    var files = Array.prototype.slice.call(fileInput.files);
    var said = [];
    files.forEach(function (file, index) {
      var issue = problem(file, index, files);
      if (issue) said.push(file.name + ": " + issue + ".");
    });
    return said.concat(overallProblems(files));
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
    var files = Array.prototype.slice.call(fileInput.files);
    files.forEach(function (file, index) {
      var item = document.createElement("li");
      var name = document.createElement("span");
      name.textContent = file.name + " · " + humanSize(file.size);
      item.appendChild(name);
      var issue = problem(file, index, files);
      if (issue) item.setAttribute("data-file-problem", issue);
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
    if (summary) {
      var overall = overallProblems(files);
      summary.textContent = overall.join(" ");
      summary.hidden = overall.length === 0;
    }
  }

  // Start sends nothing the server would refuse for a reason known here: the chosen files stay
  // chosen while the person fixes it (a refused form comes back without them: browsers do not keep them).
  form.addEventListener("submit", function (event) {
    var said = [];
    var first = null;
    if (brief && !brief.value.trim()) {
      said.push("Write a brief: say what you would like made.");
      first = first || brief;
    }
    form.querySelectorAll("input[type=number]").forEach(function (field) {
      if (!field.checkValidity()) {
        var label = form.querySelector("label[for='" + field.id + "']");
        said.push((label ? label.textContent.trim() : field.name) + ": " + field.validationMessage);
        first = first || field;
      }
    });
    var files = fileProblems();
    if (files.length) {
      said = said.concat(files);
      first = first || fileInput;
    }
    if (!clientErrors) return;
    clientErrors.textContent = "";
    clientErrors.hidden = said.length === 0;
    if (!said.length) return;
    event.preventDefault();
    var head = document.createElement("p");
    head.textContent = "Nothing was sent yet. Your files stay chosen while you fix this:";
    clientErrors.appendChild(head);
    var items = document.createElement("ul");
    said.forEach(function (text) {
      var item = document.createElement("li");
      item.textContent = text;
      items.appendChild(item);
    });
    clientErrors.appendChild(items);
    if (first) first.focus();
  });

  function showDemoNote() {
    if (modelSelect && demoNote) demoNote.hidden = modelSelect.value !== "";
  }
  if (modelSelect) {
    modelSelect.addEventListener("change", showDemoNote);
    showDemoNote();
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
