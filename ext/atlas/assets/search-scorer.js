// The book's search scorer (Sphinx's html_search_scorer, set by atlas.assets): Sphinx's own
// weights, and one boost Sphinx lacks. Sphinx matches a title only when it holds the query as
// typed, so "paged attention" never matched "PagedAttention and the block manager" and pages
// that merely use the words ranked above it. Here a result whose title, squashed (lower case,
// letters and digits only, any script), holds the squashed query ranks first, a page's own
// title before one of its sections; a title holding every word of the query comes next.
var Scorer = {
  score: (result) => {
    const [, title, anchor, , score] = result;
    const squash = (text) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
    const query = new URLSearchParams(window.location.search).get("q") || "";
    const wanted = squash(query);
    if (!wanted || !title) return score;
    const shown = squash(title);
    if (shown.includes(wanted)) return score + (anchor ? 40 : 50);
    const words = query.split(/\s+/).map(squash).filter((word) => word.length > 1);
    if (words.length > 1 && words.every((word) => shown.includes(word))) return score + 20;
    return score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
