"""The annotation app's pages (HTML), a module per sub-domain. Thin: parse, call a selector or service, render."""
