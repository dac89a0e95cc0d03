/* The judging page: keyboard judging, query-term highlighting, evidence passages, undo and
   the next topic by key. Saving (with retries, through a lost session) and idle-aware timing
   are judging-common.js's. Plain JavaScript, no build step. Document text is only ever
   inserted as text nodes (never as HTML). */
(function () {
  "use strict";

  var root = document.getElementById("judge");
  if (!root || !window.Judging) return;
  var J = window.Judging, $ = J.$, api = J.api, uuid = J.uuid;
  var API = root.dataset.api;
  var ASSIGNMENT = root.dataset.assignment;
  var ADAPTIVE = root.dataset.adaptive === "1";  // the next batch comes once these are judged
  var EVIDENCE = root.dataset.evidence === "1";  // the assessor marks evidence passages
  var TERMS_KEY = "wb-terms-" + ASSIGNMENT;
  var STOPWORDS = new Set(("a an and are as at be but by for from has have how in is it its of on " +
    "or that the their this to was were what when where which who why will with about into " +
    "than then there these those do does did can could should would not no any all").split(" "));

  var state = null;          // the assignment: topic, grades, total, judgements[]
  var position = 0;
  var docs = {};             // position -> document (cache)
  var userTerms = loadTerms();
  var gradeByKey = {};
  var moreAskedFor = -1;     // adaptive: the total for which the next batch was asked
  var timer = J.timer(root);
  var queue = J.queue({
    root: root, key: "wb-pending-" + ASSIGNMENT,
    onSaved: saved, onRejected: rejected,
    onChange: function () { askForMore(); }
  });
  queue.entries.forEach(function (entry) {  // saved by an earlier version of this page
    if (!entry.url) entry.url = API + "/judgements";
  });

  function loadTerms() {
    try { return JSON.parse(localStorage.getItem(TERMS_KEY) || "[]"); } catch (e) { return []; }
  }
  function gradeLabel(value) {
    for (var i = 0; i < state.grades.length; i++) {
      if (state.grades[i].value === value) return state.grades[i].label;
    }
    return String(value);
  }
  function local(j) {
    // a judgement from the server as this page keeps it
    return j && {grade: j.grade, cannot_judge: j.cannot_judge, comment: j.comment,
                 evidence: j.evidence || [], saved: true};
  }

  // ---------- highlighting ----------
  function titleTerms() {
    return (state.topic.title || "").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(function (w) {
      return w.length > 2 && !STOPWORDS.has(w);
    });
  }
  // a word is highlighted when its stem (from the server: workbench.highlight) is the stem of
  // a term, so every form of a term matches; a word the server did not stem matches a term
  // it starts with
  var stemOf = {};
  function addStems(map) { Object.keys(map || {}).forEach(function (w) { stemOf[w] = map[w]; }); }
  try { addStems(JSON.parse(root.dataset.titleStems || "{}")); } catch (e) { /* none */ }
  function termClasses() {
    var wanted = {};
    titleTerms().forEach(function (t) { wanted[stemOf[t] || t] = "query-term"; });
    userTerms.forEach(function (t) { wanted[stemOf[t] || t] = "user-term"; });
    return wanted;
  }
  function classOf(word, wanted, terms) {
    var w = word.toLowerCase();
    var found = wanted[stemOf[w] || w];
    if (found) return found;
    for (var i = 0; i < terms.length; i++) {
      if (w.lastIndexOf(terms[i], 0) === 0) {
        return userTerms.indexOf(terms[i]) >= 0 ? "user-term" : "query-term";
      }
    }
    return null;
  }
  function renderText(el, text, evidence) {
    // the text with its terms highlighted; `evidence` passages ([start, end] in code points)
    // wrapped in <mark class="evidence">
    el.textContent = "";
    var cut = 0;
    (evidence || []).forEach(function (span) {
      var start = units(text, span[0]), end = units(text, span[1]);
      if (start > cut) highlight(el, text.slice(cut, start));
      var box = document.createElement("mark");
      box.className = "evidence";
      highlight(box, text.slice(start, end));
      el.appendChild(box);
      cut = end;
    });
    highlight(el, text.slice(cut));
  }
  function highlight(el, text) {
    var terms = titleTerms().concat(userTerms).filter(Boolean);
    if (!terms.length) { el.appendChild(document.createTextNode(text)); return; }
    var wanted = termClasses();
    var re = /[\p{L}\p{N}]+/gu;
    var last = 0, m;
    while ((m = re.exec(text)) !== null) {
      var cls = classOf(m[0], wanted, terms);
      if (!cls) continue;
      if (m.index > last) el.appendChild(document.createTextNode(text.slice(last, m.index)));
      var mark = document.createElement("mark");
      mark.className = cls;
      mark.textContent = m[0];
      el.appendChild(mark);
      last = re.lastIndex;
    }
    if (last < text.length) el.appendChild(document.createTextNode(text.slice(last)));
  }
  function stemUserTerms() {
    // the stems of the assessor's own terms, then highlight again
    var missing = userTerms.filter(function (t) { return !stemOf[t]; });
    if (!missing.length) return;
    api(root.dataset.stemsUrl + "?terms=" + encodeURIComponent(missing.join(" ")))
      .then(function (r) { return r.ok ? r.json() : {}; })
      .then(function (map) {
        addStems(map);
        renderTitle();
        if (docs[position]) renderDocument(docs[position]);
      }).catch(function () { /* prefixes still match */ });
  }
  function renderTerms() {
    var box = $("terms");
    box.textContent = "";
    titleTerms().forEach(function (t) {
      var chip = document.createElement("span");
      chip.className = "chip query-term"; chip.textContent = t; box.appendChild(chip);
    });
    userTerms.forEach(function (t) {
      var chip = document.createElement("span");
      chip.className = "chip user-term"; chip.textContent = t + " ";
      var x = document.createElement("button");
      x.type = "button"; x.className = "chip-remove"; x.textContent = "×";
      x.setAttribute("aria-label", "stop highlighting " + t);
      x.addEventListener("click", function () {
        userTerms = userTerms.filter(function (u) { return u !== t; });
        storeTerms();
      });
      chip.appendChild(x); box.appendChild(chip);
    });
    renderTitle();
  }
  function renderTitle() { renderText($("topic-title"), state.topic.title || ("Topic " + state.qid)); }
  function storeTerms() {
    try { localStorage.setItem(TERMS_KEY, JSON.stringify(userTerms)); } catch (e) { /* ignore */ }
    renderTerms();
    stemUserTerms();
    if (docs[position]) renderDocument(docs[position]);
  }
  $("term-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var input = $("term-input");
    input.value.toLowerCase().split(/\s+/).forEach(function (t) {
      if (t && userTerms.indexOf(t) < 0) userTerms.push(t);
    });
    input.value = "";
    input.blur();
    storeTerms();
  });

  // ---------- saving (judging-common.js): every judgement at once, retried ----------
  function saved(entry, body) {
    if (entry.undo) { undone(body.undone); return; }
    var current = state.judgements[entry.position];
    if (current && current.client_id === entry.body.client_id) {
      current.saved = true;
      current.id = body.judgement.id;
    }
    renderMap();
    if (entry.position === position) renderJudgement();
  }
  function rejected(entry, message) {
    if (entry.undo) { $("action-status").textContent = message; return; }
    var current = state.judgements[entry.position];
    if (current && current.client_id === entry.body.client_id) {
      state.judgements[entry.position] = entry.previous || null;
    }
    renderMap(); renderProgress();
    if (entry.position === position) renderJudgement();
  }
  // ---------- undo (z): the server takes back the last judgement, as a new event ----------
  function undo() { J.undo(queue, API + "/undo"); }
  function undone(result) {
    state.judgements[result.position] = local(result.judgement);
    var now = result.judgement;
    $("action-status").textContent = "Undone: " + result.docno + " is " +
      (!now ? "not judged any more" : now.grade === null ? "\u201ccannot judge\u201d again" :
       gradeLabel(now.grade) + " again") + ".";
    renderProgress();
    go(result.position);
  }
  // ---------- adaptive pools: the next batch once every chosen document is judged and saved
  function askForMore() {
    if (!ADAPTIVE || !state || queue.busy() || moreAskedFor === state.total) return;
    if (state.judgements.filter(Boolean).length < state.total) return;
    moreAskedFor = state.total;
    $("more-status").textContent = "Fetching the next documents…";
    api(API).then(function (r) {
      if (!r.ok) throw new Error("the server answered " + r.status);
      return r.json();
    }).then(function (data) {
      if (queue.busy()) { moreAskedFor = -1; return; }  // judged meanwhile: ask once saved
      if (data.total <= state.total) {
        $("more-status").textContent = "The topic is finished: no more documents to judge.";
        return;
      }
      var first = state.total;
      state.total = data.total;
      docs = {};  // positions may be new (another judge's sample is reshuffled)
      state.judgements = data.judgements.map(local);
      $("total").textContent = state.total;
      $("progress").max = state.total;
      renderProgress();
      var p = nextUnjudged(first - 1);
      go(p >= 0 ? p : first);
    }).catch(function (error) {
      moreAskedFor = -1;
      $("more-status").textContent = "Could not fetch the next documents (" + error.message +
        "); reload the page to try again.";
    });
  }

  // ---------- judging ----------
  function record(grade, reason, evidence) {
    var doc = docs[position];
    if (!doc) return;
    var previous = state.judgements[position];
    if (grade === null) evidence = [];
    else if (!evidence) evidence = marked(position);
    delete draft[position];
    var entry = {
      position: position,
      previous: previous,
      url: API + "/judgements",
      body: {
        docno: doc.docno, grade: grade, cannot_judge: grade === null ? reason : null,
        comment: $("comment").value, time_spent_ms: timer.take(position), client_id: uuid(),
        evidence: evidence
      }
    };
    state.judgements[position] = {
      grade: grade, cannot_judge: entry.body.cannot_judge, comment: entry.body.comment,
      evidence: evidence, client_id: entry.body.client_id, saved: false
    };
    queue.add(entry);
    renderProgress(); renderMap(); renderJudgement();
  }
  function judge(grade) {
    record(grade, null);
    if (position < state.total - 1) go(position + 1);
    else renderJudgement();
  }
  function nextUnjudged(from) {
    for (var i = 1; i <= state.total; i++) {
      var p = (from + i) % state.total;
      if (!state.judgements[p]) return p;
    }
    return -1;
  }
  function openCannot() {
    $("cannot-panel").hidden = false;
    $("cannot-reason").focus();
  }
  function closeCannot() { $("cannot-panel").hidden = true; $("cannot-error").textContent = ""; }
  $("cannot-button").addEventListener("click", openCannot);
  $("cannot-cancel").addEventListener("click", closeCannot);
  function saveCannot() {
    var reason = $("cannot-reason").value;
    if (reason === "other") reason = $("cannot-other").value.trim();
    if (!reason) {
      $("cannot-error").textContent = "Not saved: write the reason in the box after " +
        "\u201cOther\u201d (an empty reason cannot be saved).";
      $("cannot-other").focus();
      return;
    }
    closeCannot();
    $("cannot-other").value = "";
    document.activeElement.blur();
    record(null, reason);
    if (position < state.total - 1) go(position + 1);
  }
  $("cannot-save").addEventListener("click", saveCannot);
  function saveComment() {
    var current = state.judgements[position];
    if (!current) {
      $("action-status").textContent = "The comment is saved with your judgement: choose a grade.";
      return;
    }
    record(current.grade, current.cannot_judge);
  }
  $("comment-save").addEventListener("click", saveComment);
  Array.prototype.forEach.call(document.querySelectorAll("#grades .grade"), function (button) {
    gradeByKey[button.dataset.key] = parseInt(button.dataset.grade, 10);
    button.addEventListener("click", function () { judge(parseInt(button.dataset.grade, 10)); });
  });
  $("prev-button").addEventListener("click", function () { if (position > 0) go(position - 1); });
  $("next-button").addEventListener("click", function () { if (position < state.total - 1) go(position + 1); });
  $("skip-button").addEventListener("click", skip);
  $("undo-button").addEventListener("click", function () { if (state) undo(); });
  function skip() {
    var p = nextUnjudged(position);
    if (p >= 0 && p !== position) go(p);
  }

  // ---------- guidelines: shown before the first document, reopened by their button ----------
  var guidelinesBox = $("guidelines");
  if (guidelinesBox) {
    $("guidelines-button").addEventListener("click", function () { guidelinesBox.showModal(); });
    if (guidelinesBox.dataset.showFirst === "1") guidelinesBox.showModal();
  }

  document.addEventListener("keydown", function (event) {
    if (guidelinesBox && guidelinesBox.open) return;  // the dialog's own keys (Esc closes)
    if (!state || event.ctrlKey && event.key !== "Enter" || event.metaKey || event.altKey) return;
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "textarea" || tag === "input" || tag === "select") {
      if (event.key === "Escape") event.target.blur();
      if (event.key === "Enter" && $("cannot-panel").contains(event.target)) {
        event.preventDefault(); saveCannot(); return;
      }
      if (event.key === "Enter" && event.ctrlKey && event.target.id === "comment") {
        event.preventDefault(); saveComment(); event.target.blur();
      }
      return;
    }
    if (event.ctrlKey) return;
    var key = event.key;
    if (Object.prototype.hasOwnProperty.call(gradeByKey, key)) {
      event.preventDefault(); judge(gradeByKey[key]); return;
    }
    if (scrollKey(event)) return;
    if (key === "ArrowRight" || key === "n") {
      event.preventDefault(); if (position < state.total - 1) go(position + 1);
    } else if (key === "ArrowLeft" || key === "p") {
      event.preventDefault(); if (position > 0) go(position - 1);
    } else if (key === "s") {
      event.preventDefault(); skip();
    } else if (key === "z") {
      event.preventDefault(); undo();
    } else if (key === "t") {
      event.preventDefault(); nextTopic();
    } else if (key === "e" && EVIDENCE) {
      event.preventDefault(); markSelection();
    } else if (key === "c") {
      event.preventDefault(); openCannot();
    } else if (key === "m") {
      event.preventDefault(); $("comment").focus();
    } else if (key === "Escape") {
      closeCannot();
    }
  });

  // ---------- scrolling the document from the keyboard ----------
  var panel = document.querySelector(".document-panel");
  function scroller() {
    // the document panel scrolls on a wide screen; the window on a narrow one
    var own = getComputedStyle(panel).overflowY;
    return (own === "auto" || own === "scroll") && panel.scrollHeight > panel.clientHeight ?
      panel : null;
  }
  function screenful(el) {
    var controls = document.querySelector(".judge-controls");
    var fixed = getComputedStyle(controls).position === "fixed" ? controls.offsetHeight : 0;
    return Math.max(40, 0.85 * ((el ? el.clientHeight : window.innerHeight) - fixed));
  }
  function scrollKey(event) {
    // ↓ ↑ Space Shift-Space PageDown PageUp Home End: the document, never a button's click
    var el = scroller(), key = event.key, by = null;
    if (key === "ArrowDown") by = 48;
    else if (key === "ArrowUp") by = -48;
    else if (key === " " || key === "Spacebar") by = (event.shiftKey ? -1 : 1) * screenful(el);
    else if (key === "PageDown") by = screenful(el);
    else if (key === "PageUp") by = -screenful(el);
    else if (key !== "Home" && key !== "End") return false;
    event.preventDefault();
    var target = el || window;
    if (by !== null) target.scrollBy({top: by, behavior: "instant"});
    else if (el) el.scrollTo({top: key === "Home" ? 0 : el.scrollHeight, behavior: "instant"});
    else window.scrollTo({top: key === "Home" ? documentTop() :
      document.documentElement.scrollHeight, behavior: "instant"});
    return true;
  }
  function documentTop() {
    // the top of the document panel in the page (a narrow screen shows the topic above it)
    return Math.max(0, panel.getBoundingClientRect().top + window.scrollY - 8);
  }
  function showDocumentStart() {
    // a new document opens at its start, without jumping to the top of the page
    panel.scrollTop = 0;
    if (!scroller() && window.scrollY > documentTop()) {
      window.scrollTo({top: documentTop(), behavior: "instant"});
    }
  }
  // narrow screens: the topic statement starts collapsed above the document; the grade bar
  // is fixed at the bottom and the page keeps room for it
  var narrow = window.matchMedia("(max-width: 800px)");
  if (narrow.matches) $("topic-details").open = false;
  function keepRoomForControls() {
    var controls = document.querySelector(".judge-controls");
    var fixed = getComputedStyle(controls).position === "fixed";
    root.style.paddingBottom = fixed ? (controls.offsetHeight + 8) + "px" : "";
  }
  if (window.ResizeObserver) new ResizeObserver(keepRoomForControls).observe(document.querySelector(".judge-controls"));
  window.addEventListener("resize", keepRoomForControls);
  keepRoomForControls();

  // ---------- rendering ----------
  function renderProgress() {
    var judged = state.judgements.filter(Boolean).length;
    $("progress").value = judged;
    $("progress-text").textContent = judged + " / " + state.total + " judged";
    J.doneBanner(judged >= state.total);
  }
  function renderMap() {
    var map = $("position-map");
    if (map.children.length !== state.total) {
      map.textContent = "";
      for (var i = 0; i < state.total; i++) {
        var cell = document.createElement("button");
        cell.type = "button"; cell.dataset.position = i;
        cell.addEventListener("click", function (e) { go(parseInt(e.currentTarget.dataset.position, 10)); });
        map.appendChild(cell);
      }
    }
    for (var p = 0; p < state.total; p++) {
      var j = state.judgements[p];
      var c = map.children[p];
      c.className = "cell" + (p === position ? " current" : "") +
        (j ? (j.grade === null ? " cannot" : " judged g" + j.grade) : "") + (j && !j.saved ? " pending" : "");
      c.title = "Document " + (p + 1) + (j ? ": " + (j.grade === null ? "cannot judge" : gradeLabel(j.grade)) : ": not judged");
      c.setAttribute("aria-label", c.title);
      if (p === position) c.setAttribute("aria-current", "true"); else c.removeAttribute("aria-current");
      c.textContent = j ? (j.grade === null ? "×" : String(j.grade)) : "";
    }
  }
  function renderJudgement() {
    var j = state.judgements[position];
    Array.prototype.forEach.call(document.querySelectorAll("#grades .grade"), function (button) {
      button.classList.toggle("selected", !!j && j.grade === parseInt(button.dataset.grade, 10));
    });
    $("cannot-button").classList.toggle("selected", !!j && j.grade === null);
    var text;
    if (!j) text = "Not judged yet";
    else if (j.grade === null) text = "Cannot judge: " + j.cannot_judge;
    else text = "Judged " + gradeLabel(j.grade);
    if (j) text += j.saved ? " · saved ✓" : " · saving…";
    $("doc-state").textContent = text;
    $("doc-state").className = "doc-state" + (j ? (j.saved ? " saved" : " unsaved") : "");
  }
  function renderDocument(doc) {
    $("docno").textContent = doc.docno;
    renderText($("doc-title"), doc.title || "(untitled)");
    if (doc.missing) $("doc-text").textContent = "(The text of this document was not loaded into the campaign.)";
    else renderText($("doc-text"), doc.text, marked(position));
    renderEvidence(doc);
  }
  // ---------- evidence: the passages that make the document relevant ----------
  // offsets count Unicode code points of the text, as the server (Python) does
  function codePoints(text, units) { return Array.from(text.slice(0, units)).length; }
  function units(text, points) {
    var i = 0, n = 0;
    while (n < points && i < text.length) { i += text.codePointAt(i) > 0xffff ? 2 : 1; n++; }
    return i;
  }
  function marked(p) {
    var j = state.judgements[p];
    if (j && j.evidence) return j.evidence.slice();
    return (draft[p] || []).slice();
  }
  var draft = {};  // position -> passages marked before the document is graded
  function setMarked(p, spans) {
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var merged = [];
    spans.forEach(function (s) {
      var last = merged[merged.length - 1];
      if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
      else merged.push([s[0], s[1]]);
    });
    var j = state.judgements[p];
    if (j && j.grade !== null && j.grade !== undefined) {
      record(j.grade, null, merged);  // saved with the judgement, as a revision
    } else {
      draft[p] = merged;
      $("action-status").textContent = "The passage is saved with your grade: choose one.";
    }
    if (docs[p]) renderDocument(docs[p]);
  }
  function markSelection() {
    var doc = docs[position], box = $("doc-text"), selection = window.getSelection();
    if (!doc || doc.missing || !selection.rangeCount || selection.isCollapsed) {
      $("action-status").textContent = "Select the passage in the text first, then press e.";
      return;
    }
    var range = selection.getRangeAt(0);
    if (!box.contains(range.startContainer) || !box.contains(range.endContainer)) {
      $("action-status").textContent = "Select a passage of the document's text.";
      return;
    }
    var before = document.createRange();
    before.selectNodeContents(box);
    before.setEnd(range.startContainer, range.startOffset);
    var start = before.toString().length, end = start + range.toString().length;
    selection.removeAllRanges();
    setMarked(position, marked(position).concat([[codePoints(doc.text, start), codePoints(doc.text, end)]]));
  }
  function renderEvidence(doc) {
    var list = $("evidence-list");
    if (!list) return;
    list.textContent = "";
    var spans = doc.missing ? [] : marked(position);
    $("evidence-count").textContent = spans.length ? spans.length + (spans.length === 1 ? " passage" : " passages") : "none yet";
    spans.forEach(function (span, i) {
      var item = document.createElement("li");
      var quote = doc.text.slice(units(doc.text, span[0]), units(doc.text, span[1]));
      item.textContent = "\u201c" + (quote.length > 120 ? quote.slice(0, 117) + "…" : quote) + "\u201d ";
      var remove = document.createElement("button");
      remove.type = "button"; remove.className = "chip-remove"; remove.textContent = "×";
      remove.setAttribute("aria-label", "remove passage " + (i + 1));
      remove.addEventListener("click", function () {
        setMarked(position, marked(position).filter(function (_, n) { return n !== i; }));
      });
      item.appendChild(remove);
      list.appendChild(item);
    });
  }
  if (EVIDENCE) $("evidence-mark").addEventListener("click", markSelection);
  // ---------- the next topic (t) ----------
  function nextTopic() { J.nextTopic(root); }
  function fetchDocument(p) {
    if (docs[p]) return Promise.resolve(docs[p]);
    return api(API + "/documents/" + p).then(function (r) {
      if (!r.ok) throw new Error("document " + p + ": " + r.status);
      return r.json();
    }).then(function (doc) { addStems(doc.stems); docs[p] = doc; return doc; });
  }
  function go(p) {
    closeCannot();
    timer.moveTo(p);  // the time so far is kept for the eventual judgement of that document
    position = p;
    history.replaceState(null, "", "#" + (p + 1));
    $("pos").textContent = p + 1;
    renderMap(); renderJudgement();
    var j = state.judgements[p];
    $("comment").value = j ? (j.comment || "") : "";
    fetchDocument(p).then(function (doc) {
      if (p !== position) return;
      renderDocument(doc);
      showDocumentStart();
      if (p + 1 < state.total) fetchDocument(p + 1).catch(function () {});
    }).catch(function (error) {
      $("doc-text").textContent = "Could not load the document (" + error.message + "). Use → to retry.";
      delete docs[p];
    });
  }
  // ---------- start ----------
  api(API).then(function (r) { return r.json(); }).then(function (data) {
    state = data;
    state.judgements = data.judgements.map(local);
    queue.entries.forEach(function (entry) {   // unsent judgements from before a reload
      if (entry.undo) return;
      state.judgements[entry.position] = {
        grade: entry.body.grade, cannot_judge: entry.body.cannot_judge,
        comment: entry.body.comment, evidence: entry.body.evidence || [],
        client_id: entry.body.client_id, saved: false
      };
    });
    renderTerms();
    stemUserTerms();
    renderProgress();
    queue.renderStatus();
    if (!state.total) { $("doc-text").textContent = "This topic has no documents to judge."; return; }
    var fromHash = parseInt((location.hash || "").slice(1), 10) - 1;
    go(fromHash >= 0 && fromHash < state.total ? fromHash : state.position);
    if (ADAPTIVE && !queue.busy() && state.judgements.filter(Boolean).length === state.total) {
      // loading the page asked for the next batch already: there is none
      moreAskedFor = state.total;
      $("more-status").textContent = "The topic is finished: no more documents to judge.";
    }
    queue.pump();
    askForMore();
  }).catch(function () {
    $("save-status").textContent = "Could not load this topic; reload the page.";
  });
})();
