from annotation.search.index import index_vacuum
from annotation.services.search_index import search_index_rebuild
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Rebuild the corpus search index from the live chunks (the corpus import keeps it up to date)."

    def run(self, **o):
        chunks = search_index_rebuild()
        index_vacuum()
        return {"chunks": chunks}, 0

    def text(self, p):
        return f"{p['chunks']} live chunks indexed"
