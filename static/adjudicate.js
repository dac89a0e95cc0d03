/* The adjudication queue by keyboard: j/k move between documents, a grade's key chooses that
   grade and moves to the reason, Enter in the reason submits the decision (a plain form).
   Loading the page marks the first document without scrolling, so that the message of the
   last decision (at the top) stays in view. */
(function () {
  "use strict";
  var items = Array.prototype.slice.call(document.querySelectorAll(".queue-item"));
  if (!items.length) return;
  var current = 0;
  function select(i, scroll) {
    current = Math.max(0, Math.min(items.length - 1, i));
    items.forEach(function (item, n) { item.classList.toggle("current", n === current); });
    items[current].focus({preventScroll: true});
    if (scroll !== false) items[current].scrollIntoView({block: "nearest"});
  }
  items.forEach(function (item, n) {
    item.addEventListener("click", function () { current = n; select(n); });
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select") {
      if (event.key === "Escape") { event.target.blur(); select(current); }
      return;
    }
    if (event.key === "j") { event.preventDefault(); select(current + 1); return; }
    if (event.key === "k") { event.preventDefault(); select(current - 1); return; }
    var grade = items[current].querySelector("select[name=grade]");
    if (!grade) return;
    var option = Array.prototype.find.call(grade.options, function (o) {
      return o.dataset.key === event.key;
    });
    if (!option) return;
    event.preventDefault();
    grade.value = option.value;
    items[current].querySelector("input[name=reason]").focus();
  });
  select(0, false);
})();
