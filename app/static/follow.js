// Follow / unfollow without a reload: the same POST the form sends, by fetch, with the session's
// CSRF token in the X-CSRF-Token header. Without JavaScript the form works on its own.
document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.follow) return;
  event.preventDefault();
  const button = form.querySelector("button");
  const token = form.querySelector("input[name=csrf_token]").value;
  button.disabled = true;
  try {
    const response = await fetch(form.action, {
      method: "POST",
      headers: { "X-CSRF-Token": token, Accept: "application/json" },
      credentials: "same-origin",
    });
    if (!response.ok) { form.submit(); return; }
    const { following } = await response.json();
    const id = form.dataset.follow;
    form.action = `/researchers/${id}/${following ? "unfollow" : "follow"}`;
    button.textContent = following ? "Following" : "Follow";
    button.classList.toggle("secondary", following);
    button.setAttribute("aria-pressed", String(following));
  } finally {
    button.disabled = false;
  }
});
