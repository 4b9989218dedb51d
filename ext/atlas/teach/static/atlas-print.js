// Printing a page opens every collapsed solution (a sphinx-design dropdown is a <details>) and
// closes again, after printing, the ones the reader had not opened. atlas-teach.css does the same
// for browsers that print without these events, through ::details-content.
window.addEventListener("beforeprint", () => {
  for (const details of document.querySelectorAll("details:not([open])")) {
    details.dataset.atlasPrintOpened = "1";
    details.open = true;
  }
});
window.addEventListener("afterprint", () => {
  for (const details of document.querySelectorAll("details[data-atlas-print-opened]")) {
    details.open = false;
    delete details.dataset.atlasPrintOpened;
  }
});
