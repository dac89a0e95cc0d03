/* The pairwise page: two documents of a topic side by side; the assessor says which is
   better for the topic (1 or a: left, 3 or l: right, 2 or =: about the same) and the next
   unjudged pair follows; n/p move between pairs, z undoes, t opens the next topic. Pairs
   and sides come in the assessor's seeded order, without runs or ranks; text is inserted as
   text only. Saving and timing are judging-common.js's. */
(function () {
  "use strict";
  var root = document.getElementById("pairs-page");
  if (!root || !window.Judging) return;
  var J = window.Judging, $ = J.$, uuid = J.uuid;
  var API = root.dataset.api;
  var KEYS = {"1": "left", "a": "left", "2": "equal", "=": "equal", "3": "right", "l": "right"};
  var WORDS = {left: "left is better", right: "right is better", equal: "about the same"};
  var pairs = [], position = 0, loaded = {};
  var timer = J.timer(root);
  var queue = J.queue({root: root, key: "wb-pending-pairs-" + root.dataset.assignment,
                       onSaved: saved, onRejected: rejected});
  var guidelinesBox = J.guidelines();

  function judged() { return pairs.filter(function (p) { return p.choice; }).length; }
  function render() {
    var pair = pairs[position];
    J.progress(judged(), pairs.length);
    if (!pair) return;
    $("pos").textContent = position + 1;
    Array.prototype.forEach.call(document.querySelectorAll("#choices .grade"), function (button) {
      var on = pair.choice === button.dataset.choice;
      button.classList.toggle("selected", on);
      button.setAttribute("aria-pressed", on ? "true" : "false");
    });
    $("pair-state").textContent = !pair.choice ? "Not judged yet" :
      "Judged: " + WORDS[pair.choice] + (pair.saved === false ? " · saving…" : " · saved ✓");
  }
  function go(p) {
    if (!pairs.length) return;
    position = Math.max(0, Math.min(pairs.length - 1, p));
    timer.moveTo(position);
    history.replaceState(null, "", "#" + (position + 1));
    render();
    var at = position;
    var fetched = loaded[at] ? Promise.resolve(loaded[at]) :
      J.api(API + "/pairs/" + at).then(function (r) {
        if (!r.ok) throw new Error("the server answered " + r.status);
        return r.json();
      });
    fetched.then(function (data) {
      loaded[at] = data;
      if (at !== position) return;
      ["left", "right"].forEach(function (side) {
        var doc = data[side];
        $(side + "-docno").textContent = doc.docno;
        $(side + "-title").textContent = doc.title || "(untitled)";
        $(side + "-text").textContent = doc.missing ?
          "(The text of this document was not loaded into the campaign.)" : doc.text;
        $(side + "-side").scrollTop = 0;
      });
    }).catch(function (error) {
      $("action-status").textContent = "Could not load the pair (" + error.message + ").";
    });
  }
  function nextUnjudged(from) {
    for (var i = 1; i <= pairs.length; i++) {
      var p = (from + i) % pairs.length;
      if (!pairs[p].choice) return p;
    }
    return -1;
  }
  function choose(choice) {
    var pair = pairs[position];
    if (!pair) return;
    var entry = {
      position: position, previous: {choice: pair.choice, saved: pair.saved},
      url: API + "/preferences",
      body: {left: pair.left, right: pair.right, choice: choice, comment: "",
             time_spent_ms: timer.take(position), client_id: uuid()}
    };
    pair.choice = choice; pair.saved = false; pair.client_id = entry.body.client_id;
    queue.add(entry);
    var next = nextUnjudged(position);
    if (next >= 0) go(next); else render();
  }
  function saved(entry, body) {
    if (entry.undo) { undone(body.undone); return; }
    var pair = pairs[entry.position];
    if (pair && pair.client_id === entry.body.client_id) pair.saved = true;
    render();
  }
  function rejected(entry, message) {
    $("action-status").textContent = message;
    var pair = pairs[entry.position];
    if (!entry.undo && pair && pair.client_id === entry.body.client_id) {
      pair.choice = entry.previous.choice; pair.saved = entry.previous.saved;
    }
    render();
  }
  function undo() { J.undo(queue, API + "/preferences/undo"); }
  function undone(result) {
    var pair = pairs[result.position];
    pair.choice = result.choice; pair.saved = true;
    $("action-status").textContent = "Undone: pair " + (result.position + 1) + " is " +
      (result.choice ? WORDS[result.choice] + " again" : "not judged any more") + ".";
    go(result.position);
  }
  function nextTopic() { J.nextTopic(root); }
  Array.prototype.forEach.call(document.querySelectorAll("#choices .grade"), function (button) {
    button.addEventListener("click", function () { choose(button.dataset.choice); });
  });
  $("prev-button").addEventListener("click", function () { go(position - 1); });
  $("next-button").addEventListener("click", function () { go(position + 1); });
  $("undo-button").addEventListener("click", undo);

  document.addEventListener("keydown", function (event) {
    if (guidelinesBox && guidelinesBox.open) return;
    if (!pairs.length || event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "textarea" || tag === "input" || tag === "select") return;
    var key = event.key;
    if (Object.prototype.hasOwnProperty.call(KEYS, key)) {
      event.preventDefault(); choose(KEYS[key]);
    } else if (key === "n" || key === "ArrowRight") {
      event.preventDefault(); go(position + 1);
    } else if (key === "p" || key === "ArrowLeft") {
      event.preventDefault(); go(position - 1);
    } else if (key === "z") {
      event.preventDefault(); undo();
    } else if (key === "t") {
      event.preventDefault(); nextTopic();
    }
  });

  J.api(API + "/pairs").then(function (r) { return r.json(); }).then(function (data) {
    pairs = data.pairs;
    queue.entries.forEach(function (entry) {   // unsent answers from before a reload
      if (!entry.undo && pairs[entry.position]) {
        pairs[entry.position].choice = entry.body.choice;
        pairs[entry.position].saved = false;
        pairs[entry.position].client_id = entry.body.client_id;
      }
    });
    queue.renderStatus();
    if (!pairs.length) { $("action-status").textContent = "This topic has no pairs to judge."; J.progress(0, 0); return; }
    var fromHash = parseInt((location.hash || "").slice(1), 10) - 1;
    var first = nextUnjudged(pairs.length - 1);
    go(fromHash >= 0 && fromHash < pairs.length ? fromHash : (first >= 0 ? first : 0));
    queue.pump();
  }).catch(function () {
    $("save-status").textContent = "Could not load this topic; reload the page.";
  });
})();
