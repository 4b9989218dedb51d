// atlas.assets: a snippet under each search result, drawn from the index (atlas_text: per page,
// [anchor, the start of the section's prose]), so that search works the same from disk, where
// Sphinx's fetch of each result's page fails, as over HTTP. The snippet is the section the
// result points at, else the page's first section holding the query (else one of its words),
// else the page's first; the query's words are marked as Sphinx marks them (span.highlighted).
(() => {
  const results = document.getElementById("search-results");
  if (!results || typeof Search === "undefined") return;

  const query = (new URLSearchParams(window.location.search).get("q") || "").toLowerCase();
  const split = typeof splitQuery === "function" ? splitQuery : (q) => q.split(/\s+/);
  const words = [query.trim(), ...split(query)]
    .map((w) => w.trim())
    .filter((w, i, all) => w.length > 0 && all.indexOf(w) === i);

  const pick = (sections, anchor) => {
    // the section the result points at; else the first holding the whole query, else the
    // first holding its first word that any section holds; else the page's first section
    const own = sections.find(([a]) => a === anchor);
    if (anchor && own) return own[1];
    for (const word of words) {
      const hit = sections.find(([, text]) => text.toLowerCase().includes(word));
      if (hit) return hit[1];
    }
    return (own || sections[0] || [, ""])[1];
  };

  const marked = (text) => {
    // text nodes and <span class="highlighted"> around every word of the query
    const p = document.createElement("p");
    p.className = "context atlas-snippet";
    const pattern = words
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .sort((a, b) => b.length - a.length)
      .join("|");
    let last = 0;
    if (pattern) {
      for (const found of text.matchAll(new RegExp(pattern, "giu"))) {
        p.append(text.slice(last, found.index));
        const span = document.createElement("span");
        span.className = "highlighted";
        span.textContent = found[0];
        p.append(span);
        last = found.index + found[0].length;
      }
    }
    p.append(text.slice(last));
    return p;
  };

  const addSnippet = (item) => {
    const index = Search._index;
    const link = item.querySelector("a");
    if (!index || !index.atlas_text || !link || item.querySelector("p.context")) return;
    const href = link.getAttribute("href") || "";
    const hash = href.indexOf("#");
    const anchor = hash > -1 ? href.slice(hash) : "";
    const page = (hash > -1 ? href.slice(0, hash) : href).split("?")[0];
    const suffix = DOCUMENTATION_OPTIONS.LINK_SUFFIX || "";
    const docname = suffix && page.endsWith(suffix) ? page.slice(0, -suffix.length) : page;
    const at = index.docnames.indexOf(docname);
    if (at < 0) return;
    const text = pick(index.atlas_text[at] || [], anchor);
    if (text) item.append(marked(text));
  };

  new MutationObserver((changes) => {
    for (const change of changes)
      for (const node of change.addedNodes)
        if (node.nodeType === 1 && node.tagName === "LI") addSnippet(node);
  }).observe(results, { childList: true, subtree: true });
})();
