/* The judging page: keyboard judging, immediate saving with retries, idle-aware timing,
   query-term highlighting. Plain JavaScript, no build step. Document text is only ever
   inserted as text nodes (never as HTML).
   No judgement is dropped when the session ends (logout in another tab, expiry, a CSRF
   failure, a 401): unsent judgements stay queued in localStorage, the assessor is asked to
   log in again (here, or in a new tab) and the queue is then resent, each judgement with its
   own client_id so that none is stored twice. */
(function () {
  "use strict";

  var root = document.getElementById("judge");
  if (!root) return;
  var API = root.dataset.api;
  var ASSIGNMENT = root.dataset.assignment;
  var CSRF = document.querySelector('meta[name="csrf-token"]').content;
  var ME_URL = root.dataset.me;
  var LOGIN_URL = root.dataset.login;
  var USERNAME = root.dataset.username;
  var ADAPTIVE = root.dataset.adaptive === "1";  // the next batch comes once these are judged
  var IDLE_MS = parseInt(root.dataset.idleMs, 10) || 60000;
  var BREAK_MS = parseInt(root.dataset.breakMs, 10) || 0;  // 0: no break reminders
  var sinceBreakMs = 0;      // active time since the last break (a long pause is one)
  var PENDING_KEY = "wb-pending-" + ASSIGNMENT;
  var TERMS_KEY = "wb-terms-" + ASSIGNMENT;
  var STOPWORDS = new Set(("a an and are as at be but by for from has have how in is it its of on " +
    "or that the their this to was were what when where which who why will with about into " +
    "than then there these those do does did can could should would not no any all").split(" "));

  var $ = function (id) { return document.getElementById(id); };
  var state = null;          // the assignment: topic, grades, total, judgements[]
  var position = 0;
  var docs = {};             // position -> document (cache)
  var queue = loadPending(); // judgements not yet confirmed by the server
  var sending = false;
  var sessionLost = false;   // the server refused our session: wait for a new login
  var sessionTimer = null;
  var backoffMs = 0;
  var failureText = "";
  var activeMs = {};         // position -> active milliseconds not yet sent
  var lastInput = Date.now();
  var lastTick = Date.now();
  var userTerms = loadTerms();
  var gradeByKey = {};
  var moreAskedFor = -1;     // adaptive: the total for which the next batch was asked

  // ---------- helpers ----------
  function uuid() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    var b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
    var h = Array.prototype.map.call(b, function (x) { return (x + 0x100).toString(16).slice(1); }).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }
  function loadPending() {
    try { return JSON.parse(localStorage.getItem(PENDING_KEY) || "[]"); } catch (e) { return []; }
  }
  function savePending() {
    try { localStorage.setItem(PENDING_KEY, JSON.stringify(queue)); } catch (e) { /* private mode */ }
  }
  function loadTerms() {
    try { return JSON.parse(localStorage.getItem(TERMS_KEY) || "[]"); } catch (e) { return []; }
  }
  function api(path, options) {
    options = options || {};
    options.credentials = "same-origin";
    options.headers = Object.assign({"Accept": "application/json"}, options.headers || {});
    return fetch(path, options);
  }
  function gradeLabel(value) {
    for (var i = 0; i < state.grades.length; i++) {
      if (state.grades[i].value === value) return state.grades[i].label;
    }
    return String(value);
  }

  // ---------- timing: active time per document, idle and hidden time excluded ----------
  function touch() { lastInput = Date.now(); }
  ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart"].forEach(function (name) {
    window.addEventListener(name, touch, {passive: true, capture: true});
  });
  document.addEventListener("visibilitychange", function () { lastTick = Date.now(); touch(); });
  setInterval(function () {
    var now = Date.now();
    var idle = document.hidden || now - lastInput > IDLE_MS;
    if (state) addActiveTime(position);
    root.classList.toggle("idle", idle);
  }, 1000);
  function takeTime(pos) {
    // the active time of a document, sent with its judgement and then restarted
    addActiveTime(pos);
    var ms = Math.round(activeMs[pos] || 0);
    activeMs[pos] = 0;
    return ms;
  }
  function addActiveTime(pos) {
    var now = Date.now();
    if (!document.hidden && now - lastInput <= IDLE_MS) {
      activeMs[pos] = (activeMs[pos] || 0) + (now - lastTick);
      sinceBreakMs += now - lastTick;
    } else if (now - lastInput > 5 * IDLE_MS) {
      sinceBreakMs = 0;  // a long pause was a break
    }
    lastTick = now;
    if (BREAK_MS && sinceBreakMs >= BREAK_MS) $("break-banner").hidden = false;
  }
  $("break-dismiss").addEventListener("click", function () {
    $("break-banner").hidden = true;
    sinceBreakMs = 0;
  });

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
  function renderText(el, text) {
    el.textContent = "";
    var terms = titleTerms().concat(userTerms).filter(Boolean);
    if (!terms.length) { el.textContent = text; return; }
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

  // ---------- saving: every judgement at once, retried with backoff ----------
  function submit(entry) {
    queue.push(entry);
    savePending();
    renderStatus();
    pump();
  }
  function pump() {
    if (sending || sessionLost || !queue.length) return;
    sending = true;
    var entry = queue[0];
    api(API + "/judgements", {
      method: "POST",
      headers: {"Content-Type": "application/json", "X-CSRFToken": CSRF},
      body: JSON.stringify(entry.body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        return {status: response.status, body: body};
      });
    }).then(function (result) {
      sending = false;
      if (result.status === 200 || result.status === 201) {
        queue.shift(); savePending();
        backoffMs = 0; failureText = "";
        confirmSaved(entry, result.body.judgement);
        pump();
        askForMore();
      } else if (result.status >= 500 || result.status === 429 || result.status === 408) {
        retryLater("the server answered " + result.status);
      } else if (result.status === 401 || result.status === 403 ||
                 (result.status === 400 && /CSRF/.test((result.body && result.body.error) || ""))) {
        loseSession();   // the judgement stays first in the queue
      } else {
        queue.shift(); savePending();
        rejected(entry, (result.body && result.body.error) || ("error " + result.status));
        pump();
      }
      renderStatus();
    }, function () {
      sending = false;
      retryLater("the network is unavailable");
      renderStatus();
    });
  }
  // ---------- a lost session: log in again, then resend the queue ----------
  function pageToken(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var meta = doc.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : null;
  }
  function loseSession() {
    if (!sessionLost) {
      sessionLost = true;
      $("relogin").hidden = false;
      $("relogin-error").textContent = "";
      if (!sessionTimer) sessionTimer = setInterval(checkSession, 3000);
    }
    failureText = "Not saved yet: your session has ended. Log in again to send " +
      queue.length + (queue.length === 1 ? " judgement" : " judgements") +
      "; they are kept in this browser meanwhile.";
    $("relogin-text").textContent = failureText;
    checkSession();
  }
  function checkSession() {
    // logged in again (in another tab, or by the form here)? then take the new CSRF token
    return api(ME_URL).then(function (r) {
      if (r.status !== 200) return null;
      return r.json();
    }).then(function (me) {
      if (!me || !sessionLost) return;
      if (me.username !== USERNAME) {
        $("relogin-error").textContent = "This browser is now logged in as " + me.username +
          ": log in as " + USERNAME + " to send these judgements.";
        return;
      }
      return fetch(location.pathname, {credentials: "same-origin"}).then(function (r) {
        return r.text();
      }).then(function (html) {
        var token = pageToken(html);
        if (!token) return;
        CSRF = token;
        resumeSession();
      });
    }).catch(function () { /* offline: try again at the next tick */ });
  }
  function resumeSession() {
    sessionLost = false;
    if (sessionTimer) { clearInterval(sessionTimer); sessionTimer = null; }
    $("relogin").hidden = true;
    $("relogin-password").value = "";
    failureText = ""; backoffMs = 0;
    renderStatus();
    pump();
  }
  $("relogin-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var password = $("relogin-password").value;
    $("relogin-error").textContent = "Logging in…";
    fetch(LOGIN_URL, {credentials: "same-origin"}).then(function (r) {
      return r.text();
    }).then(function (html) {
      var form = new URLSearchParams();
      form.set("username", USERNAME);
      form.set("password", password);
      form.set("csrf_token", pageToken(html) || "");
      return fetch(LOGIN_URL, {method: "POST", body: form, credentials: "same-origin"});
    }).then(function (r) {
      if (r.status === 401) throw new Error("wrong password");
      if (r.status === 429) throw new Error("too many failed logins; wait a little and try again");
      if (!r.ok) throw new Error("the server answered " + r.status);
      $("relogin-error").textContent = "";
      return checkSession();
    }).catch(function (error) {
      $("relogin-error").textContent = "Not logged in: " + error.message + ".";
    });
  });
  window.addEventListener("focus", function () { if (sessionLost) checkSession(); });

  var retryTimer = null;
  function retryLater(why) {
    // exponential backoff (1 s doubling to 30 s); the message counts the seconds down
    backoffMs = Math.min(backoffMs ? backoffMs * 2 : 1000, 30000);
    var retryAt = Date.now() + backoffMs;
    function tick() {
      var left = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
      failureText = "Not saved yet: " + why + ". Retrying in " + left + " s…";
      renderStatus();
      if (left <= 0) { clearInterval(retryTimer); retryTimer = null; }
    }
    if (retryTimer) clearInterval(retryTimer);
    tick();
    retryTimer = setInterval(tick, 1000);
    setTimeout(pump, backoffMs);
  }
  function confirmSaved(entry, judgement) {
    var current = state.judgements[entry.position];
    if (current && current.client_id === entry.body.client_id) {
      current.saved = true;
      current.id = judgement.id;
    }
    renderMap();
    if (entry.position === position) renderJudgement();
  }
  function rejected(entry, message) {
    var current = state.judgements[entry.position];
    if (current && current.client_id === entry.body.client_id) {
      state.judgements[entry.position] = entry.previous || null;
    }
    failureText = "Not saved: " + message;
    renderMap(); renderProgress();
    if (entry.position === position) renderJudgement();
  }
  // ---------- adaptive pools: the next batch once every chosen document is judged and saved
  function askForMore() {
    if (!ADAPTIVE || queue.length || sending || moreAskedFor === state.total) return;
    if (state.judgements.filter(Boolean).length < state.total) return;
    moreAskedFor = state.total;
    $("more-status").textContent = "Fetching the next documents…";
    api(API).then(function (r) {
      if (!r.ok) throw new Error("the server answered " + r.status);
      return r.json();
    }).then(function (data) {
      if (queue.length) { moreAskedFor = -1; return; }  // judged meanwhile: ask once saved
      if (data.total <= state.total) {
        $("more-status").textContent = "The topic is finished: no more documents to judge.";
        return;
      }
      var first = state.total;
      state.total = data.total;
      docs = {};  // positions may be new (another judge's sample is reshuffled)
      state.judgements = data.judgements.map(function (j) {
        return j && {grade: j.grade, cannot_judge: j.cannot_judge, comment: j.comment, saved: true};
      });
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
  function renderStatus() {
    var el = $("save-status");
    el.classList.remove("ok", "busy", "bad");
    if (failureText) { el.textContent = failureText; el.classList.add("bad"); }
    else if (queue.length) { el.textContent = "Saving " + queue.length + "…"; el.classList.add("busy"); }
    else { el.textContent = "All judgements saved"; el.classList.add("ok"); }
  }
  window.addEventListener("beforeunload", function (event) {
    if (queue.length) { event.preventDefault(); event.returnValue = ""; }
  });

  // ---------- judging ----------
  function record(grade, reason) {
    var doc = docs[position];
    if (!doc) return;
    var previous = state.judgements[position];
    var entry = {
      position: position,
      previous: previous,
      body: {
        docno: doc.docno, grade: grade, cannot_judge: grade === null ? reason : null,
        comment: $("comment").value, time_spent_ms: takeTime(position), client_id: uuid()
      }
    };
    state.judgements[position] = {
      grade: grade, cannot_judge: entry.body.cannot_judge, comment: entry.body.comment,
      client_id: entry.body.client_id, saved: false
    };
    submit(entry);
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
      failureText = "";
      $("save-status").textContent = "The comment is saved with your judgement: choose a grade.";
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
    $("done-banner").hidden = judged < state.total;
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
      c.title = "Document " + (p + 1) + (j ? ": " + (j.grade === null ? "cannot judge" : gradeLabel(j.grade)) : "");
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
    else renderText($("doc-text"), doc.text);
  }
  function fetchDocument(p) {
    if (docs[p]) return Promise.resolve(docs[p]);
    return api(API + "/documents/" + p).then(function (r) {
      if (!r.ok) throw new Error("document " + p + ": " + r.status);
      return r.json();
    }).then(function (doc) { addStems(doc.stems); docs[p] = doc; return doc; });
  }
  function go(p) {
    closeCannot();
    addActiveTime(position);  // kept for the eventual judgement of that document
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
    state.judgements = data.judgements.map(function (j) {
      return j && {grade: j.grade, cannot_judge: j.cannot_judge, comment: j.comment, saved: true};
    });
    queue.forEach(function (entry) {   // unsent judgements from before a reload
      state.judgements[entry.position] = {
        grade: entry.body.grade, cannot_judge: entry.body.cannot_judge,
        comment: entry.body.comment, client_id: entry.body.client_id, saved: false
      };
    });
    renderTerms();
    stemUserTerms();
    renderProgress();
    renderStatus();
    if (!state.total) { $("doc-text").textContent = "This topic has no documents to judge."; return; }
    var fromHash = parseInt((location.hash || "").slice(1), 10) - 1;
    go(fromHash >= 0 && fromHash < state.total ? fromHash : state.position);
    if (ADAPTIVE && !queue.length && state.judgements.filter(Boolean).length === state.total) {
      // loading the page asked for the next batch already: there is none
      moreAskedFor = state.total;
      $("more-status").textContent = "The topic is finished: no more documents to judge.";
    }
    pump();
    askForMore();
  }).catch(function () {
    $("save-status").textContent = "Could not load this topic; reload the page.";
  });
})();
