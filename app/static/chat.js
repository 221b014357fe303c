// The chat dock (every page, for a signed-in person) and the /chat page, in plain JS.
//
// A question is POSTed to /api/chat with the session's CSRF token in a header, so the answer's
// server-sent events are read from fetch()'s body stream (EventSource can only GET): first the
// evidence passages, then the answer token by token, then the checked references and flags.
// Model output is untrusted: it is rendered by markdown-it (vendored, pinned) with raw HTML off,
// links only to http(s) or this site, and images shown as their alt text (the CSP allows no
// outside images anyway). Everything else is put in the page with textContent, never innerHTML.

import markdownit from "./vendor/markdown-it-15.0.3.min.js";

// -- rendering model output ------------------------------------------------------------------

const SAFE_LINK = /^(?:https?:\/\/|\/(?![/\\])|#)/i;
const CITATION = /\[(\d{1,3})\]/g;

export const md = markdownit("default", { html: false, linkify: false, typographer: false });
md.validateLink = (url) => SAFE_LINK.test(url.trim());
md.renderer.rules.image = (tokens, idx) =>
  `<span class="md-image">[image: ${md.utils.escapeHtml(tokens[idx].content)}]</span>`;
const defaultLinkOpen = md.renderer.rules.link_open ?? ((t, i, o, e, self) => self.renderToken(t, i, o));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const href = tokens[idx].attrGet("href") ?? "";
  if (!href.startsWith("/") && !href.startsWith("#")) tokens[idx].attrSet("rel", "nofollow noopener noreferrer");
  return defaultLinkOpen(tokens, idx, options, env, self);
};

// "[n]" in text (not inside a link or code) becomes a link to the cited paper's page, once the
// references are known (env.refs: n → reference); while the answer streams it stays text.
md.core.ruler.push("citations", (state) => {
  const refs = state.env?.refs;
  if (!refs || refs.size === 0) return;
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const out = [];
    let inLink = 0;
    for (const token of block.children) {
      if (token.type === "link_open") inLink += 1;
      if (token.type === "link_close") inLink -= 1;
      if (token.type !== "text" || inLink > 0) { out.push(token); continue; }
      let last = 0;
      for (const match of token.content.matchAll(CITATION)) {
        const ref = refs.get(Number(match[1]));
        if (!ref) continue;
        if (match.index > last) out.push(textToken(state, token.content.slice(last, match.index)));
        const open = new state.Token("link_open", "a", 1);
        // Our page reader at the cited quote (the paper's page when the passage has no page).
        open.attrs = [["href", atQuote(ref.reader_url) || ref.paper_url], ["class", "cite"], ["title", refTitle(ref)]];
        out.push(open, textToken(state, match[0]), new state.Token("link_close", "a", -1));
        last = match.index + match[0].length;
      }
      if (last === 0) { out.push(token); continue; }
      if (last < token.content.length) out.push(textToken(state, token.content.slice(last)));
    }
    block.children = out;
  }
});

function textToken(state, content) {
  const token = new state.Token("text", "", 0);
  token.content = content;
  return token;
}

function pagesText(pages) {
  if (!pages || pages.length === 0) return "";
  const first = pages[0], last = pages[pages.length - 1];
  return first === last ? `p. ${first}` : `pp. ${first}–${last}`;
}

/** Our page reader at ``page`` of passage ``p``'s paper, with ``quote`` highlighted there. */
function readerHref(p, page, quote) {
  if (!p?.arxiv_id || !page) return null;
  const text = (quote ?? "").replace(/\s+/g, " ").trim().slice(0, 500);
  return `/papers/${p.arxiv_id}/pages/${page}` + (text ? `?quote=${encodeURIComponent(text)}#quote` : "");
}

/** A reader address scrolled to its highlighted quote (``#quote``, the first mark on the page). */
const atQuote = (url) => (url && url.includes("?quote=") ? `${url}#quote` : url);

/** The arXiv PDF, second to our reader: " · arXiv PDF". */
function arxivLink(url) {
  return url ? [" · ", link(url, "arXiv PDF", { class: "arxiv-pdf", rel: "noreferrer" })] : [];
}

function refTitle(ref) {
  const pages = pagesText(ref.pages);
  return pages ? `${ref.title}, ${pages}` : ref.title;
}

/** Model markdown → safe HTML; ``references`` (from the citations event) turn [n] into links. */
export function renderAnswer(text, references = []) {
  return md.render(text, { refs: new Map(references.map((r) => [r.n, r])) });
}

// -- the wire --------------------------------------------------------------------------------

const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content ?? "";

async function api(method, path, body) {
  const headers = { Accept: "application/json", "X-CSRF-Token": csrfToken() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(await problem(response));
  return response.status === 204 ? null : response.json();
}

/** What went wrong, in words: the API's ``detail`` when it sent one. */
async function problem(response) {
  let detail = "";
  try { detail = (await response.json()).detail ?? ""; } catch { /* not JSON */ }
  const retry = response.headers.get("Retry-After");
  if (response.status === 429) return `${detail || "Too many questions."}${retry ? ` Try again in ${retry} s.` : ""}`;
  if (response.status === 401) return "Your session has ended: sign in again.";
  return detail || `The server answered ${response.status}.`;
}

/** Server-sent events from a fetch() body: yields {name, data} with ``data`` parsed as JSON. */
export async function* readEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      const event = parseEvent(block);
      if (event) yield event;
    }
  }
}

function parseEvent(block) {
  let name = "";
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === "" || line.startsWith(":")) continue; // ": ping" keeps proxies from timing out
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return null;
  const payload = JSON.parse(data.join("\n"));
  return { name: name || payload.type || payload.event || "message", data: payload };
}

// -- building the page -----------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

/** Only this site's paths (or http(s)) become hrefs; anything else is shown unlinked. */
const safeHref = (url) => (typeof url === "string" && SAFE_LINK.test(url) ? url : null);

function link(url, text, attrs = {}) {
  const href = safeHref(url);
  return href ? el("a", { href, text, ...attrs }) : el("span", { text });
}

/** The passage's text with ``quote`` (offsets in it) marked, starting a little before the mark so a
 * clamped box shows it. */
function passageText(text, quote) {
  const box = el("blockquote");
  if (!quote || !(quote.start >= 0 && quote.end <= text.length && quote.start < quote.end)) {
    box.textContent = text;
    return box;
  }
  const from = Math.max(0, text.lastIndexOf(" ", Math.max(0, quote.start - 120)));
  box.append(
    from > 0 ? "… " + text.slice(from, quote.start).trimStart() : text.slice(0, quote.start),
    el("mark", { text: text.slice(quote.start, quote.end) }),
    text.slice(quote.end));
  box.classList.add("has-quote");
  return box;
}

function evidenceList(passages, quotes = []) {
  // Not numbered: the answer's [n] are the references' numbers, marked on the passages they cite.
  const list = el("ul", { class: "evidence-list" });
  for (const p of passages) {
    const pages = pagesText(p.pages);
    const quote = quotes.find((q) => q.key === p.key);
    const page = quote?.page ?? (p.pages ?? [])[0];
    list.append(el("li", { dataset: { key: p.key ?? "" } },
      el("p", { class: "evidence-source" },
        link(p.paper_url, p.title),
        pages ? " · " : null,
        pages ? link(readerHref(p, page, quote?.text), pages, { class: "pdf-page" }) : null,
        ...(pages ? arxivLink(p.pdf_url) : []),
        // Shown for its key quote only: the model did not read it, so the answer cannot cite it.
        p.read_by_model === false ? el("span", { class: "unread", text: " · quoted here, not read by the model" }) : null),
      passageText(p.quote ?? "", quote)));
  }
  return list;
}

/** "From the papers": the key quotes, found without the model, each with its paper and page. */
function quoteList(quotes, passages) {
  const list = el("ol", { class: "key-quotes" });
  for (const q of quotes) {
    const p = passages.find((x) => x.key === q.key) ?? {};
    const page = q.page ?? (p.pages ?? [])[0];
    const pdf = p.pdf_url ? p.pdf_url.replace(/#page=\d+$/, "") + (page ? `#page=${page}` : "") : null;
    list.append(el("li", { dataset: { key: q.key ?? "" } },
      el("blockquote", { text: q.text ?? "" }),
      el("p", { class: "evidence-source" },
        link(p.paper_url, p.title ?? "the paper"),
        page ? " · " : null,
        // All the pages the quote's passage spans: a quote in a chunk across a page break may be on either.
        page ? link(readerHref(p, page, q.text), pagesText(q.pages?.length ? q.pages : [page]), { class: "pdf-page" }) : null,
        ...(page ? arxivLink(pdf) : []))));
  }
  return list;
}

function referenceList(references) {
  const list = el("ol", { class: "references" });
  for (const ref of references) {
    const pages = pagesText(ref.pages);
    list.append(el("li", { value: String(ref.n) },
      link(ref.paper_url, ref.title),
      ` (arXiv:${ref.arxiv_id})`,
      pages ? " · " : null,
      pages ? link(atQuote(ref.reader_url) || ref.pdf_url, pages, { class: "pdf-page" }) : null,
      ...(pages && ref.reader_url ? arxivLink(ref.pdf_url) : [])));
  }
  return list;
}

const FLAG_WORDS = {
  not_stated: "Not stated in the cited passage",
  quote: "Quotation not found in the cited passage",
  number: "Number not found in any cited passage",
  sentence: "Sentence not supported by any passage",
};

/** Marks, in the rendered answer, the sentences the checks found not stated in what they cite. */
function markNotStated(container, sentences) {
  for (const sentence of sentences) {
    const probe = sentence.slice(0, 40);
    if (probe.length < 8) continue;
    const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.data.indexOf(probe);
      if (at < 0 || node.parentElement.closest("mark")) continue;
      const marked = node.splitText(at);
      const rest = marked.data.length > sentence.length ? marked.splitText(sentence.length) : null;
      const mark = el("mark", { class: "not-stated", title: "Not stated in the cited passage" });
      marked.replaceWith(mark);
      mark.append(marked, el("span", { class: "visually-hidden", text: " (not stated in the cited passage)" }));
      void rest;
      break;
    }
  }
}

/** One question and its answer, filled in as the events arrive (or at once, from history). */
class Turn {
  constructor(log, question) {
    this.text = "";
    this.references = [];
    this.node = el("article", { class: "turn" });
    this.node.append(el("p", { class: "question" }, el("span", { class: "visually-hidden", text: "You asked: " }), question));
    // No landmarks per turn (a conversation has many): the "Evidence" heading line says what follows.
    this.evidence = el("div", { class: "evidence" });
    this.answer = el("div", { class: "answer" });
    this.after = el("div", { class: "after" });
    this.node.append(this.evidence, this.answer, this.after);
    log.append(this.node);
    this.pending = false;
  }

  showEvidence(passages, quotes = []) {
    this.evidence.replaceChildren(
      quotes.length ? el("p", { class: "eyebrow", text: "From the papers" }) : null,
      quotes.length ? quoteList(quotes, passages) : null,
      el("p", { class: "eyebrow", text: passages.length ? `Evidence · ${passages.length} passage${passages.length === 1 ? "" : "s"}` : "No passages found" }),
      passages.length ? evidenceList(passages, quotes) : null);
  }

  addToken(text) {
    this.text += text;
    if (this.pending) return;
    this.pending = true; // re-render at most once a frame, however fast tokens come
    requestAnimationFrame(() => { this.pending = false; this.render(); });
  }

  render() {
    this.answer.innerHTML = renderAnswer(this.text, this.references); // markdown-it, html off
    markNotStated(this.answer, this.notStated ?? []);
  }

  showCitations({ answer = "", references = [], unsupported = false, flags = [], note = null }) {
    // The checked answer replaces the streamed one: the code may have added a citation, or moved
    // one to the passage that states the sentence; its numbers are the references'.
    if (answer && this.text) this.text = answer;
    this.references = references;
    this.notStated = flags.filter((f) => f.kind === "not_stated").map((f) => f.text);
    this.render();
    for (const ref of references) {
      for (const item of this.evidence.querySelectorAll("li")) {
        if (item.dataset.key === ref.key) item.querySelector(".evidence-source").prepend(el("span", { class: "cited", text: `[${ref.n}]` }));
      }
    }
    const parts = [];
    if (note) parts.push(el("p", { class: "model-note", role: "note", text: note }));
    if (unsupported) parts.push(el("p", { class: "unsupported", role: "note", text: "Unsupported: this answer cites none of the passages found. Check it against the evidence above." }));
    if (flags.length) {
      const list = el("ul", { class: "flags", "aria-label": "Checks that failed" });
      for (const f of flags) {
        list.append(el("li", {}, el("strong", { text: `${FLAG_WORDS[f.kind] ?? "Check failed"}: ` }), `“${f.text}”`, f.detail ? el("span", { class: "soft", text: ` — ${f.detail}` }) : null));
      }
      parts.push(list);
    }
    if (references.length) parts.push(el("p", { class: "eyebrow", text: "References" }), referenceList(references));
    this.after.replaceChildren(...parts);
  }

  showNotice(text) {
    if (text) this.after.prepend(el("p", { class: "notice", role: "note", text }));
  }

  showError(text) {
    this.after.append(el("p", { class: "notice error", role: "alert", text }));
  }

  busy(on) {
    this.answer.setAttribute("aria-busy", String(on));
    if (!on && this.text === "") this.answer.hidden = true; // evidence-only answers: no empty box
  }
}

// -- the chat panel --------------------------------------------------------------------------

const STATUS_WORDS = {
  ready: (s) => `Language model ready${s.model ? ` (${s.model})` : ""}.`,
  installing: (s) => `The language model is being installed${s.progress != null ? ` (${Math.round(s.progress * 100)} %)` : ""}; until then answers show the evidence passages.`,
  starting: () => "The language model is starting; until then answers show the evidence passages.",
  down: () => "The language model is unavailable; answers show the evidence passages.",
  disabled: () => "No language model is configured; answers show the evidence passages.",
};

const FULL_TEXT_PENDING = new Set(["queued", "fetching", "parsing", "indexing"]);

class ChatPanel {
  constructor(root, { onDone, onReset } = {}) {
    this.root = root;
    this.onDone = onDone;
    this.onReset = onReset;
    this.conversationId = null;
    this.scope = new Map(); // arxiv id → title
    this.controller = null;
    const $ = (name) => root.querySelector(`[data-chat-${name}]`);
    this.log = $("log");
    this.form = $("form");
    this.question = $("question");
    this.send = $("send");
    this.stop = $("stop");
    this.status = $("status");
    this.chips = $("chips");
    this.scopeLabel = $("scope-label");
    this.mentions = $("mentions");
    this.announce = $("announce");
    this.form.addEventListener("submit", (e) => { e.preventDefault(); this.ask(); });
    this.question.addEventListener("keydown", (e) => this.onKey(e));
    this.question.addEventListener("input", () => this.onInput());
    this.stop.addEventListener("click", () => this.controller?.abort());
    $("new").addEventListener("click", () => this.reset());
    this.mentions.addEventListener("keydown", (e) => this.onMentionKey(e));
  }

  reset() {
    this.controller?.abort();
    this.conversationId = null;
    this.log.replaceChildren();
    this.question.focus();
    this.onReset?.();
  }

  // scope -------------------------------------------------------------------------------------
  setScope(papers) {
    this.scope = new Map(papers);
    this.drawScope();
  }

  addToScope(id, title) {
    this.scope.set(id, title);
    this.drawScope();
  }

  drawScope() {
    this.chips.replaceChildren(...[...this.scope].map(([id, title]) => {
      const remove = el("button", { type: "button", class: "chip-remove", "aria-label": `Remove ${title} from the scope`, text: "×" });
      remove.addEventListener("click", () => { this.scope.delete(id); this.drawScope(); this.question.focus(); });
      return el("li", { class: "chip" }, el("span", { text: title, title: `arXiv:${id}` }), remove);
    }));
    const n = this.scope.size;
    this.scopeLabel.textContent = n === 0 ? "Scope: the whole archive" : `Scope: ${n === 1 ? "this paper" : `${n} papers`}`;
    this.checkFullText();
  }

  // full text of the papers in scope: a paper held only as its abstract says so and offers to
  // get the full text (the same POST as the paper page's button), then follows its state -------
  async checkFullText() {
    clearTimeout(this.fullTextTimer);
    const round = (this.fullTextRound = (this.fullTextRound ?? 0) + 1);
    if (!this.fullTextNote) {
      this.fullTextNote = el("div", { class: "chat-fulltext soft", role: "status" });
      this.chips.after(this.fullTextNote);
    }
    const lines = [];
    let pending = false;
    for (const [id, title] of [...this.scope].slice(0, 5)) {
      let state;
      try { state = await api("GET", `/api/papers/${id}/fulltext`); } catch { continue; }
      if (round !== this.fullTextRound) return; // the scope changed meanwhile
      if (state.held) continue;
      const words = state.state === "none" ? `Only the abstract of “${title}” is held here.` : `“${title}”: ${state.message}`;
      const line = el("p", {}, el("span", { text: words }));
      if (state.can_request) {
        const get = el("button", { type: "button", class: "button secondary", text: "Get the full text" });
        get.addEventListener("click", async () => {
          get.disabled = true;
          try { await api("POST", `/api/papers/${id}/fulltext`); this.checkFullText(); } catch (error) {
            line.append(el("span", { text: ` ${error.message}` }));
          }
        });
        line.append(" ", get);
      }
      pending ||= FULL_TEXT_PENDING.has(state.state);
      lines.push(line);
    }
    this.fullTextNote.replaceChildren(...lines);
    if (pending) this.fullTextTimer = setTimeout(() => this.checkFullText(), 3000);
  }

  // @-mentions --------------------------------------------------------------------------------
  mentionAt() {
    const before = this.question.value.slice(0, this.question.selectionStart);
    const found = /(?:^|\s)@([^\s@]{2,80})$/.exec(before);
    return found ? { term: found[1], start: before.length - found[1].length - 1 } : null;
  }

  onInput() {
    clearTimeout(this.mentionTimer);
    const mention = this.mentionAt();
    if (!mention) { this.hideMentions(); return; }
    this.mentionTimer = setTimeout(() => this.suggest(mention.term), 200);
  }

  async suggest(term) {
    const params = new URLSearchParams({ q: term, size: "6" }); // hybrid: a partial word still finds
    let items = [];
    try {
      const answer = await api("GET", `/api/search?${params}`);
      items = answer.items ?? [];
    } catch { items = []; }
    if (this.mentionAt()?.term !== term) return; // typed on meanwhile
    this.mentions.replaceChildren(...items.map((item) => {
      const choose = el("button", { type: "button", class: "mention", dataset: { id: item.arxiv_id } },
        el("span", { text: item.title }), el("span", { class: "soft", text: ` arXiv:${item.arxiv_id}` }));
      choose.addEventListener("click", () => this.choose(item.arxiv_id, item.title));
      return el("li", {}, choose);
    }));
    this.mentions.hidden = items.length === 0;
    this.announce.textContent = items.length
      ? `${items.length} paper${items.length === 1 ? "" : "s"} match; the down arrow reaches them.`
      : `No paper matches ${term}.`;
  }

  hideMentions() {
    this.mentions.hidden = true;
    this.mentions.replaceChildren();
  }

  choose(id, title) {
    const mention = this.mentionAt();
    if (mention) {
      const value = this.question.value;
      this.question.value = value.slice(0, mention.start) + value.slice(this.question.selectionStart).replace(/^\s*/, "");
    }
    this.addToScope(id, title);
    this.hideMentions();
    this.announce.textContent = `${title} added to the scope.`;
    this.question.focus();
  }

  onKey(event) {
    if (event.key === "ArrowDown" && !this.mentions.hidden) {
      event.preventDefault();
      this.mentions.querySelector("button")?.focus();
    } else if (event.key === "Escape" && !this.mentions.hidden) {
      event.stopPropagation();
      this.hideMentions();
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.form.requestSubmit();
    }
  }

  onMentionKey(event) {
    const buttons = [...this.mentions.querySelectorAll("button")];
    const at = buttons.indexOf(document.activeElement);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = at + (event.key === "ArrowDown" ? 1 : -1);
      if (next < 0) this.question.focus();
      else buttons[Math.min(next, buttons.length - 1)].focus();
    } else if (event.key === "Escape") {
      event.stopPropagation();
      this.hideMentions();
      this.question.focus();
    }
  }

  // status ------------------------------------------------------------------------------------
  async refreshStatus() {
    clearTimeout(this.statusTimer);
    let status;
    try { status = await api("GET", "/api/chat/status"); } catch { this.status.textContent = ""; return; }
    this.status.textContent = (STATUS_WORDS[status.state] ?? (() => status.detail ?? ""))(status);
    this.status.dataset.state = status.state;
    if (status.state === "installing" || status.state === "starting") {
      this.statusTimer = setTimeout(() => this.refreshStatus(), 5000);
    }
  }

  // asking ------------------------------------------------------------------------------------
  async ask() {
    const question = this.question.value.trim();
    if (!question || this.controller) return;
    this.hideMentions();
    const turn = new Turn(this.log, question);
    this.question.value = "";
    this.running(true);
    turn.busy(true);
    this.controller = new AbortController();
    try {
      const response = await fetch("/api/chat", {
        method: "POST",
        credentials: "same-origin",
        signal: this.controller.signal,
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", "X-CSRF-Token": csrfToken() },
        body: JSON.stringify({
          question,
          conversation_id: this.conversationId,
          papers: this.scope.size ? [...this.scope.keys()] : null,
        }),
      });
      if (!response.ok) { turn.showError(await problem(response)); return; }
      for await (const { name, data } of readEvents(response)) {
        if (name === "evidence") {
          this.conversationId = data.conversation_id ?? this.conversationId;
          turn.showEvidence(data.passages ?? [], data.quotes ?? []);
          this.announce.textContent = `Found ${data.quotes?.length ?? 0} key quotes in ${data.passages?.length ?? 0} passages; the answer follows.`;
        } else if (name === "token") turn.addToken(data.text ?? "");
        else if (name === "citations") turn.showCitations(data);
        else if (name === "done") {
          this.conversationId = data.conversation_id ?? this.conversationId;
          turn.showNotice(data.notice);
          this.announce.textContent = "The answer is complete.";
          this.onDone?.(this.conversationId);
        } else if (name === "error") turn.showError(data.message ?? "The answer failed.");
      }
    } catch (error) {
      if (error.name === "AbortError") turn.showNotice("Stopped.");
      else turn.showError(`The answer was cut off: ${error.message}`);
    } finally {
      turn.render();
      turn.busy(false);
      this.controller = null;
      this.running(false);
    }
  }

  running(on) {
    this.send.disabled = on;
    this.stop.hidden = !on;
    this.root.setAttribute("aria-busy", String(on));
  }

  /** A stored conversation, shown as it was answered. */
  show(conversation) {
    this.controller?.abort();
    this.conversationId = conversation.id;
    this.setScope((conversation.scope ?? []).map((p) => [p.arxiv_id, p.title]));
    this.log.replaceChildren();
    let turn = null;
    for (const message of conversation.messages ?? []) {
      if (message.role === "user") { turn = new Turn(this.log, message.text); continue; }
      turn ??= new Turn(this.log, "");
      turn.showEvidence(message.passages ?? [], message.quotes ?? []);
      turn.text = message.text ?? "";
      turn.showCitations(message);
      turn.showNotice(message.notice);
      turn.busy(false);
      turn = null;
    }
  }
}

// -- history (the /chat page) ----------------------------------------------------------------

class History {
  constructor(page, panel) {
    this.panel = panel;
    this.list = page.querySelector("[data-chat-history]");
    this.empty = page.querySelector("[data-chat-history-empty]");
  }

  async load() {
    let conversations;
    try { conversations = await api("GET", "/api/chat/conversations"); } catch (error) {
      this.empty.textContent = `The history could not be loaded: ${error.message}`;
      return;
    }
    this.empty.hidden = conversations.length > 0;
    this.list.replaceChildren(...conversations.map((c) => this.item(c)));
  }

  item(c) {
    const title = c.title || "Untitled conversation";
    const open = el("a", { href: `/chat?c=${c.id}`, class: "conversation-title", text: title });
    if (c.id === this.panel.conversationId) open.setAttribute("aria-current", "true");
    open.addEventListener("click", (e) => { e.preventDefault(); this.open(c.id); });
    const when = c.updated_at ? new Date(c.updated_at).toLocaleString() : "";
    const rename = el("button", { type: "button", class: "button secondary small", "aria-label": `Rename ${title}`, text: "Rename" });
    const remove = el("button", { type: "button", class: "button secondary small", "aria-label": `Delete ${title}`, text: "Delete" });
    const exported = el("a", { href: `/api/chat/conversations/${c.id}.md`, download: `conversation-${c.id}.md`, class: "small", "aria-label": `Export ${title} as markdown`, text: "Export" });
    const li = el("li", { dataset: { id: String(c.id) } },
      open, el("span", { class: "soft small", text: ` ${c.messages ?? 0} messages${when ? ` · ${when}` : ""}` }),
      el("span", { class: "conversation-actions" }, rename, remove, exported));
    rename.addEventListener("click", () => this.rename(li, c));
    remove.addEventListener("click", () => this.remove(c, title));
    return li;
  }

  async open(id) {
    try {
      this.panel.show(await api("GET", `/api/chat/conversations/${id}`));
      history.replaceState(null, "", `/chat?c=${id}`);
      await this.load();
      this.panel.question.focus();
    } catch (error) {
      this.empty.hidden = false;
      this.empty.textContent = `That conversation could not be opened: ${error.message}`;
    }
  }

  rename(li, c) {
    const id = `rename-${c.id}`;
    const input = el("input", { id, type: "text", maxlength: "200", required: true, value: c.title ?? "" });
    const form = el("form", { class: "rename" },
      el("label", { for: id, class: "visually-hidden", text: "New title" }), input,
      el("button", { type: "submit", class: "button small", text: "Save" }),
      el("button", { type: "button", class: "button secondary small", text: "Cancel", dataset: { cancel: "" } }));
    form.querySelector("[data-cancel]").addEventListener("click", () => this.load());
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try { await api("PATCH", `/api/chat/conversations/${c.id}`, { title: input.value.trim() }); } catch (error) {
        form.append(el("p", { class: "notice error", role: "alert", text: error.message }));
        return;
      }
      await this.load();
    });
    li.replaceChildren(form);
    input.focus();
    input.select();
  }

  async remove(c, title) {
    if (!window.confirm(`Delete “${title}”? This cannot be undone.`)) return;
    try { await api("DELETE", `/api/chat/conversations/${c.id}`); } catch (error) {
      this.empty.hidden = false;
      this.empty.textContent = `It could not be deleted: ${error.message}`;
      return;
    }
    if (this.panel.conversationId === c.id) this.panel.reset(); // also back to /chat
    await this.load();
  }
}

// -- start -----------------------------------------------------------------------------------

function startDock() {
  const dock = document.querySelector("[data-chat-dock]");
  const root = dock?.querySelector("[data-chat]");
  if (!root) return;
  // The dock's conversation follows the reader from page to page (this tab only).
  const KEY = "wovepaper.chat.dock";
  const full = dock.querySelector("[data-chat-full]");
  const panel = new ChatPanel(root, {
    onDone: (id) => { sessionStorage.setItem(KEY, String(id)); full?.setAttribute("href", `/chat?c=${id}`); },
    onReset: () => { sessionStorage.removeItem(KEY); full?.setAttribute("href", "/chat"); },
  });
  let resumed = false;
  dock.addEventListener("toggle", async () => {
    if (!dock.open) return;
    panel.refreshStatus();
    panel.question.focus();
    const id = Number(sessionStorage.getItem(KEY));
    if (resumed || !id || panel.conversationId) return;
    resumed = true;
    try {
      panel.show(await api("GET", `/api/chat/conversations/${id}`));
      full?.setAttribute("href", `/chat?c=${id}`);
      root.querySelector("[data-chat-log]").lastElementChild?.scrollIntoView({ block: "end" });
    } catch { sessionStorage.removeItem(KEY); } // deleted meanwhile, or signed out
  });
  dock.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !dock.open) return;
    dock.open = false;
    dock.querySelector("summary").focus();
  });
  // "Chat with this paper": the dock opens with that paper as the scope (the link itself goes to /chat).
  for (const button of document.querySelectorAll("a[data-chat-paper]")) {
    button.addEventListener("click", (event) => {
      event.preventDefault();
      panel.reset();
      panel.setScope([[button.dataset.chatPaper, button.dataset.chatTitle]]);
      dock.open = true;
      panel.question.focus();
    });
  }
}

function startPage() {
  const page = document.querySelector("[data-chat-page]");
  if (!page) return;
  let past = null;
  const panel = new ChatPanel(page.querySelector("[data-chat]"), {
    onDone: (id) => { history.replaceState(null, "", `/chat?c=${id}`); past.load(); },
    onReset: () => { history.replaceState(null, "", "/chat"); past?.load(); },
  });
  past = new History(page, panel);
  if (page.dataset.chatPaper) panel.setScope([[page.dataset.chatPaper, page.dataset.chatTitle]]);
  panel.refreshStatus();
  const open = Number(page.dataset.chatOpen);
  if (open) past.open(open); else past.load();
  panel.question.focus();
}

if (typeof document !== "undefined") {
  startDock();
  startPage();
}
