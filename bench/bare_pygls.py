"""The import-time floor of the LSP framework: a bare pygls server on stdio, nothing registered."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare-pygls", "0").start_io()
