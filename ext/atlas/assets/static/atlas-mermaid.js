// Renders the book's mermaid diagrams with the classic mermaid build (window.mermaid), which
// works when the book is opened from disk (file://), where ES-module imports are refused.
// Diagrams follow furo's light/dark theme and are re-drawn when the reader switches it.
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
    window.mermaid.run({ nodes: nodes });
  }
  document.addEventListener("DOMContentLoaded", function () {
    render();
    new MutationObserver(render).observe(document.body, {
      attributes: true,
      attributeFilter: ["data-theme"],
    });
  });
})();
