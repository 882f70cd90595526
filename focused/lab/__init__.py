"""What measures the crawler from outside: offline webs (bundles, synthetic and hostile webs,
their server), the evaluation against labels, and the demo."""
