// Full text on request. The "Get the full text" form is sent by fetch (post-form.js, the session's
// CSRF token in the X-CSRF-Token header), then the paper's full-text state is polled until it
// settles, so the page shows queued → fetching → parsing → indexing → indexed (or failed) without a
// reload.
// Without JavaScript the form posts on its own and the page comes back with the state.
import { postForm } from "./post-form.js";

const PENDING = new Set(["queued", "fetching", "parsing", "indexing"]);
const POLL_MS = 2000;

function show(section, state) {
  section.dataset.fullTextState = state.state;
  section.querySelector("[data-full-text-message]").textContent = state.message;
  const form = section.querySelector("[data-full-text-form]");
  if (form) form.hidden = !state.can_request;
  if (PENDING.has(state.state)) follow(section, POLL_MS);
}

function follow(section, delay) {
  if (section.dataset.fullTextPolling) return; // one poll at a time
  section.dataset.fullTextPolling = "1";
  setTimeout(async () => {
    let next = POLL_MS * 3; // after a failed poll (offline for a moment), wait longer
    try {
      const response = await fetch(`/api/papers/${section.dataset.fullText}/fulltext`, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.ok) {
        delete section.dataset.fullTextPolling;
        show(section, await response.json());
        return;
      }
    } catch (_error) {
      // the network is away: try again below
    }
    delete section.dataset.fullTextPolling;
    follow(section, next);
  }, delay);
}

document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-full-text-form")) return;
  event.preventDefault();
  const section = form.closest("[data-full-text]");
  try {
    await postForm(form, async (response) => {
      const body = await response.json().catch(() => ({}));
      if (!response.ok) {
        section.querySelector("[data-full-text-message]").textContent =
          body.detail || `The request was refused (HTTP ${response.status}).`;
        return;
      }
      show(section, body);
    });
  } catch (_error) {
    form.submit(); // let the browser send it and show what the server says
  }
});

for (const section of document.querySelectorAll("[data-full-text]")) {
  if (PENDING.has(section.dataset.fullTextState)) follow(section, POLL_MS);
}
