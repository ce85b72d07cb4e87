// Copy buttons: <button class="copy" data-copy="ID"> copies the value of
// the input with that id. Reading pages work without this script.
document.addEventListener("click", function (e) {
  var b = e.target.closest("button.copy");
  if (!b) return;
  var src = document.getElementById(b.dataset.copy);
  if (!src) return;
  var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 1500); };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(src.value).then(done, function () { src.select(); });
  } else {
    src.select();
    try { document.execCommand("copy"); done(); } catch (err) { /* selected: the user can copy */ }
  }
});
