// Follow / unfollow without a reload: the same POST the form sends, by fetch (post-form.js, the
// session's CSRF token in the X-CSRF-Token header). Without JavaScript the form works on its own.
import { postForm } from "./post-form.js";

document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.follow) return;
  event.preventDefault();
  await postForm(form, async (response, button) => {
    if (!response.ok) { form.submit(); return; }
    const { following } = await response.json();
    const id = form.dataset.follow;
    form.action = `/researchers/${id}/${following ? "unfollow" : "follow"}`;
    button.textContent = following ? "Following" : "Follow";
    button.classList.toggle("secondary", following);
    button.setAttribute("aria-pressed", String(following));
  });
});
