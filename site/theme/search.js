// Search over every page of the static edition, no framework. The index is MyST's, one entry per section of a
// page (site/search.go writes it into search-index.js); it loads the first time the reader types. A section
// matches when it holds every word of the query; a word in its headings counts ten times a word in its text.
(() => {
  const input = document.getElementById("search");
  const panel = document.getElementById("search-results");
  if (!input || !panel) return;
  const most = 12;
  let loading = null;

  const fold = (s) => s.toLowerCase().replace(/[‘’]/g, "'").replace(/[“”]/g, '"');

  // load is the index, its text folded for matching, the first call adding search-index.js to the page.
  function load() {
    loading ??= new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "search-index.js";
      script.onload = () =>
        resolve(window.siteSearchIndex.map((e) => ({ ...e, heads: fold(e.page + " " + e.section), body: fold(e.text) })));
      script.onerror = () => reject(new Error("the search index (search-index.js) did not load"));
      document.head.append(script);
    });
    return loading;
  }

  function count(hay, word) {
    let n = 0;
    for (let i = hay.indexOf(word); i >= 0 && n < 50; i = hay.indexOf(word, i + word.length)) n++;
    return n;
  }

  // search is the best-scoring sections for words, in the chapter's order where scores tie.
  function search(entries, words) {
    const hits = [];
    for (const e of entries) {
      let score = 0;
      for (const w of words) {
        const heads = count(e.heads, w), body = count(e.body, w);
        if (heads + body === 0) {
          score = 0;
          break;
        }
        score += 10 * heads + body;
      }
      if (score > 0) hits.push({ e, score });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, most).map((h) => h.e);
  }

  // snippet writes into el the text around the first place where one of words is in e's text, each word marked.
  function snippet(el, e, words) {
    const found = words.map((w) => e.body.indexOf(w)).filter((i) => i >= 0);
    const at = found.length ? Math.min(...found) : 0;
    let start = Math.max(0, at - 60), end = Math.min(e.text.length, at + 100);
    const space = e.text.slice(start, at).search(/\s/); // begin and end at a word's edge
    if (start > 0 && space >= 0) start += space + 1;
    const back = e.text.slice(at, end).search(/\s\S*$/);
    if (end < e.text.length && back > 0) end = at + back;
    const text = (start > 0 ? "… " : "") + e.text.slice(start, end).replace(/\s+/g, " ") + (end < e.text.length ? " …" : "");
    const pattern = new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "gi");
    let last = 0;
    for (const m of text.matchAll(pattern)) {
      el.append(text.slice(last, m.index));
      const mark = document.createElement("mark");
      mark.textContent = m[0];
      el.append(mark);
      last = m.index + m[0].length;
    }
    el.append(text.slice(last));
  }

  function show(hits, words, query) {
    panel.replaceChildren();
    if (hits.length === 0) {
      const p = document.createElement("p");
      p.textContent = `Nothing found for “${query}”.`;
      panel.append(p);
    }
    const list = document.createElement("ol");
    for (const e of hits) {
      const a = document.createElement("a");
      a.href = e.url;
      const title = document.createElement("strong");
      title.textContent = e.section ? `${e.page} › ${e.section}` : e.page;
      const text = document.createElement("span");
      snippet(text, e, words);
      a.append(title, text);
      const li = document.createElement("li");
      li.append(a);
      list.append(li);
    }
    if (hits.length) panel.append(list);
    panel.hidden = false;
  }

  async function update() {
    const query = input.value.trim();
    const words = fold(query).split(/\s+/).filter(Boolean);
    if (words.length === 0) {
      panel.hidden = true;
      return;
    }
    let entries;
    try {
      entries = await load();
    } catch (err) {
      panel.textContent = String(err.message);
      panel.hidden = false;
      return;
    }
    if (input.value.trim() === query) show(search(entries, words), words, query);
  }

  input.addEventListener("input", update);
  input.addEventListener("focus", () => {
    load().catch(() => {});
    if (input.value.trim()) update();
  });
  input.addEventListener("keydown", (e) => {
    const first = panel.querySelector("a");
    if (e.key === "Enter" && first) first.click();
    if (e.key === "ArrowDown" && first) {
      e.preventDefault();
      first.focus();
    }
    if (e.key === "Escape") panel.hidden = true;
  });
  panel.addEventListener("keydown", (e) => {
    const links = [...panel.querySelectorAll("a")];
    const i = links.indexOf(document.activeElement);
    if (e.key === "ArrowDown" && i >= 0 && i + 1 < links.length) links[i + 1].focus();
    else if (e.key === "ArrowUp" && i > 0) links[i - 1].focus();
    else if (e.key === "ArrowUp" && i === 0) input.focus();
    else if (e.key === "Escape") {
      panel.hidden = true;
      input.focus();
    } else return;
    e.preventDefault();
  });
  document.addEventListener("click", (e) => {
    if (!panel.contains(e.target) && e.target !== input) panel.hidden = true;
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && document.activeElement === document.body) {
      e.preventDefault();
      input.focus();
    }
  });
})();
