/* What the judging pages share (one document, a list of passages, pairs): saving every
   answer at once with retries, keeping unsent answers through a lost session, and
   idle-aware timing. Plain JavaScript, no build step.

   Judging.queue(options) keeps the unsent requests (judgements, preferences, undos) in
   localStorage, sends them one at a time in order, retries with backoff (1 s doubling to
   30 s) and, when the session has ended (logout elsewhere, expiry, a CSRF failure, a 401),
   asks the assessor to log in again (the #relogin box of assess/_relogin.html) and then
   resends them, each with its own client_id so that none is stored twice.
   Judging.timer(root) counts the active milliseconds per position: time stops after
   data-idle-ms without input or while the tab is hidden. */
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };

  function uuid() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    var b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
    var h = Array.prototype.map.call(b, function (x) { return (x + 0x100).toString(16).slice(1); }).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }
  function api(path, options) {
    options = options || {};
    options.credentials = "same-origin";
    options.headers = Object.assign({"Accept": "application/json"}, options.headers || {});
    return fetch(path, options);
  }

  /* options: root (the page's element with data-me, data-login, data-username), key (the
     localStorage key), onSaved(entry, body), onRejected(entry, message), onChange() (after
     any change of the queue or its status). An entry is {url, body, ...} (anything else the
     page needs back). */
  function queue(options) {
    var root = options.root;
    var CSRF = document.querySelector('meta[name="csrf-token"]').content;
    var entries = load();
    var sending = false, sessionLost = false, sessionTimer = null, backoffMs = 0, retryTimer = null;
    var self = {entries: entries, failureText: ""};

    function load() {
      try { return JSON.parse(localStorage.getItem(options.key) || "[]"); } catch (e) { return []; }
    }
    function store() {
      try { localStorage.setItem(options.key, JSON.stringify(entries)); } catch (e) { /* private mode */ }
    }
    function changed() { renderStatus(); if (options.onChange) options.onChange(); }
    self.add = function (entry) {
      entries.push(entry);
      store();
      changed();
      pump();
    };
    self.busy = function () { return sending || entries.length > 0; };
    self.fail = function (text) { self.failureText = text; changed(); };

    function pump() {
      if (sending || sessionLost || !entries.length) return;
      sending = true;
      var entry = entries[0];
      api(entry.url, {
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
          entries.shift(); store();
          backoffMs = 0; self.failureText = "";
          options.onSaved(entry, result.body);
          pump();
        } else if (result.status >= 500 || result.status === 429 || result.status === 408) {
          retryLater("the server answered " + result.status);
        } else if (result.status === 401 || result.status === 403 ||
                   (result.status === 400 && /CSRF/.test((result.body && result.body.error) || ""))) {
          loseSession();   // the entry stays first in the queue
        } else {
          entries.shift(); store();
          self.failureText = "Not saved: " + ((result.body && result.body.error) || ("error " + result.status));
          options.onRejected(entry, self.failureText);
          pump();
        }
        changed();
      }, function () {
        sending = false;
        retryLater("the network is unavailable");
        changed();
      });
    }
    self.pump = pump;

    function retryLater(why) {
      backoffMs = Math.min(backoffMs ? backoffMs * 2 : 1000, 30000);
      var retryAt = Date.now() + backoffMs;
      function tick() {
        var left = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
        self.failureText = "Not saved yet: " + why + ". Retrying in " + left + " s…";
        changed();
        if (left <= 0) { clearInterval(retryTimer); retryTimer = null; }
      }
      if (retryTimer) clearInterval(retryTimer);
      tick();
      retryTimer = setInterval(tick, 1000);
      setTimeout(pump, backoffMs);
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
      self.failureText = "Not saved yet: your session has ended. Log in again to send " +
        entries.length + (entries.length === 1 ? " judgement" : " judgements") +
        "; they are kept in this browser meanwhile.";
      $("relogin-text").textContent = self.failureText;
      checkSession();
    }
    function checkSession() {
      // logged in again (in another tab, or by the form here)? then take the new CSRF token
      return api(root.dataset.me).then(function (r) {
        if (r.status !== 200) return null;
        return r.json();
      }).then(function (me) {
        if (!me || !sessionLost) return;
        if (me.username !== root.dataset.username) {
          $("relogin-error").textContent = "This browser is now logged in as " + me.username +
            ": log in as " + root.dataset.username + " to send these judgements.";
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
      self.failureText = ""; backoffMs = 0;
      changed();
      pump();
    }
    $("relogin-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var password = $("relogin-password").value;
      var login = root.dataset.login;
      $("relogin-error").textContent = "Logging in…";
      fetch(login, {credentials: "same-origin"}).then(function (r) {
        return r.text();
      }).then(function (html) {
        var form = new URLSearchParams();
        form.set("username", root.dataset.username);
        form.set("password", password);
        form.set("csrf_token", pageToken(html) || "");
        return fetch(login, {method: "POST", body: form, credentials: "same-origin"});
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

    function renderStatus() {
      var el = $("save-status");
      el.classList.remove("ok", "busy", "bad");
      if (self.failureText) { el.textContent = self.failureText; el.classList.add("bad"); }
      else if (entries.length) { el.textContent = "Saving " + entries.length + "…"; el.classList.add("busy"); }
      else { el.textContent = "All judgements saved"; el.classList.add("ok"); }
    }
    self.renderStatus = renderStatus;
    window.addEventListener("beforeunload", function (event) {
      if (entries.length) { event.preventDefault(); event.returnValue = ""; }
    });
    return self;
  }

  /* Active time per position: idle (no input for data-idle-ms) and hidden time excluded;
     a break reminder (#break-banner) after data-break-ms of active time. */
  function timer(root) {
    var IDLE_MS = parseInt(root.dataset.idleMs, 10) || 60000;
    var BREAK_MS = parseInt(root.dataset.breakMs, 10) || 0;  // 0: no break reminders
    var activeMs = {}, lastInput = Date.now(), lastTick = Date.now(), sinceBreakMs = 0;
    var self = {current: null};  // the position whose time runs now
    function touch() { lastInput = Date.now(); }
    ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart"].forEach(function (name) {
      window.addEventListener(name, touch, {passive: true, capture: true});
    });
    document.addEventListener("visibilitychange", function () { lastTick = Date.now(); touch(); });
    function add(pos) {
      var now = Date.now();
      if (!document.hidden && now - lastInput <= IDLE_MS) {
        if (pos !== null) activeMs[pos] = (activeMs[pos] || 0) + (now - lastTick);
        sinceBreakMs += now - lastTick;
      } else if (now - lastInput > 5 * IDLE_MS) {
        sinceBreakMs = 0;  // a long pause was a break
      }
      lastTick = now;
      if (BREAK_MS && sinceBreakMs >= BREAK_MS) $("break-banner").hidden = false;
    }
    setInterval(function () {
      var idle = document.hidden || Date.now() - lastInput > IDLE_MS;
      add(self.current);
      root.classList.toggle("idle", idle);
    }, 1000);
    self.moveTo = function (pos) { add(self.current); self.current = pos; };
    self.take = function (pos) {
      // the active time of a position, sent with its answer and then restarted
      if (pos === self.current) add(pos);
      var ms = Math.round(activeMs[pos] || 0);
      activeMs[pos] = 0;
      return ms;
    };
    $("break-dismiss").addEventListener("click", function () {
      $("break-banner").hidden = true;
      sinceBreakMs = 0;
    });
    return self;
  }

  /* The guidelines dialog: shown before the first judgement, reopened by its button;
     returns it (null when the campaign has none). */
  function guidelines() {
    var box = $("guidelines");
    if (!box) return null;
    $("guidelines-button").addEventListener("click", function () { box.showModal(); });
    if (box.dataset.showFirst === "1") box.showModal();
    return box;
  }

  /* The progress bar and text, and the done banner once every item is judged (with the next
     topic, asked for then: offerNextTopic). */
  function progress(judged, total) {
    $("progress").value = judged;
    $("progress").max = total || 1;
    $("progress-text").textContent = judged + " / " + total + " judged";
    doneBanner(judged >= total);
  }

  /* Show or hide the done banner; shown, it offers the next topic (asked for each time it is
     shown: another tab may have finished a topic meanwhile). */
  function doneBanner(done) {
    var banner = $("done-banner"), shown = !banner.hidden;
    banner.hidden = !done;
    if (done && !shown) offerNextTopic(document.querySelector("[data-next-topic]"));
  }

  /* The next assigned topic with something left to judge, from the server (the page's
     data-next-topic): {url, qid, title}, or null when none is waiting. */
  function findNextTopic(root) {
    return api(root.dataset.nextTopic).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.json();
    }).then(function (data) { return data.next; });
  }

  /* The done banner's offer (#next-topic): a link to the next topic, or to My topics. */
  function offerNextTopic(root) {
    var offer = $("next-topic");
    function say(before, href, text, after) {
      var link = document.createElement("a");
      link.href = href;
      link.textContent = text;
      offer.textContent = "";
      offer.appendChild(document.createTextNode(before));
      offer.appendChild(link);
      offer.appendChild(after);
      return link;
    }
    findNextTopic(root).then(function (next) {
      if (!next) {
        say("No other assigned topic is waiting: ", root.dataset.myTopics, "My topics",
            document.createTextNode("."));
        return;
      }
      var key = document.createElement("span");
      key.appendChild(document.createTextNode(" ("));
      key.appendChild(document.createElement("kbd")).textContent = "t";
      key.appendChild(document.createTextNode(")"));
      say("Next assigned topic: ", next.url,
          next.qid + (next.title ? " · " + next.title : "") + " →", key).className = "button primary";
    }).catch(function () {
      say("Your next topic could not be found just now: ", root.dataset.myTopics, "My topics",
          document.createTextNode("."));
    });
  }

  /* z: the server takes back the assessor's last answer (a new event of the log), queued
     after the answers not yet sent; the page's onSaved gets the entry (entry.undo) back. */
  function undo(q, url) {
    $("action-status").textContent = "Taking back your last answer…";
    q.add({undo: true, url: url, body: {client_id: uuid()}});
  }

  /* t: the next assigned topic with something left to judge, asked for now. */
  function nextTopic(root) {
    $("action-status").textContent = "Looking for your next assigned topic…";
    findNextTopic(root).then(function (next) {
      if (next) location.href = next.url;
      else $("action-status").textContent = "No other assigned topic is waiting.";
    }).catch(function () {
      $("action-status").textContent = "Your next topic could not be found just now: try again.";
    });
  }

  window.Judging = {queue: queue, timer: timer, guidelines: guidelines, progress: progress,
                    doneBanner: doneBanner, undo: undo, nextTopic: nextTopic, uuid: uuid,
                    api: api, $: $};
})();
