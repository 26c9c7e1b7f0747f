"""Reading web pages for the ``fetch_url`` tool: address checks, the bounded fetch, HTML to Markdown."""
