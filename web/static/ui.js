// The UI's one script, loaded on every page; every page works without it.
//
// Copy buttons: <button class="copy" data-copy="ID"> copies the value of
// the input with that id.
//
// Line comments: on a review, the line numbers of the diff are buttons;
// pressing one (click, Enter or Space) moves the comment form under that
// line with its file, line and side filled in, and focuses it. Cancel or
// Escape puts it back.
(function () {
  "use strict";
  function copy(b) {
    var src = document.getElementById(b.dataset.copy);
    if (!src) return;
    var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(src.value).then(done, function () { src.select(); });
    } else {
      src.select();
      try { document.execCommand("copy"); done(); } catch (err) { /* selected: the user can copy */ }
    }
  }

  var form, home, row, opener;
  function putBack() {
    if (!form || !row) return;
    home.parentNode.insertBefore(form, home.nextSibling);
    row.remove();
    row = null;
    form.elements.path.value = "";
    form.elements.line.value = "";
    form.elements.side.value = "head";
    document.getElementById("comment-target").hidden = true;
    document.getElementById("comment-cancel").hidden = true;
    if (opener) opener.focus();
  }
  function lineComment(b) {
    form = form || document.getElementById("comment-form");
    if (!form) return;
    if (!home) {
      home = document.createComment("comment form");
      form.parentNode.insertBefore(home, form);
    }
    if (row) row.remove();
    opener = b;
    var tr = b.closest("tr");
    row = document.createElement("tr");
    row.className = "composer";
    var td = document.createElement("td");
    td.colSpan = 3;
    row.appendChild(td);
    tr.parentNode.insertBefore(row, tr.nextSibling);
    td.appendChild(form);
    var path = b.dataset.path, line = b.dataset.line, side = b.dataset.side;
    var sel = form.elements.path;
    sel.value = path;
    form.elements.line.value = line;
    form.elements.side.value = side;
    var target = document.getElementById("comment-target");
    target.textContent = "Commenting on " + path + ", " + (side === "base" ? "old" : "new") + " line " + line;
    target.hidden = false;
    document.getElementById("comment-cancel").hidden = false;
    form.elements.body.focus();
  }
  document.addEventListener("click", function (e) {
    var b = e.target.closest("button");
    if (!b) return;
    if (b.classList.contains("copy")) copy(b);
    else if (b.classList.contains("lnc")) lineComment(b);
    else if (b.id === "comment-cancel") putBack();
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && row && form.contains(document.activeElement)) putBack();
  });
})();
