// The problem bank's filter (atlas.teach.bank): the page embeds every problem's chapter, topic,
// difficulty and tags as JSON (#atlas-bank-data), so that the filter works from file:// too,
// where a browser refuses to fetch a JSON file beside the page. Choosing a value hides the
// problems (li#bank-LABEL) that do not match, and the chapters left with none; the topics of
// other chapters are greyed out once a chapter is chosen.
(() => {
  function start() {
    const form = document.getElementById("atlas-bank-filter");
    const data = document.getElementById("atlas-bank-data");
    if (!form || !data) return;
    const problems = JSON.parse(data.textContent);
    const field = (name) => form.elements.namedItem(name);
    const shown = form.querySelector(".atlas-bank-shown");
    const matches = (p, skip) =>
      ["chapter", "topic", "difficulty"].every(
        (key) => key === skip || !field(key).value || p[key] === field(key).value,
      ) && (!field("interview").checked || p.tags.includes("interview"));

    function apply() {
      let count = 0;
      for (const p of problems) {
        const ok = matches(p, null);
        const item = document.getElementById(p.id);
        if (item) item.hidden = !ok;
        if (ok) count += 1;
      }
      for (const group of document.querySelectorAll(".atlas-bank-chapter")) {
        group.hidden = !group.querySelector("li:not([hidden])");
      }
      for (const option of field("topic").options) {
        option.disabled = option.value !== "" &&
          !problems.some((p) => p.topic === option.value && matches(p, "topic"));
      }
      shown.textContent = shown.dataset.template
        .replace("{shown}", String(count))
        .replace("{total}", String(problems.length));
    }

    form.addEventListener("change", apply);
    form.addEventListener("submit", (event) => event.preventDefault());
    form.hidden = false;
    apply();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
