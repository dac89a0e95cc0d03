/* The passages page: a screen of short documents of one topic, each graded by keys. j/k (or
   ↓/↑) move the focus (outlined), a grade's key judges the passage in focus and moves to the
   next one, n/p (→/←) change screens, z undoes, t opens the next topic. The passages come in
   the assessor's seeded order, without runs or ranks; text is inserted as text only.
   Saving and timing are judging-common.js's. */
(function () {
  "use strict";
  var root = document.getElementById("passages-page");
  if (!root || !window.Judging) return;
  var J = window.Judging, $ = J.$, uuid = J.uuid;
  var API = root.dataset.api;
  var PER_SCREEN = parseInt(root.dataset.perScreen, 10) || 10;
  var grades = JSON.parse($("grade-keys").textContent);
  var gradeByKey = {}, labelOf = {};
  grades.forEach(function (g) { gradeByKey[g.key] = g.value; labelOf[g.value] = g.label; });
  var state = null, screen = 0, focus = 0, shown = [];  // shown: this screen's documents
  var timer = J.timer(root);
  var queue = J.queue({root: root, key: "wb-pending-" + root.dataset.assignment,
                       onSaved: saved, onRejected: rejected});
  var guidelinesBox = J.guidelines();

  function local(j) { return j && {grade: j.grade, cannot_judge: j.cannot_judge, saved: true}; }
  function judged() { return state.judgements.filter(Boolean).length; }
  function items() { return Array.prototype.slice.call($("passages").children); }

  function render() {
    items().forEach(function (item, i) {
      var doc = shown[i], j = state.judgements[doc.position];
      item.classList.toggle("current", i === focus);
      Array.prototype.forEach.call(item.querySelectorAll(".grade"), function (button) {
        var on = !!j && j.grade === parseInt(button.dataset.grade, 10);
        button.classList.toggle("selected", on);
        button.setAttribute("aria-pressed", on ? "true" : "false");
      });
      item.querySelector(".passage-state").textContent = !j ? "not judged yet" :
        (j.grade === null ? "cannot judge" : labelOf[j.grade]) + (j.saved ? " · saved ✓" : " · saving…");
    });
    J.progress(judged(), state.total);
    if (shown[focus]) $("pos").textContent = shown[focus].position + 1;
  }
  function show(n, at) {
    // screen n (its passages fetched in one call), the focus on passage `at` of it
    var last = Math.max(0, Math.ceil(state.total / PER_SCREEN) - 1);
    n = Math.max(0, Math.min(last, n));
    return J.api(API + "/documents?start=" + n * PER_SCREEN + "&count=" + PER_SCREEN)
      .then(function (r) {
        if (!r.ok) throw new Error("the server answered " + r.status);
        return r.json();
      }).then(function (data) {
        screen = n; shown = data.documents;
        var list = $("passages"), template = $("passage-template");
        list.textContent = "";
        list.start = n * PER_SCREEN + 1;
        shown.forEach(function (doc, i) {
          var item = template.content.firstElementChild.cloneNode(true);
          item.querySelector(".passage-text").textContent = doc.missing ?
            "(The text of this passage was not loaded into the campaign.)" :
            (doc.title ? doc.title + "\n" : "") + doc.text;
          item.setAttribute("aria-label", "Passage " + (doc.position + 1));
          item.querySelector(".passage-grades").setAttribute("aria-label", "Grade passage " + (doc.position + 1));
          Array.prototype.forEach.call(item.querySelectorAll(".grade"), function (button) {
            button.addEventListener("click", function () {
              setFocus(i); judge(parseInt(button.dataset.grade, 10));
            });
          });
          item.addEventListener("focusin", function () { if (focus !== i) setFocus(i, true); });
          list.appendChild(item);
        });
        setFocus(Math.max(0, Math.min(shown.length - 1, at || 0)));
        window.scrollTo({top: 0, behavior: "instant"});
      }).catch(function (error) {
        $("action-status").textContent = "Could not load the passages (" + error.message + ").";
      });
  }
  function setFocus(i, fromFocusEvent) {
    focus = Math.max(0, Math.min(shown.length - 1, i));
    if (shown[focus]) timer.moveTo(shown[focus].position);
    render();
    var item = items()[focus];
    if (item && !fromFocusEvent) {
      item.focus({preventScroll: true});
      item.scrollIntoView({block: "nearest"});
    }
  }
  function judge(grade) {
    var doc = shown[focus];
    if (!doc) return;
    var entry = {
      position: doc.position, previous: state.judgements[doc.position],
      url: API + "/judgements",
      body: {docno: doc.docno, grade: grade, cannot_judge: null, comment: "",
             time_spent_ms: timer.take(doc.position), client_id: uuid()}
    };
    state.judgements[doc.position] = {grade: grade, client_id: entry.body.client_id, saved: false};
    queue.add(entry);
    if (focus < shown.length - 1) setFocus(focus + 1); else render();
  }
  function saved(entry, body) {
    if (entry.undo) { undone(body.undone); return; }
    var current = state.judgements[entry.position];
    if (current && current.client_id === entry.body.client_id) current.saved = true;
    render();
  }
  function rejected(entry, message) {
    $("action-status").textContent = message;
    if (!entry.undo) {
      var current = state.judgements[entry.position];
      if (current && current.client_id === entry.body.client_id) {
        state.judgements[entry.position] = entry.previous || null;
      }
    }
    render();
  }
  function undo() { J.undo(queue, API + "/undo"); }
  function undone(result) {
    state.judgements[result.position] = local(result.judgement);
    var now = result.judgement;
    $("action-status").textContent = "Undone: passage " + (result.position + 1) + " is " +
      (!now ? "not judged any more" : (now.grade === null ? "cannot judge" : labelOf[now.grade]) + " again") + ".";
    var n = Math.floor(result.position / PER_SCREEN);
    if (n === screen) setFocus(result.position - n * PER_SCREEN);
    else show(n, result.position - n * PER_SCREEN);
  }
  function nextTopic() { J.nextTopic(root); }
  $("prev-screen").addEventListener("click", function () { show(screen - 1); });
  $("next-screen").addEventListener("click", function () { show(screen + 1); });
  $("undo-button").addEventListener("click", function () { if (state) undo(); });

  document.addEventListener("keydown", function (event) {
    if (guidelinesBox && guidelinesBox.open) return;
    if (!state || event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "textarea" || tag === "input" || tag === "select") return;
    var key = event.key;
    if (Object.prototype.hasOwnProperty.call(gradeByKey, key)) {
      event.preventDefault(); judge(gradeByKey[key]);
    } else if (key === "j" || key === "ArrowDown") {
      event.preventDefault(); setFocus(focus + 1);
    } else if (key === "k" || key === "ArrowUp") {
      event.preventDefault(); setFocus(focus - 1);
    } else if (key === "n" || key === "ArrowRight") {
      event.preventDefault(); show(screen + 1);
    } else if (key === "p" || key === "ArrowLeft") {
      event.preventDefault(); show(screen - 1);
    } else if (key === "z") {
      event.preventDefault(); undo();
    } else if (key === "t") {
      event.preventDefault(); nextTopic();
    }
  });

  J.api(API).then(function (r) { return r.json(); }).then(function (data) {
    state = data;
    state.judgements = data.judgements.map(local);
    queue.entries.forEach(function (entry) {   // unsent judgements from before a reload
      if (!entry.undo) state.judgements[entry.position] = {grade: entry.body.grade, client_id: entry.body.client_id, saved: false};
    });
    queue.renderStatus();
    if (!state.total) { $("action-status").textContent = "This topic has no passages to judge."; J.progress(0, 0); return; }
    var first = state.position;
    show(Math.floor(first / PER_SCREEN), first % PER_SCREEN);
    queue.pump();
  }).catch(function () {
    $("save-status").textContent = "Could not load this topic; reload the page.";
  });
})();
