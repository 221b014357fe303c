// A form's POST sent by fetch instead of a page load: the same request the form sends, with the
// session's CSRF token (the form's csrf_token field) in the X-CSRF-Token header and JSON asked for.
// The form's button is disabled until `handle` has dealt with the response.
export async function postForm(form, handle) {
  const button = form.querySelector("button");
  const token = form.querySelector("input[name=csrf_token]").value;
  button.disabled = true;
  try {
    const response = await fetch(form.action, {
      method: "POST",
      headers: { "X-CSRF-Token": token, Accept: "application/json" },
      credentials: "same-origin",
    });
    await handle(response, button);
  } finally {
    button.disabled = false;
  }
}
