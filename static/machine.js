// The machine-judging job page: polls the job's JSON and moves the progress bar until the
// job is no longer queued or running.
(function () {
  "use strict";
  const card = document.getElementById("machine-job");
  if (!card) return;
  const url = card.dataset.statusUrl;
  const set = (id, text) => { document.getElementById(id).textContent = text; };
  function show(job) {
    const bar = document.getElementById("job-progress");
    bar.max = job.total;
    bar.value = job.done;
    set("job-count", `${job.done} of ${job.total}`);
    set("job-percent", job.percent.toFixed(1));
    set("job-status", job.status);
    set("job-calls", job.calls);
    set("job-cached", job.cached);
    set("job-tokens", job.tokens);
    set("job-cannot", job.cannot_judge);
    set("job-cost", job.cost.toFixed(4));
    const error = document.getElementById("job-error");
    error.textContent = job.error;
    error.hidden = !job.error;
  }
  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((job) => {
        show(job);
        if (job.status === "queued" || job.status === "running") setTimeout(poll, 1000);
      })
      .catch(() => setTimeout(poll, 5000));
  }
  poll();
})();
