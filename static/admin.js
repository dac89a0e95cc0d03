// Admin pages: a form with data-confirm asks before it is sent. The message may name a
// field in braces, e.g. "Give {username} the role {role}?", filled from the form's values.
document.addEventListener("submit", (event) => {
  const form = event.target;
  const template = form.dataset ? form.dataset.confirm : undefined;
  if (!template) return;
  const message = template.replace(/\{(\w+)\}/g, (all, name) => {
    const field = form.elements[name];
    return field ? field.value : all;
  });
  if (!window.confirm(message)) event.preventDefault();
});
