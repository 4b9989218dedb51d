"""Another taught module, which no page's lab imports through kernel."""

TRIPLE = 3
