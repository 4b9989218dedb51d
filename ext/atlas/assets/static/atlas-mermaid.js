// Renders the book's mermaid diagrams with the classic mermaid build (window.mermaid), which
// works when the book is opened from disk (file://), where ES-module imports are refused.
// Diagrams follow furo's light/dark theme and are re-drawn when the reader switches it, and
// their labels never shrink below 12 px (see legible).
(function () {
  "use strict";
  function isDark() {
    var theme = document.body.dataset.theme || "auto";
    if (theme === "dark") return true;
    if (theme === "light") return false;
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  function render() {
    if (!window.mermaid) return;
    var nodes = Array.prototype.slice.call(document.querySelectorAll("pre.mermaid"));
    nodes.forEach(function (node) {
      if (node.dataset.atlasSource === undefined) node.dataset.atlasSource = node.textContent;
      else node.textContent = node.dataset.atlasSource;
      node.removeAttribute("data-processed");
    });
    window.mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: isDark() ? "dark" : "default",
    });
    window.mermaid.run({ nodes: nodes }).then(function () {
      nodes.forEach(legible);
    });
  }
  // A wide diagram fitted to the column shrinks its text (the agent loop's was about 9 px).
  // Mermaid writes its labels at 16 px; never show them below 12 px: such a diagram keeps the
  // width that gives 12 px and scrolls sideways in its box instead.
  var LABEL_PX = 16;
  var MIN_LABEL_PX = 12;
  function legible(node) {
    var svg = node.querySelector("svg");
    if (!svg || !svg.viewBox || !svg.viewBox.baseVal || !svg.viewBox.baseVal.width) return;
    var natural = svg.viewBox.baseVal.width;
    var shown = svg.getBoundingClientRect().width;
    if (shown <= 0 || (shown / natural) * LABEL_PX >= MIN_LABEL_PX) return;
    var width = Math.ceil((natural * MIN_LABEL_PX) / LABEL_PX);
    svg.style.maxWidth = "none";
    svg.style.width = width + "px";
    svg.setAttribute("width", String(width));
    node.style.overflowX = "auto";
    node.classList.add("atlas-diagram-scrolls");
  }
  document.addEventListener("DOMContentLoaded", function () {
    render();
    new MutationObserver(render).observe(document.body, {
      attributes: true,
      attributeFilter: ["data-theme"],
    });
  });
})();
